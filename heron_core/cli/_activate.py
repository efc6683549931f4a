"""``heron activate <cluster> <name>`` and ``heron deactivate <cluster> <name>``: one command
shape, built for each verb by `_state_command`."""

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

__all__ = ["activate_command", "deactivate_command"]


def _state_command(
    verb: str, state: topology_pb2.TopologyState.ValueType, already: str, doc: str
) -> click.Command:
    @click.command(verb, help=doc)
    @click.argument("cluster")
    @click.argument("name")
    @config_property_option
    @config_path_option
    @heron_home_option
    def command(
        cluster: str,
        name: str,
        overrides: tuple[str, ...],
        config_path: str | None,
        heron_home: str | None,
    ) -> None:
        changed = set_topology_state(
            cluster,
            name,
            state,
            config_path,
            heron_home=heron_home,
            overrides=overrides,
            progress=progress,
        )
        if changed:
            click.echo(f"{verb}d topology {name!r} on {cluster!r}")
        else:
            click.echo(f"topology {name!r} on {cluster!r} was {already} already")

    return command


activate_command = _state_command(
    "activate",
    topology_pb2.RUNNING,
    "active",
    "Activate topology NAME on CLUSTER: its spouts get activate() and next_tuple calls "
    "again. Returns once the topology manager has stored and broadcast the change; says so "
    "when the topology was active already.",
)
deactivate_command = _state_command(
    "deactivate",
    topology_pb2.PAUSED,
    "deactivated",
    "Deactivate topology NAME on CLUSTER: its spouts get deactivate() and no more "
    "next_tuple calls until 'heron activate'; tuples already emitted finish (acks and fails "
    "still arrive). Returns once the topology manager has stored and broadcast the change; "
    "says so when the topology was deactivated already.",
)
