"""What an instance reads of the physical plan: each component's config."""

from __future__ import annotations

from typing import Any

from heron_core.api import Bolt, Grouping, Spout, TopologyBuilder
from heron_core.instance._plan import PlanView
from heron_core.proto import physical_plan_pb2


class Src(Spout):
    outputs = ["n"]


class Sink(Bolt):
    def process(self, tup: Any) -> None:
        pass


def view(topology: dict[str, Any], sink: dict[str, Any]) -> PlanView:
    b = TopologyBuilder("t")
    src = b.add_spout("src", Src, par=1, config={"my.key": "spout"})
    b.add_bolt("sink", Sink, par=1, inputs={src: Grouping.SHUFFLE}, config=sink)
    b.set_config(topology)
    return PlanView(physical_plan_pb2.PhysicalPlan(topology=b.build().to_proto()))


def test_a_component_config_overlays_the_topology_config() -> None:
    plan = view({"my.key": "topology", "topology.debug": False}, {"topology.debug": True})
    assert plan.component_config("src")["my.key"] == "spout"
    assert plan.component_config("sink")["my.key"] == "topology"
    assert plan.component_config("sink")["topology.debug"] is True
    assert plan.ignored_config("sink") == {}


def test_reliability_holds_for_the_whole_topology() -> None:
    topology = {"topology.reliability.mode": "ATLEAST_ONCE"}
    sink = {"topology.reliability.mode": "ATMOST_ONCE", "topology.acker.executors": 0}
    plan = view(topology, sink)
    config = plan.component_config("sink")
    assert config["topology.reliability.mode"] == "ATLEAST_ONCE"
    assert "topology.acker.executors" not in config
    assert plan.ignored_config("sink") == sink


def test_a_component_repeating_the_topology_reliability_is_not_reported() -> None:
    plan = view({}, {"topology.reliability.mode": "ATLEAST_ONCE", "topology.acker.executors": None})
    assert plan.ignored_config("sink") == {}
