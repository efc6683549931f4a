"""``heron update <cluster> <name> --component-parallelism=COMP:N ... [--container-number N]
[--dry-run]``."""

from __future__ import annotations

import click

from heron_core.cli._options import (
    config_path_option,
    config_property_option,
    heron_home_option,
    progress,
)
from heron_core.client import parse_parallelism, update

__all__ = ["update_command"]


@click.command("update")
@click.argument("cluster")
@click.argument("name")
@click.option(
    "--component-parallelism",
    "parallelism",
    multiple=True,
    metavar="COMP:N",
    help="Run N instances of component COMP (N >= 1). Repeat for several components.",
)
@click.option(
    "--container-number",
    type=int,
    default=None,
    help="Pack the topology into this many stream-manager containers (packing algorithms "
    "that choose the number themselves refuse it). Default: as the packing algorithm decides "
    "from topology.stmgrs.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the new packing plan and change nothing.",
)
@click.option(
    "--wait-secs",
    type=click.FloatRange(min=0),
    default=None,
    help="How long the spouts stay deactivated before the containers restart, so that the "
    "tuples in flight complete (Storm's rebalance wait). Default: the topology's "
    "topology.message.timeout.secs; 0 restarts at once.",
)
@config_property_option
@config_path_option
@heron_home_option
def update_command(
    cluster: str,
    name: str,
    parallelism: tuple[str, ...],
    container_number: int | None,
    dry_run: bool,
    wait_secs: float | None,
    overrides: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Change the parallelism of topology NAME on CLUSTER while it runs. The packing
    algorithm repacks it; its scheduler service stores the new plans, stops removed
    containers, starts new ones and restarts the others, so every instance routes with the
    new physical plan (a fields grouping keeps each key on one task). The spouts are
    deactivated first for --wait-secs and activated again once the new plan runs. Returns
    once the topology runs with the new plan. Run it on the machine that submitted the
    topology."""
    plan = update(
        cluster,
        name,
        parse_parallelism(parallelism),
        container_number,
        config_path,
        dry_run=dry_run,
        wait_secs=wait_secs,
        heron_home=heron_home,
        overrides=overrides,
        progress=progress,
    )
    for line in plan.describe():
        click.echo(line)
    if dry_run:
        click.echo(f"dry run: topology {name!r} on {cluster!r} is unchanged")
    else:
        click.echo(f"updated topology {name!r} on {cluster!r}")
