"""LogicalPlan construction, queries and protobuf decoding of malformed messages."""

from __future__ import annotations

import dataclasses

import pytest

from heron_core.errors import TopologyValidationError
from heron_core.plan import (
    ComponentDef,
    GroupingKind,
    InputDef,
    LogicalPlan,
    PythonSpec,
    ShellSpec,
    StreamDef,
    TopologyState,
)
from heron_core.proto import topology_pb2

SPEC = PythonSpec("app.mod:Thing")


def _plan() -> LogicalPlan:
    words = ComponentDef(
        "words",
        True,
        ShellSpec(("python3", "words.py"), "msgpack"),
        parallelism=2,
        outputs=(StreamDef("default", ("word",)), StreamDef("errors", ("msg", "code"))),
    )
    split = ComponentDef(
        "split",
        False,
        PythonSpec("app.mod:Split", b"\x80\x05pickled"),
        config_items=(("weights", [1, 2]), ("topology.tick.tuple.freq.secs", 1)),
        outputs=(StreamDef("default", ("word",)), StreamDef("targeted", ("x",), direct=True)),
        inputs=(InputDef("words", "default", GroupingKind.SHUFFLE),),
    )
    count = ComponentDef(
        "count",
        False,
        SPEC,
        parallelism=3,
        inputs=(
            InputDef("split", "default", GroupingKind.FIELDS, ("word",)),
            InputDef("words", "errors", GroupingKind.CUSTOM, custom=b"grouper"),
            InputDef("split", "targeted", GroupingKind.DIRECT),
        ),
    )
    log = ComponentDef(
        "log",
        False,
        SPEC,
        inputs=(InputDef("split", "default", GroupingKind.PARTIAL_KEY, ("word",)),),
    )
    # Bolts listed before the spout: the plan puts spouts first, keeping the order otherwise.
    return LogicalPlan("wc", "wc-1", (split, count, words, log), (("b", (1, 2)), ("a", {3})))


def test_components_are_spouts_first_in_definition_order() -> None:
    plan = _plan()
    plan.validate()
    assert [c.name for c in plan.components] == ["words", "split", "count", "log"]
    assert [c.name for c in plan.spouts] == ["words"]
    assert [c.name for c in plan.bolts] == ["split", "count", "log"]


def test_queries() -> None:
    plan = _plan()
    assert plan.component("count").parallelism == 3
    assert plan.stream_fields("words", "errors") == ("msg", "code")
    assert [(name, inp.grouping) for name, inp in plan.consumers("split", "default")] == [
        ("count", GroupingKind.FIELDS),
        ("log", GroupingKind.PARTIAL_KEY),
    ]
    assert plan.consumers("words", "errors")[0][1].custom == b"grouper"
    assert [name for name, _ in plan.consumers("words", "default")] == ["split"]
    kept = tuple(c for c in plan.components if c.name != "count")
    assert dataclasses.replace(plan, components=kept).consumers("split", "targeted") == ()


def test_queries_name_what_is_missing() -> None:
    plan = _plan()
    with pytest.raises(TopologyValidationError, match="no such component; components: words"):
        plan.component("nope")
    with pytest.raises(TopologyValidationError) as info:
        plan.stream_fields("words", "nope")
    assert info.value.component == "words"
    assert "declares no stream 'nope'; declared streams: default, errors" in str(info.value)
    with pytest.raises(TopologyValidationError, match="declared streams: none"):
        plan.consumers("count", "default")


def test_config_is_sorted_frozen_and_copied() -> None:
    plan = _plan()
    assert plan.config_items == (("a", {3}), ("b", (1, 2)))
    config = plan.config
    config["a"].add(4)
    config["c"] = 1
    assert plan.config == {"a": {3}, "b": (1, 2)}
    split = plan.component("split")
    assert split.config == {"topology.tick.tuple.freq.secs": 1, "weights": [1, 2]}
    split.config["weights"].append(3)
    assert split.config["weights"] == [1, 2]
    assert hash(plan) == hash(dataclasses.replace(plan))  # hashable despite unhashable values


def test_equality_ignores_config_order_and_component_interleaving() -> None:
    plan = _plan()
    shuffled = LogicalPlan(
        "wc", "wc-1", tuple(reversed(plan.components)), tuple(reversed(plan.config_items))
    )
    assert shuffled != plan  # bolt order differs
    same = LogicalPlan("wc", "wc-1", plan.bolts + plan.spouts, tuple(reversed(plan.config_items)))
    assert same == plan


def test_proto_round_trip_is_exact_both_ways() -> None:
    plan = dataclasses.replace(_plan(), state=TopologyState.PAUSED)
    message = plan.to_proto()
    assert message.state == topology_pb2.PAUSED
    assert [s.comp.name for s in message.spouts] == ["words"]
    assert message.bolts[1].inputs[0].gtype == topology_pb2.FIELDS
    assert LogicalPlan.from_proto(message) == plan
    data = message.SerializeToString()
    again = LogicalPlan.from_proto(topology_pb2.Topology.FromString(data)).to_proto()
    assert again.SerializeToString() == data


def _message() -> topology_pb2.Topology:
    return _plan().to_proto()


def test_from_proto_rejects_unset_spec() -> None:
    message = _message()
    message.bolts[0].comp.spec.Clear()
    with pytest.raises(TopologyValidationError, match="component spec is unset") as info:
        LogicalPlan.from_proto(message)
    assert (info.value.topology, info.value.component) == ("wc", "split")


def test_from_proto_rejects_unknown_grouping_and_state() -> None:
    message = _message()
    message.bolts[0].inputs[0].gtype = topology_pb2.GROUPING_UNSPECIFIED
    with pytest.raises(TopologyValidationError, match="unknown grouping 0"):
        LogicalPlan.from_proto(message)
    message = _message()
    message.state = topology_pb2.TOPOLOGY_STATE_UNSPECIFIED
    with pytest.raises(TopologyValidationError, match="unknown topology state 0"):
        LogicalPlan.from_proto(message)


def test_from_proto_rejects_output_stream_of_another_component() -> None:
    message = _message()
    message.spouts[0].outputs[0].stream.component_name = "split"
    with pytest.raises(TopologyValidationError, match="names component 'split'") as info:
        LogicalPlan.from_proto(message)
    assert info.value.component == "words"


def test_set_config_values_serialize_to_identical_bytes() -> None:
    plan = LogicalPlan("t", "t-1", _plan().components, (("s", frozenset([3, 515])),))
    data = plan.to_proto().SerializeToString()
    decoded = LogicalPlan.from_proto(topology_pb2.Topology.FromString(data))
    assert decoded == plan
    assert decoded.to_proto().SerializeToString() == data
