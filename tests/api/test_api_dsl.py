"""The Topology class DSL: names from attributes, definition order, inputs forms."""

from __future__ import annotations

import pytest

from heron_core.api import (
    Bolt,
    GlobalStreamId,
    Grouping,
    Spout,
    Stream,
    Topology,
    Tuple,
    shell_component,
)
from heron_core.errors import TopologyValidationError
from heron_core.plan import GroupingKind, InputDef


class SentenceSpout(Spout):
    outputs = ["sentence", Stream(["error_msg"], name="error")]


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup: Tuple) -> None:
        for word in tup.values[0].split():
            self.emit([word], anchors=[tup])
        self.ack(tup)


class CountBolt(Bolt):
    def process(self, tup: Tuple) -> None:
        self.ack(tup)


class WordCount(Topology):
    config = {"topology.debug": True, "custom": frozenset({"a"})}
    sentences = SentenceSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[sentences])
    errors = CountBolt.spec(name="error-log", inputs={sentences["error"]: Grouping.ALL})
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=3, config={"k": 1})


def test_names_order_and_config() -> None:
    plan = WordCount.build()
    assert plan.name == "WordCount"
    assert [c.name for c in plan.components] == ["sentences", "split", "error-log", "count"]
    assert plan.config == {"topology.debug": True, "custom": frozenset({"a"})}
    assert plan.component("count").config == {"k": 1}
    assert plan.component("count").parallelism == 3
    assert plan.component("sentences").parallelism == 2
    assert WordCount.build("renamed").name == "renamed"


def test_inputs_forms() -> None:
    plan = WordCount.build()
    assert plan.component("split").inputs == (
        InputDef("sentences", "default", GroupingKind.SHUFFLE),
    )
    assert plan.component("error-log").inputs == (InputDef("sentences", "error", GroupingKind.ALL),)
    assert plan.component("count").inputs == (
        InputDef("split", "default", GroupingKind.FIELDS, ("word",)),
    )


def test_spec_getitem() -> None:
    assert WordCount.sentences["error"] == GlobalStreamId(WordCount.sentences, "error")
    assert WordCount.sentences["error"].component_id == "sentences"
    assert WordCount.sentences["error"] != GlobalStreamId("sentences", "error")  # by spec identity
    with pytest.raises(ValueError, match="'sentences' declares no stream 'errors'") as info:
        WordCount.sentences["errors"]
    assert "declared: default, error" in str(info.value)
    unnamed = SentenceSpout.spec()
    with pytest.raises(ValueError, match="<unnamed SentenceSpout spec> declares no stream 'x'"):
        unnamed["x"]
    assert repr(unnamed["error"]) == "GlobalStreamId(None, 'error')"


def test_single_spec_input_and_shell_specs() -> None:
    class Mixed(Topology):
        lines = shell_component(["node", "lines.js"], ["line"]).spout_spec(par=2)
        upper = shell_component(["python3", "up.py"], ["line"]).bolt_spec(inputs=lines)
        sink = CountBolt.spec(inputs=upper)

    plan = Mixed.build()
    assert [c.name for c in plan.spouts] == ["lines"]
    assert plan.component("upper").inputs == (InputDef("lines", "default", GroupingKind.SHUFFLE),)
    assert plan.component("sink").inputs == (InputDef("upper", "default", GroupingKind.SHUFFLE),)


def test_specs_are_inherited_and_overridable() -> None:
    class WithAudit(WordCount):
        audit = CountBolt.spec(inputs=[WordCount.split])
        count = CountBolt.spec(inputs=[WordCount.split])  # replaces the base's count

    plan = WithAudit.build()
    assert [c.name for c in plan.components] == [
        "sentences",
        "split",
        "error-log",
        "count",
        "audit",
    ]
    assert plan.component("count").inputs[0].grouping is GroupingKind.SHUFFLE
    assert WordCount.build().component("count").inputs[0].grouping is GroupingKind.FIELDS


def test_component_instance_attribute_is_rejected_at_definition() -> None:
    with pytest.raises(
        TopologyValidationError, match="is a SentenceSpout instance, not a spec"
    ) as info:

        class Broken(Topology):
            spout = SentenceSpout()

    assert (info.value.topology, info.value.component) == ("Broken", "spout")


def test_invalid_topologies_fail_at_build() -> None:
    class NoSpout(Topology):
        split = SplitBolt.spec(inputs=[GlobalStreamId("split")])

    with pytest.raises(TopologyValidationError, match="has no spout") as info:
        NoSpout.build()
    assert info.value.topology == "NoSpout"

    class BadField(Topology):
        sentences = SentenceSpout.spec()
        count = CountBolt.spec(inputs={sentences: Grouping.fields("word")})

    with pytest.raises(TopologyValidationError, match="field 'word'") as info:
        BadField.build()
    assert (info.value.topology, info.value.component) == ("BadField", "count")

    class BadConfig(Topology):
        config = ["not", "a", "dict"]  # type: ignore[assignment]
        sentences = SentenceSpout.spec()

    with pytest.raises(TopologyValidationError, match="config must be a dict, got list"):
        BadConfig.build()
