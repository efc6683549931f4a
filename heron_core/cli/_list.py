"""``heron list <cluster>``."""

from __future__ import annotations

import click

from heron_core.cli._options import config_path_option, config_property_option, heron_home_option
from heron_core.client import list_topologies

__all__ = ["list_command"]


@click.command("list")
@click.argument("cluster")
@config_property_option
@config_path_option
@heron_home_option
def list_command(
    cluster: str, overrides: tuple[str, ...], config_path: str | None, heron_home: str | None
) -> None:
    """List the topologies of CLUSTER: name, id, submission time (UTC) and state."""
    infos = list_topologies(cluster, config_path, heron_home=heron_home, overrides=overrides)
    if not infos:
        click.echo(f"no topologies on cluster {cluster!r}")
        return
    rows = [("NAME", "ID", "SUBMITTED", "STATE")]
    for info in infos:
        submitted = info.submitted.strftime("%Y-%m-%d %H:%M:%S") if info.submitted else "-"
        rows.append((info.name, info.topology_id, submitted, info.state))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        click.echo(
            "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[3]])
        )
