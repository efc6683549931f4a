"""Storm thrift topologies <-> logical plans: round trips and the errors for Java objects."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heron_core.api import CustomGrouping, TopologyContext
from heron_core.errors import TopologyValidationError
from heron_core.plan import (
    ComponentDef,
    GroupingKind,
    InputDef,
    LogicalPlan,
    PythonSpec,
    ShellSpec,
    StreamDef,
)
from storm_compat.thrift import (
    plan_to_topology,
    read_topology,
    storm_thrift,
    topology_to_plan,
    write_topology,
)

T = storm_thrift()
NAMES = ("spout", "split", "count", "sink", "w-1", "x_2", "y")
FIELDS = ("word", "count", "n", "ts")
PICKLED = pickle.dumps(("a pickled", "grouping"))


class ModGrouping(CustomGrouping):
    """A custom grouping a streamparse topology can name by its Python path."""

    def __init__(self, modulus: int = 1) -> None:
        self.modulus = modulus

    def prepare(
        self, context: TopologyContext, component: str, stream: str, target_tasks: list[int]
    ) -> None:
        self.targets = target_tasks

    def choose_tasks(self, values: list[Any]) -> list[int]:
        return [self.targets[hash(values[0]) % self.modulus]]


# ------------------------------------------------------------------ random topologies


@st.composite
def streams(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(st.sampled_from(("default", "errors", "s2")), min_size=1, unique=True))
    return {
        sid: T.StreamInfo(
            output_fields=draw(st.lists(st.sampled_from(FIELDS), unique=True)),
            direct=draw(st.booleans()),
        )
        for sid in ids
    }


@st.composite
def groupings(draw: st.DrawFn, info: Any) -> Any:
    if info.direct:
        return T.Grouping(direct=T.NullStruct())
    kinds = ["global", "shuffle", "all", "none", "local_or_shuffle", "custom"]
    if info.output_fields:
        kinds.append("fields")
    kind = draw(st.sampled_from(kinds))
    if kind == "fields":
        chosen = draw(st.lists(st.sampled_from(info.output_fields), min_size=1, unique=True))
        return T.Grouping(fields=chosen)
    if kind == "global":
        return T.Grouping(fields=[])
    if kind == "custom":
        return T.Grouping(custom_serialized=PICKLED)
    return T.Grouping(**{kind: T.NullStruct()})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


@st.composite
def common(draw: st.DrawFn, inputs: dict[Any, Any]) -> Any:
    config = draw(
        st.dictionaries(st.sampled_from(("my.key", "other", "topology.debug")), json_values)
    )
    if "topology.debug" in config:
        config["topology.debug"] = draw(st.booleans())
    return T.ComponentCommon(
        inputs=inputs,
        streams=draw(streams()),
        parallelism_hint=draw(st.integers(1, 8)),
        json_conf=json.dumps(config),
    )


def shell(draw: st.DrawFn) -> Any:
    command = draw(st.sampled_from(("python3", "streamparse_run", "/usr/bin/node", "sh")))
    script = draw(st.sampled_from(("", "split.py", "-s json bolts.X", "a script with spaces")))
    return T.ComponentObject(shell=T.ShellComponent(command, script))


@st.composite
def topologies(draw: st.DrawFn) -> Any:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True))
    spout_count = draw(st.integers(1, len(names)))
    spouts: dict[str, Any] = {}
    bolts: dict[str, Any] = {}
    declared: list[tuple[str, str, Any]] = []
    for i, name in enumerate(names):
        if i < spout_count:
            spec = T.SpoutSpec(spout_object=shell(draw), common=draw(common({})))
            spouts[name] = spec
        else:
            chosen = draw(
                st.lists(
                    st.sampled_from(declared), min_size=1, max_size=3, unique_by=lambda d: d[:2]
                )
            )
            inputs = {
                T.GlobalStreamId(source, stream): draw(groupings(info))
                for source, stream, info in chosen
            }
            spec = T.Bolt(bolt_object=shell(draw), common=draw(common(inputs)))
            bolts[name] = spec
        declared += [(name, sid, info) for sid, info in spec.common.streams.items()]
    return T.StormTopology(spouts=spouts, bolts=bolts, state_spouts={})


def normalized(topology: Any) -> Any:
    """The topology with each json_conf parsed (JSON formatting is not kept)."""
    copy = read_topology(write_topology(topology))
    for spec in [*copy.spouts.values(), *copy.bolts.values()]:
        spec.common.json_conf = json.loads(spec.common.json_conf)
    return copy


@settings(max_examples=60, deadline=None)
@given(topologies())
def test_thrift_to_plan_and_back_is_exact(topology: Any) -> None:
    plan = topology_to_plan(topology, "t", {"topology.workers": 2})
    assert normalized(plan_to_topology(plan)) == normalized(topology)
    assert read_topology(write_topology(plan_to_topology(plan))) == plan_to_topology(plan)


@settings(max_examples=60, deadline=None)
@given(topologies())
def test_plan_to_thrift_and_back_is_exact(topology: Any) -> None:
    plan = topology_to_plan(topology, "t", {"topology.multilang.serializer": "json"})
    again = topology_to_plan(plan_to_topology(plan), "t", plan.config, topology_id=plan.id)
    assert again == plan


# ------------------------------------------------------------------ the mapping itself


def spout_spec(obj: Any, **common: Any) -> Any:
    streams = common.pop("streams", {"default": T.StreamInfo(["word"], False)})
    return T.SpoutSpec(obj, T.ComponentCommon(inputs={}, streams=streams, **common))


def bolt_spec(obj: Any, grouping: Any, **common: Any) -> Any:
    inputs = {T.GlobalStreamId("words", "default"): grouping}
    return T.Bolt(obj, T.ComponentCommon(inputs=inputs, streams={}, **common))


SHELL = T.ComponentObject(shell=T.ShellComponent("python3", "split.py"))


def test_groupings_configs_and_serializers_map_to_the_plan() -> None:
    topology = T.StormTopology(
        spouts={"words": spout_spec(SHELL, parallelism_hint=3)},
        bolts={
            "count": bolt_spec(
                SHELL,
                T.Grouping(fields=["word"]),
                json_conf='{"topology.multilang.serializer": "msgpack", "k": [1]}',
            ),
            "top": bolt_spec(SHELL, T.Grouping(fields=[])),
            "all": bolt_spec(
                T.ComponentObject(shell=T.ShellComponent("run.sh", "")),
                T.Grouping(all=T.NullStruct()),
            ),
        },
        state_spouts={},
    )
    plan = topology_to_plan(topology, "wc", {"topology.debug": True}, topology_id="wc-7")
    assert (plan.name, plan.id, plan.config) == ("wc", "wc-7", {"topology.debug": True})
    words, count, top, every = plan.components
    assert words == ComponentDef(
        "words",
        True,
        ShellSpec(("python3", "split.py"), "json"),
        3,
        outputs=(StreamDef("default", ("word",)),),
    )
    assert count.spec == ShellSpec(("python3", "split.py"), "msgpack")
    assert count.config["k"] == [1]
    assert count.inputs == (InputDef("words", "default", GroupingKind.FIELDS, ("word",)),)
    assert top.inputs[0].grouping is GroupingKind.LOWEST
    assert every.inputs[0].grouping is GroupingKind.ALL
    assert every.spec == ShellSpec(("run.sh",))


def test_a_python_custom_grouping_is_named_by_its_path() -> None:
    grouping = T.Grouping(
        custom_object=T.JavaObject(f"{__name__}.ModGrouping", [T.JavaObjectArg(long_arg=3)])
    )
    topology = T.StormTopology({"words": spout_spec(SHELL)}, {"b": bolt_spec(SHELL, grouping)}, {})
    [inp] = topology_to_plan(topology, "t").component("b").inputs
    assert inp.grouping is GroupingKind.CUSTOM
    restored = pickle.loads(inp.custom)
    assert isinstance(restored, ModGrouping) and restored.modulus == 3


@pytest.mark.parametrize(
    ("spout", "bolt", "expected"),
    [
        (
            T.ComponentObject(java_object=T.JavaObject("com.acme.PixelSpout", [])),
            None,
            "component 'words': is the Java class com.acme.PixelSpout .*Python or a shell",
        ),
        (
            T.ComponentObject(serialized_java=b"\xac\xed\x00\x05"),
            None,
            "component 'words': is a serialized Java object \\(4 bytes\\)",
        ),
        (
            SHELL,
            bolt_spec(SHELL, T.Grouping(custom_serialized=b"\xac\xed\x00\x05sr")),
            "component 'b': input from 'words' stream 'default': the custom grouping is "
            "serialized Java",
        ),
        (
            SHELL,
            bolt_spec(SHELL, T.Grouping(custom_object=T.JavaObject("com.acme.Grouping", []))),
            "component 'b': .*custom grouping 'com.acme.Grouping' must name a "
            "heron_core.api.CustomGrouping",
        ),
        (SHELL, bolt_spec(SHELL, T.Grouping()), "component 'b': .* has an empty grouping"),
        (
            SHELL,
            bolt_spec(SHELL, T.Grouping(shuffle=T.NullStruct()), json_conf="[1]"),
            "component 'b': json_conf must be a JSON object",
        ),
        (
            SHELL,
            bolt_spec(SHELL, T.Grouping(shuffle=T.NullStruct()), parallelism_hint={"prod": 2}),
            "component 'b': parallelism_hint must be an int",
        ),
        (T.ComponentObject(), None, "component 'words': has an empty component object"),
    ],
)
def test_what_cannot_run_here_is_reported_by_component(
    spout: Any, bolt: Any, expected: str
) -> None:
    bolts = {"b": bolt} if bolt is not None else {}
    topology = T.StormTopology({"words": spout_spec(spout)}, bolts, {})
    with pytest.raises(TopologyValidationError, match=f"topology 't', {expected}"):
        topology_to_plan(topology, "t")


def test_state_spouts_and_invalid_topologies_are_reported() -> None:
    state = T.StateSpoutSpec(SHELL, T.ComponentCommon(inputs={}, streams={}))
    with pytest.raises(TopologyValidationError, match="state spouts"):
        topology_to_plan(T.StormTopology({"words": spout_spec(SHELL)}, {}, {"s": state}), "t")
    direct = T.Grouping(direct=T.NullStruct())
    with pytest.raises(TopologyValidationError, match="not declared direct"):
        topology_to_plan(
            T.StormTopology({"words": spout_spec(SHELL)}, {"b": bolt_spec(SHELL, direct)}, {}), "t"
        )
    with pytest.raises(TopologyValidationError, match="expected a thrift StormTopology"):
        topology_to_plan({"spouts": {}}, "t")


def test_what_thrift_cannot_express_is_reported() -> None:
    python = ComponentDef(
        "words", True, PythonSpec("app:Words"), outputs=(StreamDef("default", ("w",)),)
    )
    with pytest.raises(TopologyValidationError, match="component 'words': is a Python component"):
        plan_to_topology(LogicalPlan("t", "t-1", (python,)))
    topology = T.StormTopology(
        {"words": spout_spec(SHELL)}, {"b": bolt_spec(SHELL, T.Grouping(fields=["word"]))}, {}
    )
    plan = topology_to_plan(topology, "t")
    bolt = plan.component("b")
    partial = InputDef("words", "default", GroupingKind.PARTIAL_KEY, ("word",))
    keyed = LogicalPlan(
        "t",
        "t-1",
        (plan.component("words"), ComponentDef("b", False, bolt.spec, inputs=(partial,))),
    )
    with pytest.raises(TopologyValidationError, match="a PARTIAL_KEY grouping has no thrift form"):
        plan_to_topology(keyed)


def test_a_shell_serializer_other_than_the_configured_one_goes_to_json_conf() -> None:
    spout = ComponentDef(
        "words",
        True,
        ShellSpec(("node", "words.js"), "msgpack"),
        outputs=(StreamDef("default", ("w",)),),
    )
    topology = plan_to_topology(LogicalPlan("t", "t-1", (spout,)))
    conf = json.loads(topology.spouts["words"].common.json_conf)
    assert conf == {"topology.multilang.serializer": "msgpack"}
    assert topology_to_plan(topology, "t").component("words").spec == spout.spec
