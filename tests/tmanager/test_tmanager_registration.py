"""Registration and physical-plan assembly, without sockets or clocks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.errors import PackingError
from heron_core.proto import common_pb2, packing_plan_pb2, physical_plan_pb2, topology_pb2
from heron_core.tmanager import StMgrRegistry, Waiting, assemble_physical_plan

StMgr = physical_plan_pb2.StMgr


def test_waiting_names_missing_stmgrs_in_container_order(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> None:
    assert assemble_physical_plan(topology, packing_plan, {}) == Waiting(("stmgr-1", "stmgr-2"))
    partial = assemble_physical_plan(topology, packing_plan, {"stmgr-1": StMgr(id="stmgr-1")})
    assert str(partial) == "still waiting for: [stmgr-2]"


def test_plan_embeds_topology_and_sorts_stmgrs_and_instances(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> None:
    stmgrs = {
        "stmgr-2": StMgr(id="stmgr-2", host_name="h2", data_port=2002),
        "stmgr-1": StMgr(id="stmgr-1", host_name="h1", data_port=2001, container_id=0),
        "stmgr-9": StMgr(id="stmgr-9"),
    }
    before = {k: v.SerializeToString() for k, v in stmgrs.items()}
    plan_bytes = packing_plan.SerializeToString()

    pplan = assemble_physical_plan(topology, packing_plan, stmgrs)

    assert isinstance(pplan, physical_plan_pb2.PhysicalPlan)
    assert pplan.topology == topology
    assert [(s.id, s.container_id, s.data_port) for s in pplan.stmgrs] == [
        ("stmgr-1", 1, 2001),
        ("stmgr-2", 2, 2002),
    ]
    assert [(i.instance_id, i.stmgr_id) for i in pplan.instances] == [
        ("container_1_word_1", "stmgr-1"),
        ("container_2_word_2", "stmgr-2"),
        ("container_1_count_3", "stmgr-1"),
        ("container_2_count_4", "stmgr-2"),
    ]
    assert [
        (i.info.task_id, i.info.component_index, i.info.component_name) for i in pplan.instances
    ] == [
        (1, 0, "word"),
        (2, 1, "word"),
        (3, 0, "count"),
        (4, 1, "count"),
    ]
    assert {k: v.SerializeToString() for k, v in stmgrs.items()} == before
    assert packing_plan.SerializeToString() == plan_bytes


@pytest.mark.parametrize(
    ("ids", "component", "expected"),
    [
        ((), "word", "expected at least one container, found none"),
        ((1, 1), "word", "expected unique container ids >= 1, found 1"),
        ((0,), "word", "expected unique container ids >= 1, found 0"),
        ((1,), "nope", "component 'nope', which is not in the topology"),
    ],
)
def test_inconsistent_packing_plan_is_rejected(
    topology: topology_pb2.Topology, ids: tuple[int, ...], component: str, expected: str
) -> None:
    plan = packing_plan_pb2.PackingPlan(
        id="bad",
        containers=[
            packing_plan_pb2.ContainerPlan(
                id=cid, instances=[packing_plan_pb2.InstancePlan(component_name=component)]
            )
            for cid in ids
        ],
    )
    with pytest.raises(PackingError, match=expected) as info:
        StMgrRegistry(topology, plan)
    assert "topology 'wc', packing plan 'bad'" in str(info.value)


def test_unknown_stmgr_is_invalid_and_not_recorded(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> None:
    registry = StMgrRegistry(topology, packing_plan)
    for bad in ("stmgr-3", "stmgr-0", "1", ""):
        result = registry.register(StMgr(id=bad), b"p", now=0.0)
        assert result.status == common_pb2.INVALID_STMGR
        assert result.plan is None
        assert repr(bad) in result.message and "['stmgr-1', 'stmgr-2']" in result.message
    assert registry.registrations == {}
    assert registry.waiting == Waiting(("stmgr-1", "stmgr-2"))


def test_plan_only_after_every_stmgr_registered(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> None:
    registry = StMgrRegistry(topology, packing_plan)
    first = registry.register(StMgr(id="stmgr-2", data_port=2), b"p2", now=1.0)
    assert (first.status, first.plan, registry.plan) == (common_pb2.OK, None, None)
    assert "still waiting for: [stmgr-1]" in first.message
    # a restarted stmgr-2 before the plan exists: replaced, still waiting
    again = registry.register(StMgr(id="stmgr-2", data_port=22), b"p2b", now=2.0)
    assert again.plan is None and "re-registered" in again.message
    assert registry.registrations["stmgr-2"].peer == b"p2b"

    last = registry.register(StMgr(id="stmgr-1", data_port=1), b"p1", now=3.0)
    assert last.status == common_pb2.OK and last.plan is not None
    assert registry.plan is last.plan and registry.waiting is None
    assert [s.data_port for s in last.plan.stmgrs] == [1, 22]


def test_re_registration_rebuilds_the_plan_with_the_new_record(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> None:
    registry = StMgrRegistry(topology, packing_plan)
    registry.register(StMgr(id="stmgr-1", host_name="a", data_port=1), b"p1", now=0.0)
    old = registry.register(StMgr(id="stmgr-2", host_name="a", data_port=2), b"p2", now=0.0).plan
    assert old is not None

    new = registry.register(StMgr(id="stmgr-1", host_name="b", data_port=9), b"p1-new", now=5.0)

    assert new.status == common_pb2.OK and "stmgr-1 re-registered" in new.message
    assert new.plan is not None and new.plan is not old
    assert [(s.host_name, s.data_port) for s in new.plan.stmgrs] == [("b", 9), ("a", 2)]
    assert [(s.host_name, s.data_port) for s in old.stmgrs] == [("a", 1), ("a", 2)]
    assert new.plan.instances == old.instances
    assert {sid: r.peer for sid, r in registry.registrations.items()} == {
        "stmgr-1": b"p1-new",
        "stmgr-2": b"p2",
    }


def test_heartbeats_need_the_registered_peer_and_silence_is_reported_once(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> None:
    registry = StMgrRegistry(topology, packing_plan)
    assert registry.heartbeat("stmgr-1", b"p1", now=0.0) is None
    registry.register(StMgr(id="stmgr-1"), b"p1", now=0.0)
    registry.register(StMgr(id="stmgr-2"), b"p2", now=10.0)
    assert registry.heartbeat("stmgr-1", b"other", now=1.0) is None
    assert registry.next_silence(timeout=60.0) == 60.0

    refreshed = registry.heartbeat("stmgr-1", b"p1", now=20.0)
    assert refreshed is not None and refreshed.last_heartbeat == 0.0
    assert registry.registrations["stmgr-1"].last_heartbeat == 20.0
    assert registry.next_silence(timeout=60.0) == 70.0

    assert registry.newly_silent(now=69.9, timeout=60.0) == []
    assert registry.newly_silent(now=80.0, timeout=60.0) == ["stmgr-1", "stmgr-2"]
    assert registry.newly_silent(now=500.0, timeout=60.0) == []
    assert registry.next_silence(timeout=60.0) is None

    back = registry.heartbeat("stmgr-2", b"p2", now=501.0)
    assert back is not None and back.silent
    assert registry.next_silence(timeout=60.0) == 561.0
    assert registry.newly_silent(now=561.0, timeout=60.0) == ["stmgr-2"]


@st.composite
def plans(draw: st.DrawFn) -> tuple[topology_pb2.Topology, packing_plan_pb2.PackingPlan]:
    containers = draw(st.integers(1, 6))
    tasks = draw(st.integers(1, 20))
    components = ["a", "b", "c"]
    owners = draw(st.lists(st.integers(1, containers), min_size=tasks, max_size=tasks))
    plan = packing_plan_pb2.PackingPlan(id="p")
    by_container = {
        cid: plan.containers.add(id=cid) for cid in draw(st.permutations(range(1, containers + 1)))
    }
    for task, owner in enumerate(owners, start=1):
        by_container[owner].instances.add(component_name=components[task % 3], task_id=task)
    topology = topology_pb2.Topology(
        name="prop",
        bolts=[topology_pb2.Bolt(comp=topology_pb2.Component(name=c)) for c in components],
    )
    return topology, plan


@given(data=st.data(), inputs=plans())
def test_plan_appears_exactly_when_the_last_stmgr_registers(
    data: st.DataObject, inputs: tuple[topology_pb2.Topology, packing_plan_pb2.PackingPlan]
) -> None:
    topology, plan = inputs
    ids = [f"stmgr-{c.id}" for c in plan.containers]
    order = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3 * len(ids)))
    registry = StMgrRegistry(topology, plan)
    ordered = sorted(ids, key=lambda s: int(s.removeprefix("stmgr-")))
    tasks = sum(len(c.instances) for c in plan.containers)
    seen: set[str] = set()
    for step, sid in enumerate(order):
        seen.add(sid)
        result = registry.register(StMgr(id=sid, data_port=step), sid.encode(), now=float(step))
        assert (result.plan is not None) == (seen == set(ids))
        if result.plan is not None:
            assert [s.id for s in result.plan.stmgrs] == ordered
            assert result.plan.stmgrs[ordered.index(sid)].data_port == step
            assert [i.info.task_id for i in result.plan.instances] == list(range(1, tasks + 1))
