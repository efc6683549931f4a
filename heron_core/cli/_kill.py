"""``heron kill <cluster> <name>``."""

from __future__ import annotations

import click

from heron_core.cli._options import (
    config_path_option,
    config_property_option,
    heron_home_option,
    progress,
)
from heron_core.client import kill

__all__ = ["kill_command"]


@click.command("kill")
@click.argument("cluster")
@click.argument("name")
@config_property_option
@config_path_option
@heron_home_option
def kill_command(
    cluster: str,
    name: str,
    overrides: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Kill topology NAME on CLUSTER: stop all its processes, delete its state and its
    working directory."""
    kill(cluster, name, config_path, heron_home=heron_home, overrides=overrides, progress=progress)
    click.echo(f"killed topology {name!r} on {cluster!r}")
