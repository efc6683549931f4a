"""RoundRobinPacking: container count, distribution, ordering, padding and container hints."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.config import build_config
from heron_core.errors import ConfigurationError, PackingError
from heron_core.packing import RoundRobinPacking
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.testing.packing_conformance import (
    component_parallelism,
    make_topology,
    topologies,
)

GiB = 1 << 30


def _pack(topology: topology_pb2.Topology, **config: object) -> packing_plan_pb2.PackingPlan:
    overrides = {f"topology.{k.replace('_', '.')}": v for k, v in config.items()}
    return RoundRobinPacking().pack(topology, build_config(topology_config=overrides))


@given(topology=topologies(max_parallelism=8), data=st.data())
def test_exactly_n_containers_differing_by_at_most_one(
    topology: topology_pb2.Topology, data: st.DataObject
) -> None:
    stmgrs = data.draw(
        st.integers(1, sum(component_parallelism(topology).values())), label="topology.stmgrs"
    )
    plan = _pack(topology, stmgrs=stmgrs)
    sizes = [len(c.instances) for c in plan.containers]
    assert len(sizes) == stmgrs
    assert max(sizes) - min(sizes) <= 1


def test_instance_i_goes_to_container_i_mod_n_plus_one() -> None:
    plan = _pack(make_topology("t", {"a": 4, "b": 3}), stmgrs=3)
    placed = {i.task_id: c.id for c in plan.containers for i in c.instances}
    assert placed == {task: (task - 1) % 3 + 1 for task in range(1, 8)}


@pytest.mark.parametrize("stmgrs", [6, 100])
def test_more_containers_than_instances_is_an_error(stmgrs: int) -> None:
    topology = make_topology("wc", {"words": 2, "count": 3})
    with pytest.raises(PackingError) as info:
        _pack(topology, stmgrs=stmgrs)
    message = str(info.value)
    assert "topology 'wc'" in message
    assert f"topology.stmgrs is {stmgrs}" in message
    assert "only 5 instances" in message


def test_fewer_than_one_container_is_a_configuration_error() -> None:
    config = build_config()
    config["topology.stmgrs"] = 0  # past build_config, which would refuse it
    with pytest.raises(ConfigurationError, match=r"'topology\.stmgrs' .*topology 'wc'.*>= 1"):
        RoundRobinPacking().pack(make_topology("wc", {"words": 2}), config)


def test_components_ordered_by_ram_descending_then_name() -> None:
    topology = make_topology(
        "t",
        {"small": 1, "big_b": 1, "big_a": 2},
        {
            "small": {"topology.component.ram": GiB // 2},
            "big_b": {"topology.component.ram": 2 * GiB},
            "big_a": {"topology.component.ram": 2 * GiB},
        },
    )
    plan = _pack(topology)
    order = [(i.task_id, i.component_name, i.component_index) for i in plan.containers[0].instances]
    assert order == [(1, "big_a", 0), (2, "big_a", 1), (3, "big_b", 0), (4, "small", 0)]


def test_required_is_instances_plus_fixed_padding_and_scheduled_defaults_to_it() -> None:
    topology = make_topology("t", {"a": 3}, {"a": {"topology.component.cpu": 0.5}})
    plan = _pack(topology, container_ram_padding=2 * GiB)
    (container,) = plan.containers
    assert {i.resource.cpu for i in container.instances} == {0.5}
    assert container.required_resource == packing_plan_pb2.Resource(
        cpu=2.5, ram=5 * GiB, disk=4 * GiB
    )
    assert container.scheduled_resource == container.required_resource


def test_scheduled_resource_is_the_hint_where_given() -> None:
    plan = _pack(make_topology("t", {"a": 2}), container_ram=8 * GiB)
    (container,) = plan.containers
    assert container.scheduled_resource == packing_plan_pb2.Resource(
        cpu=3.0, ram=8 * GiB, disk=3 * GiB
    )


def test_container_needing_more_than_its_hint_is_an_error() -> None:
    topology = make_topology("wc", {"words": 2, "count": 2})
    with pytest.raises(PackingError) as info:
        _pack(topology, stmgrs=2, container_cpu=2.5)
    message = str(info.value)
    assert re.search(r"container 1 needs cpu=3\b", message)
    assert "topology.container.cpu allows cpu=2.5" in message
    assert "'count' x1, 'words' x1" in message
