"""``heron list``: the topologies of a cluster."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from heron_core.client._config import cluster_state
from heron_core.proto import topology_pb2

__all__ = ["TopologyInfo", "list_topologies"]


@dataclass(frozen=True)
class TopologyInfo:
    """One topology of a cluster.

    Attributes:
        name: its name.
        topology_id: its id.
        submitted: when it was submitted (UTC), or None when its execution state is missing.
        state: ``"running"`` while its scheduler's or its topology manager's location is
            live (a topology of ``heron run`` has no scheduler service), ``"paused"`` when
            its spouts are deactivated as well (see ``heron deactivate``), else
            ``"not running"``.
    """

    name: str
    topology_id: str
    submitted: datetime | None
    state: str


def list_topologies(
    cluster: str,
    config_path: str | os.PathLike[str] | None = None,
    *,
    heron_home: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
) -> list[TopologyInfo]:
    """The topologies stored for ``cluster``, sorted by name (``overrides``: ``key=value``
    config overrides, e.g. the state manager's connection string).

    Raises:
        ConfigurationError, StateManagerError: the cluster's config or state is unusable.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     list_topologies("local", heron_home=home)
    []
    """
    infos = []
    with cluster_state(cluster, config_path, heron_home=heron_home, overrides=overrides) as (
        _,
        state,
    ):
        for name in state.list_topologies():
            topology = state.get_topology(name)
            if topology is None:  # killed meanwhile
                continue
            execution = state.get_execution_state(name)
            submitted = (
                datetime.fromtimestamp(execution.submission_time, UTC) if execution else None
            )
            live = state.get_scheduler_location(name) or state.get_tmanager_location(name)
            if live is None:
                status = "not running"
            elif topology.state == topology_pb2.PAUSED:
                status = "paused"
            else:
                status = "running"
            infos.append(TopologyInfo(name, topology.id, submitted, status))
    return infos
