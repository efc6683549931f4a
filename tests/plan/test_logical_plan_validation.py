"""Every rule of LogicalPlan.validate, each naming the topology and the component at fault."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

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
)

G = GroupingKind
SPEC = PythonSpec("app.mod:Thing")


def spout(
    name: str = "src", *streams: StreamDef, spec: object = SPEC, **kw: object
) -> ComponentDef:
    outputs = streams or (StreamDef("default", ("word", "n")), StreamDef("direct", ("x",), True))
    return ComponentDef(name, True, spec, outputs=outputs, **kw)  # type: ignore[arg-type]


def bolt(name: str = "sink", *inputs: InputDef, **kw: object) -> ComponentDef:
    inputs = inputs or (InputDef("src", "default", G.SHUFFLE),)
    return ComponentDef(name, False, SPEC, inputs=inputs, **kw)  # type: ignore[arg-type]


def plan(*components: ComponentDef, name: str = "topo", config: object = None) -> LogicalPlan:
    return LogicalPlan(name, "topo-1", components or (spout(), bolt()), config or {})  # type: ignore[arg-type]


def test_the_base_plan_is_valid() -> None:
    plan().validate()
    plan(spout(), bolt("d", InputDef("src", "direct", G.DIRECT))).validate()
    plan(spout(), bolt("c", InputDef("src", "default", G.CUSTOM, custom=b"x"))).validate()
    plan(spout(), bolt("b", InputDef("b", "default", G.ALL), outputs=(StreamDef("default"),)),
         bolt("s")).validate()  # fmt: skip


CASES: dict[str, tuple[Callable[[], LogicalPlan], str | None, list[str]]] = {
    "no spout": (lambda: plan(bolt()), None, ["no spout"]),
    "duplicate component": (lambda: plan(spout(), bolt("src")), "src", ["defined twice"]),
    "bolt without inputs": (
        lambda: plan(spout(), ComponentDef("sink", False, SPEC)),
        "sink",
        ["bolt has no inputs"],
    ),
    "spout with inputs": (
        lambda: plan(spout(inputs=(InputDef("src", "default", G.SHUFFLE),))),
        "src",
        ["a spout cannot have inputs"],
    ),
    "unknown source": (
        lambda: plan(spout(), bolt("sink", InputDef("nope", "default", G.SHUFFLE))),
        "sink",
        ["unknown component 'nope'", "components: src, sink"],
    ),
    "undeclared stream": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "other", G.SHUFFLE))),
        "sink",
        ["stream 'other'", "does not declare", "declared streams: default, direct"],
    ),
    "fields on undeclared field": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", G.FIELDS, ("word", "w")))),
        "sink",
        ["FIELDS grouping on field 'w'", "declared fields: word, n"],
    ),
    "partial key on undeclared field": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", G.PARTIAL_KEY, ("z",)))),
        "sink",
        ["PARTIAL_KEY grouping on field 'z'", "declared fields: word, n"],
    ),
    "fields without fields": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", G.FIELDS))),
        "sink",
        ["needs key fields"],
    ),
    "fields on a shuffle": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", G.SHUFFLE, ("word",)))),
        "sink",
        ["SHUFFLE grouping takes no fields"],
    ),
    "custom without object": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", G.CUSTOM))),
        "sink",
        ["CUSTOM grouping without a pickled grouping"],
    ),
    "object without custom": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", G.ALL, custom=b"x"))),
        "sink",
        ["only CUSTOM groupings carry a pickled grouping"],
    ),
    "not a grouping kind": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", 1))),  # type: ignore[arg-type]
        "sink",
        ["must be a GroupingKind"],
    ),
    "direct on a plain stream": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "default", G.DIRECT))),
        "sink",
        ["DIRECT grouping on 'src' stream 'default'", "not declared direct"],
    ),
    "shuffle on a direct stream": (
        lambda: plan(spout(), bolt("sink", InputDef("src", "direct", G.SHUFFLE))),
        "sink",
        ["SHUFFLE grouping on 'src' stream 'direct'", "only DIRECT may subscribe"],
    ),
    "duplicate subscription": (
        lambda: plan(
            spout(),
            bolt(
                "sink",
                InputDef("src", "default", G.SHUFFLE),
                InputDef("src", "default", G.FIELDS, ("n",)),
            ),
        ),
        "sink",
        ["subscribes twice to 'src' stream 'default'"],
    ),
    "stream declared twice": (
        lambda: plan(
            spout("src", StreamDef("default", ("a",)), StreamDef("default", ("b",))), bolt()
        ),
        "src",
        ["output stream 'default' declared twice"],
    ),
    "reserved stream": (
        lambda: plan(spout("src", StreamDef("default"), StreamDef("__tick")), bolt()),
        "src",
        ["stream ids must be non-empty str not starting with '__'", "'__tick'"],
    ),
    "empty stream id": (
        lambda: plan(spout("src", StreamDef("default"), StreamDef("")), bolt()),
        "src",
        ["stream ids must be non-empty"],
    ),
    "field declared twice": (
        lambda: plan(spout("src", StreamDef("default", ("a", "a"))), bolt()),
        "src",
        ["declares a field twice"],
    ),
    "empty field name": (
        lambda: plan(spout("src", StreamDef("default", ("a", ""))), bolt()),
        "src",
        ["field names must be non-empty str"],
    ),
    "empty component name": (
        lambda: plan(spout(), bolt("")),
        "",
        ["component names must be non-empty"],
    ),
    "reserved component name": (
        lambda: plan(spout(), bolt("__system")),
        "__system",
        ["not starting with '__'"],
    ),
    "parallelism zero": (lambda: plan(spout(parallelism=0), bolt()), "src", ["got 0"]),
    "parallelism str": (lambda: plan(spout(), bolt(parallelism="2")), "sink", ["got '2'"]),
    "parallelism bool": (lambda: plan(spout(), bolt(parallelism=True)), "sink", ["got True"]),
    "bad class path": (
        lambda: plan(spout(spec=PythonSpec("NoColon")), bolt()),
        "src",
        ["'package.module:QualName'", "'NoColon'"],
    ),
    "empty shell command": (
        lambda: plan(spout(spec=ShellSpec(())), bolt()),
        "src",
        ["non-empty argv"],
    ),
    "bad shell serializer": (
        lambda: plan(spout(spec=ShellSpec(("x",), "xml")), bolt()),
        "src",
        ["json, msgpack", "'xml'"],
    ),
    "not a spec": (
        lambda: plan(spout(spec="app:Thing"), bolt()),
        "src",
        ["PythonSpec or ShellSpec"],
    ),
    "component config key": (
        lambda: plan(spout(config_items={1: "x"}), bolt()),
        "src",
        ["config keys must be str, got 1"],
    ),
    "topology config key": (lambda: plan(config={("a",): 1}), None, ["config keys must be str"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_validation_error_names_topology_and_component(case: str) -> None:
    make, component, fragments = CASES[case]
    with pytest.raises(TopologyValidationError) as info:
        make().validate()
    error = info.value
    assert error.topology == "topo"
    assert error.component == component
    message = str(error)
    assert message.startswith("topology 'topo'")
    if component is not None:
        assert f"component {component!r}" in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize("name", ["", "a.b", "a/b"])
def test_topology_names_are_checked(name: str) -> None:
    with pytest.raises(TopologyValidationError, match="topology names must be non-empty") as info:
        dataclasses.replace(plan(), name=name).validate()
    assert info.value.topology == name
