"""``heron activate`` and ``heron deactivate``: ask a running topology's manager to resume or
pause its spouts.

The topology manager owns the run state: it stores it in the topology node
(``Topology.state``, as Heron does), puts it in the physical plan and broadcasts the plan;
every instance obeys the plan's state (a paused spout gets ``deactivate()`` and no more
``next_tuple`` calls; tuples in flight finish). ``heron list`` reads the state from the
topology node.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from heron_core.client._config import Progress, cluster_state, quiet, stored_topology
from heron_core.client._tmanager import TManagerClient
from heron_core.errors import HeronError, SchedulerError
from heron_core.proto import common_pb2, tmanager_pb2, topology_pb2
from heron_core.statemgr import StateManager

__all__ = ["CONTROL_TIMEOUT_S", "request_topology_state", "set_topology_state"]

CONTROL_TIMEOUT_S = 60.0
"""How long a verb waits for the topology manager to come up and answer."""

_POLL_S = 0.05
_VERBS = {topology_pb2.RUNNING: "activate", topology_pb2.PAUSED: "deactivate"}
_ALREADY = (common_pb2.TOPOLOGY_ALREADY_ACTIVE, common_pb2.TOPOLOGY_ALREADY_DEACTIVE)


def request_topology_state(
    state: StateManager,
    name: str,
    wanted: topology_pb2.TopologyState.ValueType,
    timeout: float = CONTROL_TIMEOUT_S,
) -> bool:
    """Ask topology ``name``'s manager (found through ``state``) to activate (RUNNING) or
    deactivate (PAUSED) it; returns once the manager has stored and broadcast the change.

    Returns:
        True when the state changed, False when the topology was in ``wanted`` already.

    Raises:
        SchedulerError: ``wanted`` is neither RUNNING nor PAUSED, the topology manager did not
            come up or answer within ``timeout`` seconds, or it refused (its message).
    """
    verb = _VERBS.get(wanted)
    if verb is None:
        raise SchedulerError(f"topology {name!r}: a topology is only activated or deactivated")
    deadline = time.monotonic() + timeout
    while (location := state.get_tmanager_location(name)) is None:
        if time.monotonic() > deadline:
            raise SchedulerError(
                f"cannot {verb} topology {name!r}: its topology manager did not come up "
                f"within {timeout:.0f} s"
            )
        time.sleep(_POLL_S)
    client = TManagerClient(state, name)
    try:
        wait = max(deadline - time.monotonic(), 1.0)
        response = client.ask(tmanager_pb2.TopologyStateRequest(state=wanted), timeout=wait)
    except HeronError as exc:
        raise SchedulerError(f"cannot {verb} topology {name!r}: {exc}") from exc
    finally:
        client.close()
    if response is None:
        raise SchedulerError(
            f"cannot {verb} topology {name!r}: no answer from its topology manager at "
            f"{location.host}:{location.stats_port} within {timeout:.0f} s"
        )
    if not isinstance(response, tmanager_pb2.TopologyStateResponse):
        raise SchedulerError(f"cannot {verb} topology {name!r}: unexpected answer {response}")
    if response.status.status == common_pb2.OK:
        return True
    if response.status.status in _ALREADY:
        return False
    raise SchedulerError(
        f"cannot {verb} topology {name!r}: its topology manager said "
        f"{response.status.message or common_pb2.StatusCode.Name(response.status.status)}"
    )


def set_topology_state(
    cluster: str,
    name: str,
    wanted: topology_pb2.TopologyState.ValueType,
    config_path: str | os.PathLike[str] | None = None,
    *,
    heron_home: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
    progress: Progress = quiet,
    timeout: float = CONTROL_TIMEOUT_S,
) -> bool:
    """Activate (RUNNING) or deactivate (PAUSED) topology ``name`` on ``cluster``; see
    `request_topology_state`. ``overrides`` are ``key=value`` config overrides (e.g. the
    state manager's connection string).

    Raises:
        SchedulerError: no topology ``name`` (the message lists the ones there), or as
            `request_topology_state`.
        ConfigurationError, StateManagerError: the cluster's config or state is unusable.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     set_topology_state("local", "wc", topology_pb2.PAUSED, heron_home=home)
    Traceback (most recent call last):
    ...
    heron_core.errors.SchedulerError: no topology 'wc' on cluster 'local'; topologies there: none
    """
    with cluster_state(
        cluster, config_path, heron_home=heron_home, overrides=overrides, topology=name
    ) as (
        _,
        state,
    ):
        stored_topology(state, cluster, name)
        progress(f"asking the topology manager of {name!r} to {_VERBS.get(wanted, '?')} it")
        return request_topology_state(state, name, wanted, timeout)
