"""Both built-in packings pass the public conformance suite, and the suite catches bad plans."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.config import build_config
from heron_core.packing import FirstFitDecreasingPacking, Packing, RoundRobinPacking
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.testing.packing_conformance import (
    check_component_indexes,
    check_deterministic,
    check_every_task_placed_once,
    check_packing,
    check_plan_structure,
    check_resources_fit,
    check_task_ids_contiguous,
    component_parallelism,
    make_topology,
    topologies,
)


@given(topology=topologies(), data=st.data())
def test_round_robin_conforms(topology: topology_pb2.Topology, data: st.DataObject) -> None:
    stmgrs = data.draw(
        st.integers(1, sum(component_parallelism(topology).values())), label="topology.stmgrs"
    )
    config = build_config(topology_config={"topology.stmgrs": stmgrs})
    check_packing(RoundRobinPacking(), topology, config)


@given(
    topology=topologies(),
    strategy=st.sampled_from(["RAM_FIRST", "CPU_FIRST"]),
    max_instances=st.integers(5, 12),  # capacity scales with it; 5 holds any drawn instance
)
def test_first_fit_decreasing_conforms(
    topology: topology_pb2.Topology, strategy: str, max_instances: int
) -> None:
    config = build_config(
        topology_config={
            "topology.packing.ffd.sorting.strategy": strategy,
            "topology.container.max.instances": max_instances,
        }
    )
    check_packing(FirstFitDecreasingPacking(), topology, config)


# --- the checks themselves must catch broken plans ----------------------------------------------

TOPOLOGY = make_topology("wc", {"words": 2, "split": 3, "count": 2})


def _plan() -> packing_plan_pb2.PackingPlan:
    config = build_config(topology_config={"topology.stmgrs": 3})
    return RoundRobinPacking().pack(TOPOLOGY, config)


def test_the_valid_plan_passes_every_check() -> None:
    check_packing(
        RoundRobinPacking(), TOPOLOGY, build_config(topology_config={"topology.stmgrs": 3})
    )


def test_a_task_placed_twice_is_caught() -> None:
    plan = _plan()
    plan.containers[1].instances.append(plan.containers[0].instances[0])
    with pytest.raises(AssertionError, match="placed more than once"):
        check_every_task_placed_once(TOPOLOGY, plan)


def test_a_missing_instance_is_caught() -> None:
    plan = _plan()
    name = plan.containers[2].instances[0].component_name
    del plan.containers[2].instances[0]
    with pytest.raises(AssertionError, match=f"component {name!r} has .* instances placed"):
        check_every_task_placed_once(TOPOLOGY, plan)


def test_a_gap_in_task_ids_is_caught() -> None:
    plan = _plan()
    plan.containers[0].instances[0].task_id = 99
    with pytest.raises(AssertionError, match=r"task ids must be 1\.\.7"):
        check_task_ids_contiguous(plan)


def test_a_wrong_component_index_is_caught() -> None:
    plan = _plan()
    first = plan.containers[0].instances[0]
    first.component_index += 10
    with pytest.raises(AssertionError, match=f"component {first.component_name!r}"):
        check_component_indexes(TOPOLOGY, plan)


def test_container_zero_is_caught() -> None:
    plan = _plan()
    plan.containers[0].id = 0
    with pytest.raises(AssertionError, match=r"container ids must be 1\.\.N"):
        check_plan_structure(plan)


def test_an_empty_plan_id_is_caught() -> None:
    plan = _plan()
    plan.id = ""
    with pytest.raises(AssertionError, match="empty id"):
        check_plan_structure(plan)


def test_an_overcommitted_container_is_caught() -> None:
    plan = _plan()
    plan.containers[1].scheduled_resource.ram -= 1
    with pytest.raises(AssertionError, match="container 2: requires ram"):
        check_resources_fit(plan)


def test_instances_beyond_the_required_resource_are_caught() -> None:
    plan = _plan()
    plan.containers[0].instances[0].resource.cpu += 5.0
    with pytest.raises(AssertionError, match="container 1: its instances need cpu"):
        check_resources_fit(plan)


class _Counting(Packing):
    def __init__(self) -> None:
        self.calls = 0

    def pack(
        self, topology: topology_pb2.Topology, config: Mapping[str, Any]
    ) -> packing_plan_pb2.PackingPlan:
        self.calls += 1
        plan = RoundRobinPacking().pack(topology, config)
        plan.id = f"plan-{self.calls}"
        return plan


class _Renaming(Packing):
    def pack(
        self, topology: topology_pb2.Topology, config: Mapping[str, Any]
    ) -> packing_plan_pb2.PackingPlan:
        topology.name = "renamed"
        return RoundRobinPacking().pack(topology, config)


def test_a_nondeterministic_packing_is_caught() -> None:
    with pytest.raises(AssertionError, match="different plans for the same input"):
        check_deterministic(_Counting(), TOPOLOGY, build_config())


def test_a_packing_that_modifies_the_topology_is_caught() -> None:
    topology = make_topology("wc", {"words": 1})
    with pytest.raises(AssertionError, match="modified topology"):
        check_deterministic(_Renaming(), topology, build_config())
