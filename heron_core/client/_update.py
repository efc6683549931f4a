"""``heron update <cluster> <name> --component-parallelism=COMP:N ... [--container-number N]
[--dry-run]``: change a running topology's parallelism.

The packing plug-in repacks the topology (`Packing.repack`); the topology's scheduler stores
the new plans and restarts the containers with them, stopping removed containers and
starting new ones (`Scheduler.on_update`). Every instance starts from the new physical plan,
so a fields grouping sends each key to one task again. As Storm's rebalance, the spouts are
first deactivated for ``--wait-secs`` (default: the topology's message timeout) so that the
tuples in flight complete, and activated again once the new plan runs.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from heron_core.client._config import (
    Progress,
    cluster_state,
    quiet,
    stored_topology,
    topology_dir,
)
from heron_core.client._control import request_topology_state
from heron_core.client._service import ask_scheduler_service
from heron_core.config import config_from_proto
from heron_core.config.codec import config_to_proto
from heron_core.errors import ConfigurationError, PackingError, SchedulerError
from heron_core.packing import create_packing
from heron_core.proto import packing_plan_pb2, physical_plan_pb2, tmanager_pb2, topology_pb2
from heron_core.scheduler import UpdateRequest
from heron_core.statemgr import StateManager

__all__ = [
    "UPDATE_TIMEOUT_S",
    "UpdatePlan",
    "parse_parallelism",
    "plan_update",
    "update",
    "update_topology",
]

UPDATE_TIMEOUT_S = 240.0
"""How long ``heron update`` waits for the topology to run with the new plan (the drain wait
comes on top)."""

_POLL_S = 0.1


def parse_parallelism(items: Sequence[str]) -> dict[str, int]:
    """``COMP:N`` arguments of ``--component-parallelism`` as a dict.

    >>> parse_parallelism(["count:3", "split:2"])
    {'count': 3, 'split': 2}
    >>> parse_parallelism(["count=3"])
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: --component-parallelism 'count=3': expected COMPONENT:N
    """
    wanted: dict[str, int] = {}
    for item in items:
        component, sep, number = item.rpartition(":")
        try:
            count = int(number)
        except ValueError:
            count = None
        if not sep or not component or count is None:
            raise ConfigurationError(f"--component-parallelism {item!r}: expected COMPONENT:N")
        if component in wanted:
            raise ConfigurationError(f"--component-parallelism names {component!r} twice")
        wanted[component] = count
    return wanted


@dataclass(frozen=True)
class UpdatePlan:
    """What an update changes.

    Attributes:
        topology: the logical plan with the new parallelisms (and container count).
        packing_plan: the new packing plan.
        current: the packing plan the topology runs with.
        changes: component -> (parallelism now, parallelism after), for changed components.
    """

    topology: topology_pb2.Topology
    packing_plan: packing_plan_pb2.PackingPlan
    current: packing_plan_pb2.PackingPlan
    changes: Mapping[str, tuple[int, int]]

    def describe(self) -> list[str]:
        """The change and the new packing plan, as lines for the user."""
        lines = [f"{c}: parallelism {a} -> {b}" for c, (a, b) in sorted(self.changes.items())]
        before, after = len(self.current.containers), len(self.packing_plan.containers)
        lines.append(f"containers: {before} -> {after}")
        lines.append("new packing plan (container: component task ids):")
        for container in self.packing_plan.containers:
            tasks: dict[str, list[int]] = {}
            for instance in container.instances:
                tasks.setdefault(instance.component_name, []).append(instance.task_id)
            placed = "; ".join(f"{c} {sorted(t)}" for c, t in sorted(tasks.items()))
            lines.append(f"  {container.id}: {placed}")
        return lines


def _components(topology: topology_pb2.Topology) -> dict[str, topology_pb2.Component]:
    found = {spout.comp.name: spout.comp for spout in topology.spouts}
    found.update({bolt.comp.name: bolt.comp for bolt in topology.bolts})
    return found


def plan_update(
    state: StateManager,
    cluster: str,
    name: str,
    parallelism: Mapping[str, int],
    containers: int | None = None,
) -> UpdatePlan:
    """The new plans of topology ``name`` with ``parallelism`` (component -> instances) and,
    if given, ``containers`` stream-manager containers, repacked by the topology's packing
    algorithm (`Packing.repack`). Changes nothing.

    Raises:
        SchedulerError: no topology ``name`` (the message lists the ones there).
        ConfigurationError: an unknown component (the message lists them), a parallelism or
            container number below 1, nothing to change, or an EFFECTIVELY_ONCE topology
            (its per-task checkpoints cannot follow a new parallelism).
        PackingError: the new plan does not fit, or the algorithm chose another number of
            containers than ``containers``.
    """
    topology = stored_topology(state, cluster, name)
    current = state.get_packing_plan(name)
    if current is None:
        raise SchedulerError(f"topology {name!r} on cluster {cluster!r} has no packing plan")
    where = f"topology {name!r}"
    if config_from_proto(topology.topology_config).get("topology.reliability.mode") == (
        "EFFECTIVELY_ONCE"
    ):
        raise ConfigurationError(
            f"{where} runs EFFECTIVELY_ONCE: its checkpoints hold one state per task, which "
            "another parallelism cannot take over; kill it and submit it again with the new "
            "parallelism (it starts from empty state)"
        )
    known = _components(topology)
    if not parallelism and containers is None:
        raise ConfigurationError(
            f"{where}: nothing to update; give --component-parallelism COMP:N or "
            "--container-number N"
        )
    for component, count in parallelism.items():
        if component not in known:
            raise ConfigurationError(
                f"{where} has no component {component!r}; its components: "
                f"{', '.join(sorted(known))}"
            )
        if count < 1:
            raise ConfigurationError(
                f"{where}, component {component!r}: parallelism must be at least 1, got {count}"
            )
    if containers is not None and containers < 1:
        raise ConfigurationError(
            f"{where}: --container-number must be at least 1, got {containers}"
        )
    changes = {
        c: (known[c].parallelism, n) for c, n in parallelism.items() if known[c].parallelism != n
    }
    new = topology_pb2.Topology()
    new.CopyFrom(topology)
    for comp_name, comp in _components(new).items():
        if comp_name in changes:
            comp.parallelism = changes[comp_name][1]
    config = config_from_proto(topology.topology_config)
    if containers is not None:
        config["topology.stmgrs"] = containers
        new.topology_config.CopyFrom(config_to_proto(config))
    if not changes and (containers is None or containers == len(current.containers)):
        raise ConfigurationError(
            f"{where}: nothing to update; it runs with these parallelisms and "
            f"{len(current.containers)} containers already"
        )
    packing = create_packing(config["heron.class.packing.algorithm"]).repack(new, config, current)
    if containers is not None and len(packing.containers) != containers:
        raise PackingError(
            f"{where}: the {config['heron.class.packing.algorithm']} packing algorithm packed "
            f"the update into {len(packing.containers)} containers, not the {containers} of "
            "--container-number (it chooses the number itself)"
        )
    return UpdatePlan(new, packing, current, changes)


def _runs(pplan: physical_plan_pb2.PhysicalPlan | None, plan: packing_plan_pb2.PackingPlan) -> bool:
    """Whether ``pplan`` is the physical plan of ``plan``: the same containers, and as many
    instances of each component."""
    if pplan is None:
        return False
    if {s.container_id for s in pplan.stmgrs} != {c.id for c in plan.containers}:
        return False
    wanted = Counter(i.component_name for c in plan.containers for i in c.instances)
    return Counter(i.info.component_name for i in pplan.instances) == wanted


def update_topology(
    state: StateManager,
    name: str,
    plan: UpdatePlan,
    apply: Callable[[], str],
    *,
    wait_secs: float,
    progress: Progress = quiet,
    timeout: float = UPDATE_TIMEOUT_S,
) -> None:
    """Carry ``plan`` out on topology ``name``: deactivate it and wait ``wait_secs`` (when it
    runs and ``wait_secs`` > 0), ``apply`` the plan (its scheduler stores it and restarts the
    containers; returns what it did), wait until the new physical plan runs, and activate it
    again if it ran before. When ``apply`` fails, a deactivated topology is activated again.

    Raises:
        SchedulerError: as ``apply``, or the new plan did not run within ``timeout`` seconds.
    """
    stored = state.get_topology(name)
    running = stored is not None and stored.state != topology_pb2.PAUSED
    tmanager = state.get_tmanager_location(name)
    paused = False
    if running and wait_secs > 0:
        paused = request_topology_state(state, name, topology_pb2.PAUSED)
        progress(f"deactivated {name!r}; waiting {wait_secs:g} s for the tuples in flight")
        time.sleep(wait_secs)
    try:
        progress(apply())
    except BaseException:
        if paused:
            request_topology_state(state, name, topology_pb2.RUNNING)
        raise
    progress("waiting until the new physical plan runs")
    deadline = time.monotonic() + timeout
    while not _runs(state.get_physical_plan(name), plan.packing_plan) or _same(
        state.get_tmanager_location(name), tmanager
    ):
        if time.monotonic() > deadline:
            raise SchedulerError(
                f"topology {name!r} was updated but its new physical plan did not run within "
                f"{timeout:.0f} s; see its logs"
            )
        time.sleep(_POLL_S)
    if paused:
        request_topology_state(state, name, topology_pb2.RUNNING)
        progress(f"activated {name!r} again")


def _same(
    now: tmanager_pb2.TManagerLocation | None, before: tmanager_pb2.TManagerLocation | None
) -> bool:
    """Whether the topology manager is still the one from before the update (or gone)."""
    return now is None or now == before


def update(
    cluster: str,
    name: str,
    parallelism: Mapping[str, int],
    containers: int | None = None,
    config_path: str | os.PathLike[str] | None = None,
    *,
    dry_run: bool = False,
    wait_secs: float | None = None,
    heron_home: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
    progress: Progress = quiet,
    timeout: float = UPDATE_TIMEOUT_S,
) -> UpdatePlan:
    """Change the parallelism of topology ``name`` on ``cluster`` (see the module's doc);
    returns the plan once the topology runs with it, or at once with ``dry_run`` (nothing
    changed). ``wait_secs`` None: the topology's ``topology.message.timeout.secs``.

    Raises:
        SchedulerError: as `plan_update`, no scheduler service (a topology of ``heron
            run``), the scheduler refused (its message), or the new plan did not run in time.
        ConfigurationError, PackingError: as `plan_update`.
        StateManagerError: the cluster's state is unusable.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     update("local", "wc", {"count": 3}, heron_home=home)
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
        plan = plan_update(state, cluster, name, parallelism, containers)
        if dry_run:
            return plan
        location = state.get_scheduler_location(name)
        if location is None or not location.pid:
            raise SchedulerError(
                f"topology {name!r} on cluster {cluster!r} has no scheduler service to update "
                "it (a topology of 'heron run' is changed by running it again)"
            )
        root = topology_dir(state, config, cluster, name)
        if wait_secs is None:
            wait_secs = float(
                config_from_proto(plan.topology.topology_config)["topology.message.timeout.secs"]
            )

        def apply() -> str:
            deadline = time.monotonic() + timeout
            request = UpdateRequest(plan.topology, plan.packing_plan)
            answer = ask_scheduler_service(
                state, cluster, name, root, request, progress, "update", deadline
            )
            if not answer.ok:
                raise SchedulerError(f"cannot update {name!r}: {answer.message}")
            return answer.message

        update_topology(
            state, name, plan, apply, wait_secs=wait_secs, progress=progress, timeout=timeout
        )
    return plan
