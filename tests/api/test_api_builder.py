"""TopologyBuilder: classes, instances and shell components become a validated LogicalPlan."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest

from heron_core.api import (
    Bolt,
    GlobalStreamId,
    Grouping,
    Spout,
    Stream,
    TopologyBuilder,
    Tuple,
    shell_component,
)
from heron_core.errors import TopologyValidationError
from heron_core.plan import (
    GroupingKind,
    InputDef,
    PythonSpec,
    ShellSpec,
    StreamDef,
    TopologyState,
)


class WordSpout(Spout):
    outputs = ["word", Stream(["reason"], name="errors"), Stream(["x"], "direct", direct=True)]

    def next_tuple(self) -> None:
        self.emit(["w"])


class ListSpout(Spout):
    outputs = ["word"]

    def __init__(self, words: list[str]) -> None:
        self.words = words


class CountBolt(Bolt):
    outputs = ["word", "count"]

    def process(self, tup: Tuple) -> None:
        self.ack(tup)


class SinkBolt(Bolt):
    def process(self, tup: Tuple) -> None:
        self.ack(tup)


def test_classes_instances_and_shell_components() -> None:
    builder = TopologyBuilder("wc")
    words = builder.add_spout("words", WordSpout, par=2, config={"k": (1, 2)})
    listed = ListSpout(["a", "b"])
    listed.outputs = ["word", "lang"]  # an instance attribute wins over the class attribute
    other = builder.add_spout("listed", listed, optional_outputs=[Stream(["e"], "extra")])
    split = builder.add_bolt(
        "split",
        shell_component(["python3", "split.py"], ["word"], serializer="msgpack"),
        inputs={words: Grouping.SHUFFLE, other["extra"]: Grouping.ALL},
    )
    builder.add_bolt(
        "count",
        CountBolt,
        par=3,
        inputs={
            split: Grouping.fields("word"),
            GlobalStreamId("listed", "default"): Grouping.partial_key("lang"),
            words["direct"]: Grouping.DIRECT,
        },
    )
    builder.add_bolt("sink", SinkBolt(), inputs=[GlobalStreamId("count")])
    builder.set_config({"topology.workers": 2})
    plan = builder.build()

    assert plan.name == "wc" and plan.id.startswith("wc-") and plan.state is TopologyState.RUNNING
    assert plan.config == {"topology.workers": 2}
    spout = plan.component("words")
    assert spout.spec == PythonSpec(f"{__name__}:WordSpout", b"")
    assert (spout.parallelism, spout.config) == (2, {"k": (1, 2)})
    assert spout.outputs == (
        StreamDef("default", ("word",)),
        StreamDef("errors", ("reason",)),
        StreamDef("direct", ("x",), direct=True),
    )
    listed_def = plan.component("listed")
    assert isinstance(listed_def.spec, PythonSpec)
    assert listed_def.spec.class_path == f"{__name__}:ListSpout"
    restored = pickle.loads(listed_def.spec.pickled_object)
    assert isinstance(restored, ListSpout) and restored.words == ["a", "b"]
    assert listed_def.outputs == (
        StreamDef("default", ("word", "lang")),
        StreamDef("extra", ("e",)),
    )
    assert plan.component("split").spec == ShellSpec(("python3", "split.py"), "msgpack")
    assert plan.component("count").inputs == (
        InputDef("split", "default", GroupingKind.FIELDS, ("word",)),
        InputDef("listed", "default", GroupingKind.PARTIAL_KEY, ("lang",)),
        InputDef("words", "direct", GroupingKind.DIRECT),
    )
    assert plan.component("sink").inputs == (InputDef("count", "default", GroupingKind.SHUFFLE),)
    sink = plan.component("sink").spec
    assert isinstance(sink, PythonSpec) and sink.pickled_object  # an instance, even stateless


def test_ids_are_fresh_and_build_may_rename() -> None:
    builder = TopologyBuilder("a")
    builder.add_spout("s", WordSpout)
    assert builder.build().id != builder.build().id
    assert builder.build("b").name == "b"


def test_spec_getitem_names_component_and_stream() -> None:
    builder = TopologyBuilder("t")
    words = builder.add_spout("words", WordSpout)
    assert words["errors"] == GlobalStreamId(words, "errors")
    with pytest.raises(ValueError, match="component 'words' declares no stream 'nope'") as info:
        words["nope"]
    assert "declared: default, errors, direct" in str(info.value)


def test_add_spec_takes_only_specs() -> None:
    with pytest.raises(TypeError, match="add_spec takes ComponentSpec objects"):
        TopologyBuilder("t").add_spec(WordSpout)  # type: ignore[arg-type]


class NeedsArgs(Spout):
    def __init__(self, words: list[str]) -> None:
        self.words = words


def _with_spout(spout: Any, **kw: Any) -> Callable[[TopologyBuilder], object]:
    return lambda b: b.add_spout("words", spout, **kw)


def _with_bolt(bolt: Any = SinkBolt, **kw: Any) -> Callable[[TopologyBuilder], object]:
    def add(builder: TopologyBuilder) -> None:
        words = builder.add_spout("words", WordSpout)
        kw.setdefault("inputs", [words])
        builder.add_bolt("sink", bolt, **kw)

    return add


def _locals_spout() -> type[Spout]:
    class Local(Spout):
        pass

    return Local


def _lambda_spout() -> Spout:
    spout = WordSpout()
    spout.transform = lambda word: word.upper()  # type: ignore[attr-defined]
    return spout


class Ghost(Spout):
    pass


Ghost.__qualname__ = "Gone"  # no module attribute leads back to it


BUILD_ERRORS: dict[str, tuple[Callable[[TopologyBuilder], object], str | None, str]] = {
    "parallelism zero": (_with_spout(WordSpout, par=0), "words", "parallelism must be an int >= 1"),
    "parallelism float": (_with_bolt(par=1.5), "sink", "got 1.5"),
    "parallelism str": (_with_spout(WordSpout, par="2"), "words", "got '2'"),
    "component config not a dict": (
        _with_spout(WordSpout, config=[("a", 1)]),
        "words",
        "config must be a dict, got list",
    ),
    "component config key": (
        _with_bolt(config={1: "a"}),
        "sink",
        "config keys must be str, got [1]",
    ),
    "bolt given as spout": (_with_spout(SinkBolt), "words", "expected a Spout subclass"),
    "spout instance given as bolt": (_with_bolt(WordSpout()), "sink", "expected a Bolt subclass"),
    "not a component": (_with_spout("x.py"), "words", "got 'x.py'"),
    "class needing arguments": (_with_spout(NeedsArgs), "words", "pass a configured instance"),
    "class in a function": (_with_spout(_locals_spout()), "words", "defined inside a function"),
    "unpicklable instance": (_with_spout(_lambda_spout()), "words", "cannot be serialized: "),
    "class path not leading back": (_with_spout(Ghost), "words", "cannot be serialized: "),
    "outputs not a list": (_with_spout(WordSpout, optional_outputs="extra"), "words", "got str"),
    "output of a bad type": (_with_spout(WordSpout, optional_outputs=[3]), "words", "got 3"),
    "bolt without inputs": (_with_bolt(inputs=None), "sink", "bolt has no inputs"),
    "inputs of a bad shape": (_with_bolt(inputs="words"), "sink", "inputs must be a dict"),
    "input key of a bad type": (
        _with_bolt(inputs={"words": Grouping.SHUFFLE}),
        "sink",
        "must be a ComponentSpec or a GlobalStreamId, got 'words'",
    ),
    "grouping of a bad type": (
        _with_bolt(inputs={GlobalStreamId("words"): "shuffle"}),
        "sink",
        "must be a Grouping, got 'shuffle'",
    ),
    "unnamed source spec": (
        _with_bolt(inputs=[WordSpout.spec()]),
        "sink",
        "refers to a component spec without a name",
    ),
    "undeclared stream by id": (
        _with_bolt(inputs=[GlobalStreamId("words", "other")]),
        "sink",
        "declared streams: default, errors, direct",
    ),
    "undeclared field": (
        _with_bolt(inputs={GlobalStreamId("words"): Grouping.fields("count")}),
        "sink",
        "field 'count', which 'words' stream 'default' does not declare; declared fields: word",
    ),
    "direct grouping on a plain stream": (
        _with_bolt(inputs={GlobalStreamId("words"): Grouping.DIRECT}),
        "sink",
        "not declared direct",
    ),
    "list input on a direct stream": (
        _with_bolt(inputs=[GlobalStreamId("words", "direct")]),
        "sink",
        "only DIRECT may subscribe",
    ),
    "bad shell command": (
        _with_spout(shell_component([], ["w"])),
        "words",
        "shell command must be a non-empty argv",
    ),
    "reserved name": (lambda b: b.add_spout("__words", WordSpout), "__words", "'__'"),
    "duplicate name": (
        lambda b: (b.add_spout("w", WordSpout), b.add_spout("w", WordSpout)),
        "w",
        "defined twice",
    ),
    "no spout": (
        lambda b: b.add_bolt("sink", SinkBolt, inputs=[GlobalStreamId("sink")]),
        None,
        "has no spout",
    ),
    "topology config not a dict": (lambda b: b.set_config(["a"]), None, "config must be a dict"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", list(BUILD_ERRORS))
def test_build_errors_name_topology_and_component(case: str) -> None:
    define, component, fragment = BUILD_ERRORS[case]
    builder = TopologyBuilder("topo")
    define(builder)
    with pytest.raises(TopologyValidationError) as info:
        builder.build()
    assert info.value.topology == "topo"
    assert info.value.component == component
    assert fragment in str(info.value)


def test_serialization_errors_chain_the_cause() -> None:
    builder = TopologyBuilder("topo")
    builder.add_spout("words", _lambda_spout())
    with pytest.raises(TopologyValidationError, match="cannot be serialized") as info:
        builder.build()
    assert isinstance(info.value.__cause__, Exception)


def test_unnamed_specs_and_topologies_are_rejected() -> None:
    builder = TopologyBuilder()
    builder.add_spout("words", WordSpout)
    with pytest.raises(TopologyValidationError, match="no topology name"):
        builder.build()
    builder.add_spec(SinkBolt.spec(inputs=[GlobalStreamId("words")]))
    with pytest.raises(TopologyValidationError, match="needs a name") as info:
        builder.build("topo")
    assert info.value.topology == "topo"


def test_shell_component_rejects_a_single_string() -> None:
    with pytest.raises(TypeError, match="command must be a list, got the str"):
        shell_component("python3 split.py", ["word"])
    with pytest.raises(TypeError, match="outputs must be a list, got the str"):
        shell_component(["python3"], "word")
