"""Property: any valid topology built with TopologyBuilder survives the protobuf round trip."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heron_core.api import (
    Bolt,
    CustomGrouping,
    GlobalStreamId,
    Grouping,
    Spout,
    Stream,
    TopologyBuilder,
    TopologyContext,
    Tuple,
    shell_component,
)
from heron_core.plan import LogicalPlan
from heron_core.proto import topology_pb2


class AnySpout(Spout):
    def next_tuple(self) -> None:
        pass


class AnyBolt(Bolt):
    def process(self, tup: Tuple) -> None:
        self.ack(tup)


class PickGrouping(CustomGrouping):
    def __init__(self, index: int) -> None:
        self.index = index

    def prepare(
        self, context: TopologyContext, component: str, stream: str, target_tasks: list[int]
    ) -> None:
        self.tasks = target_tasks

    def choose_tasks(self, values: list[Any]) -> list[int]:
        return [self.tasks[self.index % len(self.tasks)]]


names = st.text(string.ascii_letters + string.digits + "-_", min_size=1, max_size=6).filter(
    lambda s: not s.startswith("__")
)
field_lists = st.lists(names, max_size=4, unique=True)
hashables = st.one_of(st.integers(), st.text(max_size=5), st.booleans())
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.binary(max_size=8),
)


def _containers(inner: st.SearchStrategy[Any], with_sets: bool) -> st.SearchStrategy[Any]:
    options = [
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=4), inner, max_size=3),
        st.dictionaries(st.integers(), inner, max_size=2),
    ]
    if with_sets:
        options += [st.frozensets(hashables, max_size=3), st.sets(hashables, max_size=3)]
    return st.one_of(options)


# Config values, JSON-shaped or not (those are pickled). Sets are left out where bytes are
# compared: a pickled set lists its items in iteration order, which depends on how the set
# was built, so the codec's bytes for a set may change on every decode/encode cycle.
values = st.recursive(scalars, lambda inner: _containers(inner, True), max_leaves=6)
values_without_sets = st.recursive(scalars, lambda inner: _containers(inner, False), max_leaves=6)


@st.composite
def streams(draw: st.DrawFn) -> list[str | Stream]:
    outputs: list[str | Stream] = list(draw(field_lists))  # the default stream's fields
    for stream_id in draw(
        st.lists(names.filter(lambda s: s != "default"), max_size=2, unique=True)
    ):
        outputs.append(Stream(draw(field_lists), name=stream_id, direct=draw(st.booleans())))
    return outputs


def _stream_fields(outputs: list[str | Stream]) -> dict[str, tuple[tuple[str, ...], bool]]:
    declared = {s.stream_id: (s.fields, s.direct) for s in outputs if isinstance(s, Stream)}
    default = tuple(o for o in outputs if isinstance(o, str))
    if default:
        declared["default"] = (default, False)
    return declared


@st.composite
def builders(draw: st.DrawFn, values: st.SearchStrategy[Any]) -> TopologyBuilder:
    configs = st.dictionaries(st.text(max_size=12), values, max_size=4)
    n_spouts = draw(st.integers(1, 3))
    n_bolts = draw(st.integers(0, 4))
    component_names = draw(
        st.lists(names, min_size=n_spouts + n_bolts, max_size=n_spouts + n_bolts, unique=True)
    )
    builder = TopologyBuilder(draw(names))
    builder.set_config(draw(configs))
    declared: dict[str, dict[str, tuple[tuple[str, ...], bool]]] = {}
    for index, name in enumerate(component_names):
        is_spout = index < n_spouts
        outputs = draw(streams())
        if is_spout and not outputs:
            outputs = ["x"]
        declared[name] = _stream_fields(outputs)
        how = draw(st.sampled_from(["class", "instance", "shell"]))
        common: dict[str, Any] = {"par": draw(st.integers(1, 16)), "config": draw(configs)}
        component: Any
        if how == "shell":
            command = draw(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=3))
            serializer = draw(st.sampled_from(["json", "msgpack"]))
            component = shell_component(command, outputs, serializer)
        elif how == "instance":
            component = AnySpout() if is_spout else AnyBolt()
            component.state = draw(values)
            component.outputs = outputs
        else:
            component = AnySpout if is_spout else AnyBolt
            common["optional_outputs"] = outputs
        if is_spout:
            builder.add_spout(name, component, **common)
            continue
        sources = [(c, s) for c in declared for s in declared[c]]
        chosen = draw(st.lists(st.sampled_from(sources), min_size=1, max_size=3, unique=True))
        inputs = {GlobalStreamId(c, s): draw(groupings(*declared[c][s])) for c, s in chosen}
        builder.add_bolt(name, component, inputs=inputs, **common)
    return builder


@st.composite
def groupings(draw: st.DrawFn, fields: tuple[str, ...], direct: bool) -> Grouping:
    if direct:
        return Grouping.DIRECT
    options = [Grouping.SHUFFLE, Grouping.ALL, Grouping.LOWEST, Grouping.NONE]
    options.append(Grouping.LOCAL_OR_SHUFFLE)
    options.append(Grouping.custom(PickGrouping(draw(st.integers(0, 9)))))
    if fields:
        keys = draw(st.lists(st.sampled_from(fields), min_size=1, unique=True))
        options += [Grouping.fields(*keys), Grouping.partial_key(*keys)]
    return draw(st.sampled_from(options))


def _round_trip(plan: LogicalPlan) -> tuple[LogicalPlan, bytes]:
    data = plan.to_proto().SerializeToString()
    return LogicalPlan.from_proto(topology_pb2.Topology.FromString(data)), data


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(builders(values))
def test_built_plans_round_trip_to_equal_plans(builder: TopologyBuilder) -> None:
    plan = builder.build()
    decoded, _ = _round_trip(plan)
    assert decoded == plan
    decoded.validate()
    assert _round_trip(decoded)[0] == plan


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(builders(values_without_sets))
def test_built_plans_serialize_to_identical_bytes(builder: TopologyBuilder) -> None:
    plan = builder.build()
    decoded, data = _round_trip(plan)
    again, data_again = _round_trip(decoded)
    assert again == decoded == plan
    assert data_again == data
