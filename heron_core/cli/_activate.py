"""``heron activate <cluster> <name>``."""

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

__all__ = ["activate_command"]


@click.command("activate")
@click.argument("cluster")
@click.argument("name")
@config_property_option
@config_path_option
@heron_home_option
def activate_command(
    cluster: str,
    name: str,
    overrides: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Activate topology NAME on CLUSTER: its spouts get activate() and next_tuple calls
    again. Returns once the topology manager has stored and broadcast the change; says so
    when the topology was active already."""
    changed = set_topology_state(
        cluster,
        name,
        topology_pb2.RUNNING,
        config_path,
        heron_home=heron_home,
        overrides=overrides,
        progress=progress,
    )
    if changed:
        click.echo(f"activated topology {name!r} on {cluster!r}")
    else:
        click.echo(f"topology {name!r} on {cluster!r} was active already")
