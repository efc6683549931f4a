"""FirstFitDecreasingPacking: capacity, padding, lowest-id-first placement and sorting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from heron_core.config import build_config
from heron_core.errors import PackingError
from heron_core.packing import FirstFitDecreasingPacking
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.testing.packing_conformance import make_topology

GiB = 1 << 30


def _pack(
    topology: topology_pb2.Topology, overrides: Mapping[str, Any] | None = None
) -> packing_plan_pb2.PackingPlan:
    return FirstFitDecreasingPacking().pack(topology, build_config(topology_config=overrides))


def _layout(plan: packing_plan_pb2.PackingPlan) -> list[list[str]]:
    return [[i.component_name for i in c.instances] for c in plan.containers]


@pytest.mark.parametrize(("instances", "sizes"), [(9, [9]), (10, [9, 1]), (19, [9, 9, 1])])
def test_nine_default_instances_fill_a_default_container(instances: int, sizes: list[int]) -> None:
    plan = _pack(make_topology("t", {"a": instances}))
    assert [len(c.instances) for c in plan.containers] == sizes


def test_padding_is_the_larger_of_fixed_and_percentage_of_capacity() -> None:
    # capacity 20 GiB (hint) -> 10% padding is 2 GiB, above the fixed 1 GiB
    plan = _pack(make_topology("t", {"a": 19}), {"topology.container.ram": 20 * GiB})
    assert [len(c.instances) for c in plan.containers] == [9, 9, 1]  # cpu still limits: 9 + 1
    first = plan.containers[0]
    assert first.required_resource.ram == 9 * GiB + 2 * GiB
    assert first.scheduled_resource.ram == 20 * GiB
    assert first.required_resource.cpu == 10.0
    assert first.scheduled_resource.cpu == 10.0


def test_max_instances_limits_a_container() -> None:
    topology = make_topology("t", {"a": 7})
    roomy = {
        "topology.container.cpu": 100.0,
        "topology.container.ram": 100 * GiB,
        "topology.container.disk": 100 * GiB,
    }
    assert [len(c.instances) for c in _pack(topology, roomy).containers] == [7]
    plan = _pack(topology, {**roomy, "topology.container.max.instances": 3})
    assert [len(c.instances) for c in plan.containers] == [3, 3, 1]


def test_each_instance_goes_to_the_lowest_id_container_that_fits() -> None:
    topology = make_topology(
        "t",
        {"big": 1, "mid": 2, "small": 1},
        {
            "big": {"topology.component.ram": 6 * GiB},
            "mid": {"topology.component.ram": 4 * GiB},
            "small": {"topology.component.ram": 2 * GiB},
        },
    )
    plan = _pack(topology)
    # big fills container 1 to 7 GiB of 10 (with padding); mid opens container 2, the second
    # mid joins it; small fits back into container 1.
    assert _layout(plan) == [["big", "small"], ["mid", "mid"]]
    assert [i.task_id for i in plan.containers[0].instances] == [1, 4]


@pytest.mark.parametrize(
    ("strategy", "first"), [("RAM_FIRST", "ram_heavy"), ("CPU_FIRST", "cpu_heavy")]
)
def test_sorting_strategy_decides_the_order(strategy: str, first: str) -> None:
    topology = make_topology(
        "t",
        {"cpu_heavy": 1, "ram_heavy": 1},
        {
            "cpu_heavy": {"topology.component.cpu": 3.0},
            "ram_heavy": {"topology.component.ram": 3 * GiB},
        },
    )
    plan = _pack(topology, {"topology.packing.ffd.sorting.strategy": strategy})
    (task_one,) = [i for c in plan.containers for i in c.instances if i.task_id == 1]
    assert task_one.component_name == first


def test_an_instance_bigger_than_a_container_is_an_error() -> None:
    topology = make_topology(
        "wc", {"words": 1, "giant": 1}, {"giant": {"topology.component.ram": 20 * GiB}}
    )
    with pytest.raises(PackingError) as info:
        _pack(topology)
    message = str(info.value)
    assert "topology 'wc'" in message
    assert "component 'giant' requests cpu=1, ram=20 GiB, disk=1 GiB" in message
    assert "capacity cpu=10, ram=10 GiB, disk=10 GiB" in message


def test_the_plan_id_is_a_digest_of_the_plan() -> None:
    plan = _pack(make_topology("t", {"a": 3}))
    again = _pack(make_topology("t", {"a": 3}))
    other = _pack(make_topology("t", {"a": 4}))
    assert plan.id.startswith("t-id-")
    assert plan.SerializeToString(deterministic=True) == again.SerializeToString(deterministic=True)
    assert plan.id != other.id


def test_cpu_fractions_add_up_exactly() -> None:
    # ten instances of 0.1 cores plus 1 core of padding fill a 2-core container exactly
    topology = make_topology("t", {"a": 10}, {"a": {"topology.component.cpu": 0.1}})
    plan = _pack(topology, {"topology.container.cpu": 2.0, "topology.container.max.instances": 20})
    assert [len(c.instances) for c in plan.containers] == [10]
