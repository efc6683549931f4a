"""``heron sparse kill``."""

from __future__ import annotations

import click

from heron_core.client import kill
from storm_compat.streamparse.cli._options import (
    config_option,
    environment_option,
    heron_options,
    load_environment,
    load_project,
    progress,
)

__all__ = ["kill_command"]


@click.command("kill")
@click.option(
    "-n", "--name", default=None, help="The topology's name (default: the only topology file's)."
)
@environment_option
@config_option
@heron_options
def kill_command(
    name: str | None,
    env: str | None,
    config: str,
    heron_home: str | None,
    config_path: str | None,
) -> None:
    """Kill the topology on the environment's cluster: stop its processes, delete its state
    and working directory (the cluster's settings come from the environment's "options", as
    for submit)."""
    project = load_project(config)
    target = load_environment(project, env, config_path)
    topology = name if name is not None else project.topology_file()[0]
    with target.naming(topology):
        kill(
            target.cluster,
            topology,
            config_path,
            heron_home=heron_home,
            overrides=target.properties,
            progress=progress,
        )
    click.echo(f"killed topology {topology!r} on {target.cluster!r}")
