"""``heron sparse list``."""

from __future__ import annotations

import click

from heron_core.client import list_topologies
from storm_compat.streamparse.cli._options import (
    config_option,
    environment_option,
    heron_options,
    load_environment,
    load_project,
)

__all__ = ["list_command"]


@click.command("list")
@environment_option
@config_option
@heron_options
def list_command(
    env: str | None, config: str, heron_home: str | None, config_path: str | None
) -> None:
    """List the topologies of the environment's cluster (its settings come from the
    environment's "options", as for submit)."""
    project = load_project(config)
    target = load_environment(project, env, config_path)
    cluster = target.cluster
    with target.naming():
        infos = list_topologies(
            cluster, config_path, heron_home=heron_home, overrides=target.properties
        )
    if not infos:
        click.echo(f"no topologies on cluster {cluster!r}")
        return
    rows = [("NAME", "ID", "SUBMITTED", "STATE")]
    for info in infos:
        submitted = info.submitted.strftime("%Y-%m-%d %H:%M:%S") if info.submitted else "-"
        rows.append((info.name, info.topology_id, submitted, info.state))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        click.echo("  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[3]]))
