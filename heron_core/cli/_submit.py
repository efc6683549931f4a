"""``heron submit <cluster> <topology>``."""

from __future__ import annotations

import click

from heron_core.cli._options import (
    config_path_option,
    config_property_option,
    heron_home_option,
    progress,
)
from heron_core.client import submit

__all__ = ["submit_command"]


@click.command("submit")
@click.argument("cluster")
@click.argument("topology")
@click.option(
    "--name",
    default=None,
    help="Name of the topology. Default: the topology's own name (a Topology subclass's "
    "class name).",
)
@config_property_option
@config_path_option
@heron_home_option
def submit_command(
    cluster: str,
    topology: str,
    name: str | None,
    overrides: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Submit TOPOLOGY to CLUSTER and return once it is running.

    TOPOLOGY is a Python file (topologies/word_count.py), optionally followed by :ATTR, or
    a package.module:ATTR. CLUSTER names a cluster config (local, localzk, spark).
    """
    result = submit(
        cluster,
        topology,
        name,
        overrides,
        config_path,
        heron_home=heron_home,
        progress=progress,
    )
    click.echo(f"submitted topology {result.name!r} (id {result.topology_id}) to {cluster!r}")
