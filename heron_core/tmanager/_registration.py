"""Stream-manager registration and physical-plan assembly: pure logic, no sockets, no clock.

The daemon feeds this module what arrives on its server port, together with the current time
read from its clock, and acts on what comes back (persist and broadcast a plan, answer a
heartbeat, log a silent stream manager).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from heron_core.errors import PackingError
from heron_core.proto import common_pb2, packing_plan_pb2, physical_plan_pb2, topology_pb2

STMGR_PREFIX = "stmgr-"


def stmgr_id(container_id: int) -> str:
    """The id of the stream manager of ``container_id``.

    >>> stmgr_id(3)
    'stmgr-3'
    """
    return f"{STMGR_PREFIX}{container_id}"


def instance_id(container_id: int, component_name: str, task_id: int) -> str:
    """The id of one instance: ``container_<K>_<component>_<task>``.

    >>> instance_id(1, "word", 4)
    'container_1_word_4'
    """
    return f"container_{container_id}_{component_name}_{task_id}"


def expected_stmgrs(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> dict[str, int]:
    """Map the id of every stream manager the packing plan calls for to its container id.

    Raises:
        PackingError: the plan has no container, a container id below 1 or listed twice, or
            an instance of a component the topology does not have.
    """
    where = f"topology {topology.name!r}, packing plan {packing_plan.id!r}"
    if not packing_plan.containers:
        raise PackingError(f"{where}: expected at least one container, found none")
    components = {c.comp.name for c in topology.spouts} | {c.comp.name for c in topology.bolts}
    expected: dict[str, int] = {}
    for container in packing_plan.containers:
        if container.id < 1 or stmgr_id(container.id) in expected:
            raise PackingError(
                f"{where}: expected unique container ids >= 1, found {container.id} "
                f"(ids: {[c.id for c in packing_plan.containers]})"
            )
        for instance in container.instances:
            if instance.component_name not in components:
                raise PackingError(
                    f"{where}: container {container.id} holds task {instance.task_id} of "
                    f"component {instance.component_name!r}, which is not in the topology "
                    f"(components: {sorted(components)})"
                )
        expected[stmgr_id(container.id)] = container.id
    return expected


@dataclass(frozen=True)
class Waiting:
    """The physical plan cannot be built yet: these stream managers have not registered.

    >>> str(Waiting(("stmgr-1", "stmgr-2")))
    'still waiting for: [stmgr-1, stmgr-2]'
    """

    missing: tuple[str, ...]

    def __str__(self) -> str:
        return f"still waiting for: [{', '.join(self.missing)}]"


def assemble_physical_plan(
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
    stmgrs: Mapping[str, physical_plan_pb2.StMgr],
) -> physical_plan_pb2.PhysicalPlan | Waiting:
    """Stitch the physical plan together, or say which stream managers are still missing.

    Placement is the packing plan's: the tmanager only adds where each container's stream
    manager runs. Records in ``stmgrs`` for containers the plan does not list are ignored.

    Args:
        topology: the logical plan, embedded (copied) in the result.
        packing_plan: which task runs in which container.
        stmgrs: the registered stream managers by id (``"stmgr-<K>"``).

    Returns:
        ``Waiting`` naming the missing ids in container order, or a new ``PhysicalPlan``:
        stmgrs sorted by container id (``container_id`` set from the id), instances sorted by
        task id with ids ``container_<K>_<component>_<task>``. Inputs are not modified.

    Raises:
        PackingError: as `expected_stmgrs`.

    >>> from heron_core.proto import packing_plan_pb2 as pp, topology_pb2 as tp
    >>> topo = tp.Topology(name="t", spouts=[tp.Spout(comp=tp.Component(name="s"))])
    >>> plan = pp.PackingPlan(containers=[pp.ContainerPlan(
    ...     id=1, instances=[pp.InstancePlan(component_name="s", task_id=1)])])
    >>> str(assemble_physical_plan(topo, plan, {}))
    'still waiting for: [stmgr-1]'
    >>> pplan = assemble_physical_plan(
    ...     topo, plan, {"stmgr-1": physical_plan_pb2.StMgr(id="stmgr-1", data_port=7)})
    >>> [(i.instance_id, i.stmgr_id) for i in pplan.instances]
    [('container_1_s_1', 'stmgr-1')]
    """
    expected = expected_stmgrs(topology, packing_plan)
    ordered = sorted(expected.items(), key=lambda item: item[1])
    missing = tuple(sid for sid, _ in ordered if sid not in stmgrs)
    if missing:
        return Waiting(missing)
    pplan = physical_plan_pb2.PhysicalPlan()
    pplan.topology.CopyFrom(topology)
    for sid, container_id in ordered:
        record = pplan.stmgrs.add()
        record.CopyFrom(stmgrs[sid])
        record.container_id = container_id
    instances = [
        (container.id, instance)
        for container in packing_plan.containers
        for instance in container.instances
    ]
    for container_id, instance in sorted(instances, key=lambda item: item[1].task_id):
        pplan.instances.add(
            instance_id=instance_id(container_id, instance.component_name, instance.task_id),
            stmgr_id=stmgr_id(container_id),
            info=physical_plan_pb2.InstanceInfo(
                task_id=instance.task_id,
                component_index=instance.component_index,
                component_name=instance.component_name,
            ),
        )
    return pplan


@dataclass(frozen=True)
class Registration:
    """One registered stream manager.

    Attributes:
        stmgr: its record as it registered (a private copy).
        peer: the zmq routing id it registered from; plans are sent there.
        last_heartbeat: the clock reading of its registration or latest heartbeat.
        silent: whether it has been reported silent since its latest heartbeat.
    """

    stmgr: physical_plan_pb2.StMgr
    peer: bytes
    last_heartbeat: float
    silent: bool = False


@dataclass(frozen=True)
class RegisterResult:
    """What a registration led to.

    Attributes:
        status: OK, or INVALID_STMGR for an id that is not ``stmgr-<K>`` of a planned container.
        message: a human-readable explanation (names the id and the expected ids on rejection).
        plan: the physical plan to persist and broadcast, when this registration produced one.
    """

    status: common_pb2.StatusCode.ValueType
    message: str
    plan: physical_plan_pb2.PhysicalPlan | None = None


class StMgrRegistry:
    """The stream managers of one topology, and its physical plan once all have registered.

    Every registration of a planned id is accepted and replaces any earlier record of that id
    (a restarted stream manager). Once every container's stream manager has registered, each
    registration yields a freshly assembled plan. Times are clock readings in seconds passed in
    by the caller; this class never reads a clock.

    >>> from heron_core.proto import packing_plan_pb2 as pp, topology_pb2 as tp
    >>> topo = tp.Topology(name="t", spouts=[tp.Spout(comp=tp.Component(name="s"))])
    >>> registry = StMgrRegistry(topo, pp.PackingPlan(containers=[pp.ContainerPlan(
    ...     id=1, instances=[pp.InstancePlan(component_name="s", task_id=1)])]))
    >>> str(registry.waiting)
    'still waiting for: [stmgr-1]'
    >>> result = registry.register(physical_plan_pb2.StMgr(id="stmgr-1"), b"peer", now=0.0)
    >>> [s.id for s in result.plan.stmgrs], registry.waiting
    (['stmgr-1'], None)
    """

    def __init__(
        self, topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
    ) -> None:
        """Raises PackingError as `expected_stmgrs` does."""
        self._topology = topology
        self._packing_plan = packing_plan
        self._expected = expected_stmgrs(topology, packing_plan)
        self._records: dict[str, Registration] = {}
        self._plan: physical_plan_pb2.PhysicalPlan | None = None

    @property
    def plan(self) -> physical_plan_pb2.PhysicalPlan | None:
        """The latest assembled plan, or None before every stream manager has registered."""
        return self._plan

    @property
    def topology(self) -> topology_pb2.Topology:
        """The logical plan embedded in every plan, with its current run state (a copy)."""
        topology = topology_pb2.Topology()
        topology.CopyFrom(self._topology)
        return topology

    def set_state(
        self, state: topology_pb2.TopologyState.ValueType
    ) -> physical_plan_pb2.PhysicalPlan | None:
        """Set the topology's run state (RUNNING or PAUSED) for this and every later plan.

        Returns:
            The current plan with the new state (to persist and broadcast), or None before
            every stream manager has registered (the first plan will carry the state).

        >>> from heron_core.proto import packing_plan_pb2 as pp, topology_pb2 as tp
        >>> topo = tp.Topology(name="t", spouts=[tp.Spout(comp=tp.Component(name="s"))])
        >>> registry = StMgrRegistry(topo, pp.PackingPlan(containers=[pp.ContainerPlan(
        ...     id=1, instances=[pp.InstancePlan(component_name="s", task_id=1)])]))
        >>> registry.set_state(tp.PAUSED) is None
        True
        >>> result = registry.register(physical_plan_pb2.StMgr(id="stmgr-1"), b"peer", now=0.0)
        >>> tp.TopologyState.Name(result.plan.topology.state)
        'PAUSED'
        """
        self._topology = self.topology
        self._topology.state = state
        if self._plan is not None:
            plan = physical_plan_pb2.PhysicalPlan()
            plan.CopyFrom(self._plan)
            plan.topology.state = state
            self._plan = plan
        return self._plan

    @property
    def waiting(self) -> Waiting | None:
        """The stream managers not yet registered, or None when none is missing."""
        missing = [(cid, sid) for sid, cid in self._expected.items() if sid not in self._records]
        return Waiting(tuple(sid for _, sid in sorted(missing))) if missing else None

    @property
    def registrations(self) -> Mapping[str, Registration]:
        """A copy of the current record of every registered stream manager, by id."""
        return dict(self._records)

    def register(self, stmgr: physical_plan_pb2.StMgr, peer: bytes, now: float) -> RegisterResult:
        """Record a registration from ``peer`` at clock reading ``now``."""
        if stmgr.id not in self._expected:
            return RegisterResult(
                common_pb2.INVALID_STMGR,
                f"topology {self._topology.name!r}: unknown stream manager id {stmgr.id!r}; "
                f"the packing plan expects {sorted(self._expected)}",
            )
        replaced = stmgr.id in self._records
        record = physical_plan_pb2.StMgr()
        record.CopyFrom(stmgr)
        self._records[stmgr.id] = Registration(record, peer, now)
        verb = "re-registered" if replaced else "registered"
        built = assemble_physical_plan(
            self._topology,
            self._packing_plan,
            {sid: r.stmgr for sid, r in self._records.items()},
        )
        if isinstance(built, Waiting):
            return RegisterResult(common_pb2.OK, f"{stmgr.id} {verb}; {built}")
        self._plan = built
        return RegisterResult(common_pb2.OK, f"{stmgr.id} {verb}; physical plan built", built)

    def heartbeat(self, stmgr_id: str, peer: bytes, now: float) -> Registration | None:
        """Record a heartbeat; return the registration it refreshed as it was before.

        Returns None (and records nothing) when ``stmgr_id`` is not registered from ``peer``:
        the sender must register again, since plans would not reach it.
        """
        record = self._records.get(stmgr_id)
        if record is None or record.peer != peer:
            return None
        self._records[stmgr_id] = dataclasses.replace(record, last_heartbeat=now, silent=False)
        return record

    def newly_silent(self, now: float, timeout: float) -> list[str]:
        """The ids whose last heartbeat is ``timeout`` or more before ``now``, each reported once.

        A reported stream manager is reported again only after a new heartbeat and silence.
        """
        silent = [
            sid
            for sid, r in self._records.items()
            if not r.silent and now - r.last_heartbeat >= timeout
        ]
        for sid in silent:
            self._records[sid] = dataclasses.replace(self._records[sid], silent=True)
        return sorted(silent)

    def next_silence(self, timeout: float) -> float | None:
        """The clock reading at which `newly_silent` can next report something, if ever."""
        deadlines = [r.last_heartbeat + timeout for r in self._records.values() if not r.silent]
        return min(deadlines, default=None)
