"""``heron restart <cluster> <name> [--container-id N]``."""

from __future__ import annotations

import click

from heron_core.cli._options import (
    config_path_option,
    config_property_option,
    heron_home_option,
    progress,
)
from heron_core.client import restart

__all__ = ["restart_command"]


@click.command("restart")
@click.argument("cluster")
@click.argument("name")
@click.option(
    "--container-id",
    type=click.IntRange(min=0),
    default=None,
    help="The container to restart (0 runs the topology manager; 1..N the stream managers "
    "and instances). Default: every container.",
)
@config_property_option
@config_path_option
@heron_home_option
def restart_command(
    cluster: str,
    name: str,
    container_id: int | None,
    overrides: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Restart topology NAME on CLUSTER, or one of its containers: its scheduler service
    stops the container's processes and starts them again. Returns once every restarted
    container runs again (a new stream manager in the physical plan, a new topology manager
    for container 0). With acking on, tuples lost with the old processes are replayed. Run it
    on the machine that submitted the topology."""
    done = restart(
        cluster,
        name,
        -1 if container_id is None else container_id,
        config_path,
        heron_home=heron_home,
        overrides=overrides,
        progress=progress,
    )
    which = ", ".join(map(str, done))
    click.echo(
        f"restarted topology {name!r} on {cluster!r} (container{'s' * (len(done) > 1)} {which})"
    )
