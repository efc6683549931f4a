"""``heron restart <cluster> <name> [--container-id N]``: restart one container of a submitted
topology, or all of them, through its scheduler service."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from heron_core.client._config import (
    Progress,
    cluster_state,
    quiet,
    stored_topology,
    topology_dir,
)
from heron_core.client._service import ask_scheduler_service
from heron_core.errors import SchedulerError
from heron_core.proto import tmanager_pb2
from heron_core.scheduler import RestartRequest
from heron_core.statemgr import StateManager

__all__ = ["RESTART_TIMEOUT_S", "restart"]

RESTART_TIMEOUT_S = 180.0
"""How long ``heron restart`` waits for the restarted containers to run again."""

_POLL_S = 0.1


def _stmgr_pids(state: StateManager, name: str) -> dict[int, int]:
    plan = state.get_physical_plan(name)
    return {} if plan is None else {s.container_id: s.pid for s in plan.stmgrs}


def _came_back(
    state: StateManager,
    name: str,
    targets: Sequence[int],
    pids: dict[int, int],
    tmanager: tmanager_pb2.TManagerLocation | None,
) -> bool:
    """Whether every container of ``targets`` runs again: a physical plan exists whose
    stream manager of each restarted container has a new pid, and, for container 0, a new
    topology manager has registered."""
    now = _stmgr_pids(state, name)
    if not now:
        return False
    if 0 in targets:
        location = state.get_tmanager_location(name)
        if location is None or location == tmanager:
            return False
    return all(now.get(k, pids.get(k)) != pids.get(k) for k in targets if k != 0)


def restart(
    cluster: str,
    name: str,
    container: int = -1,
    config_path: str | os.PathLike[str] | None = None,
    *,
    heron_home: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
    progress: Progress = quiet,
    timeout: float = RESTART_TIMEOUT_S,
) -> list[int]:
    """Restart ``container`` of topology ``name`` on ``cluster`` (-1: every container, the
    topology manager's container 0 included); returns the restarted containers once each
    runs again (a new stream manager in the physical plan, a new topology manager for 0).

    Its scheduler service does it (see ``heron_core.scheduler._requests``): the local
    scheduler restarts the container's executor, the Spark scheduler cancels the container's
    job and submits it again. With acking on, tuples lost with the old processes time out
    and are replayed.

    Raises:
        SchedulerError: no topology ``name``, no such container (the message lists them), no
            scheduler service (a topology of ``heron run``), the scheduler refused, or the
            containers did not run again within ``timeout`` seconds.
        ConfigurationError, StateManagerError: the cluster's config or state is unusable.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     restart("local", "wc", heron_home=home)
    Traceback (most recent call last):
    ...
    heron_core.errors.SchedulerError: no topology 'wc' on cluster 'local'; topologies there: none
    """
    with cluster_state(
        cluster, config_path, heron_home=heron_home, overrides=overrides, topology=name
    ) as (
        config,
        state,
    ):
        stored_topology(state, cluster, name)
        packing = state.get_packing_plan(name)
        containers = [0, *sorted(c.id for c in packing.containers)] if packing else [0]
        if container != -1 and container not in containers:
            known = ", ".join(map(str, containers))
            raise SchedulerError(
                f"topology {name!r} has no container {container}; its containers are {known} "
                "(0 runs the topology manager); leave --container-id out to restart them all"
            )
        root = topology_dir(state, config, cluster, name)
        targets = containers if container == -1 else [container]
        pids = _stmgr_pids(state, name)
        tmanager = state.get_tmanager_location(name)
        which = "every container" if container == -1 else f"container {container}"
        deadline = time.monotonic() + timeout
        answer = ask_scheduler_service(
            state, cluster, name, root, RestartRequest(container), progress, "restart", deadline
        )
        if not answer.ok:
            raise SchedulerError(f"cannot restart {which} of {name!r}: {answer.message}")
        progress(f"{answer.message}; waiting until it runs again")
        while not _came_back(state, name, targets, pids, tmanager):
            if time.monotonic() > deadline:
                raise SchedulerError(
                    f"{which} of {name!r} was restarted but did not run again within "
                    f"{timeout:.0f} s (see the logs in {root / 'logs'})"
                )
            time.sleep(_POLL_S)
    return targets
