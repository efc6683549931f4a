"""``heron deactivate <cluster> <name>``."""

from __future__ import annotations

import click

from heron_core.cli._options import (
    config_path_option,
    config_property_option,
    heron_home_option,
    progress,
)
from heron_core.client import set_topology_state
from heron_core.proto import topology_pb2

__all__ = ["deactivate_command"]


@click.command("deactivate")
@click.argument("cluster")
@click.argument("name")
@config_property_option
@config_path_option
@heron_home_option
def deactivate_command(
    cluster: str,
    name: str,
    overrides: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Deactivate topology NAME on CLUSTER: its spouts get deactivate() and no more
    next_tuple calls until 'heron activate'; tuples already emitted finish (acks and fails
    still arrive). Returns once the topology manager has stored and broadcast the change;
    says so when the topology was deactivated already."""
    changed = set_topology_state(
        cluster,
        name,
        topology_pb2.PAUSED,
        config_path,
        heron_home=heron_home,
        overrides=overrides,
        progress=progress,
    )
    if changed:
        click.echo(f"deactivated topology {name!r} on {cluster!r}")
    else:
        click.echo(f"topology {name!r} on {cluster!r} was deactivated already")
