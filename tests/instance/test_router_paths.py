"""The specialised and the general send of the router route, anchor and batch identically.

Two instances of the same task are built from the same random plan, with the same seeds for the
groupings and the edge ids: one with each stream's specialised send, one with the general send
on every stream. Random emits (spout emits with and without message ids; bolt emits anchored to
random inputs in random trees) must give the same destinations, the same batches with the same
anchors, the same pending values on the anchors and the same acking messages.
"""

from __future__ import annotations

import marshal
import random
from collections import deque
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from instance_support import copies, physical_plan

from heron_core.api import Bolt, CustomGrouping, Grouping, Spout, Stream, TopologyBuilder, Tuple
from heron_core.instance._acking import AckSender, InFlight
from heron_core.instance._anchoring import Acker, EdgeIds
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._plan import PlanView
from heron_core.instance._router import Router
from heron_core.instance._spout import SpoutCollector
from heron_core.proto import tuple_pb2


class Src(Spout):
    outputs = [Stream(["k", "v"]), Stream(["k"], name="side")]


class Mid(Bolt):
    outputs = [Stream(["k", "v"]), Stream(["k"], name="side")]

    def process(self, tup: Any) -> None:
        pass


class Sink(Bolt):
    def process(self, tup: Any) -> None:
        pass


class Everyone(CustomGrouping):
    """A custom grouping: every task whose index has the parity of the key's length."""

    def prepare(self, context: Any, component: str, stream: str, tasks: list[int]) -> None:
        self.tasks = sorted(tasks)

    def choose_tasks(self, values: list[Any]) -> list[int]:
        return [t for i, t in enumerate(self.tasks) if i % 2 == len(str(values[0])) % 2]


GROUPINGS = {
    "shuffle": lambda: Grouping.SHUFFLE,
    "fields": lambda: Grouping.fields("k"),
    "fields2": lambda: Grouping.fields("k", "v"),
    "all": lambda: Grouping.ALL,
    "lowest": lambda: Grouping.LOWEST,
    "local": lambda: Grouping.LOCAL_OR_SHUFFLE,
    "partial": lambda: Grouping.partial_key("k"),
    "custom": lambda: Grouping.custom(Everyone()),
}

consumer = st.tuples(st.sampled_from(sorted(GROUPINGS)), st.integers(1, 4), st.booleans())
plans = st.lists(consumer, min_size=0, max_size=3)


def pplan_of(consumers: list[tuple[str, int, bool]]) -> PlanView:
    """A plan: spout ``src`` and bolt ``mid`` (each 1 task), and one sink per consumer,
    subscribed to both on the default stream (or ``side``) with the given grouping."""
    b = TopologyBuilder("paths")
    src = b.add_spout("src", Src, par=1)
    mid = b.add_bolt("mid", Mid, par=1, inputs={src: Grouping.SHUFFLE})
    for i, (grouping, par, side) in enumerate(consumers):
        if side and grouping == "fields2":
            grouping = "fields"  # "side" has one field
        inputs = {
            (src["side"] if side else src): GROUPINGS[grouping](),
            (mid["side"] if side else mid): GROUPINGS[grouping](),
        }
        b.add_bolt(f"sink{i}", Sink, par=par, inputs=inputs)
    return physical_plan(b.build(), containers=2)


class Wire:
    """Records what an instance sends: data batches (decoded) and acking frames."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, str, list[Any], Any]] = []
        self.frames: list[Any] = []

    def send_data(self, task: int, batch: bytes) -> None:
        decoded = tuple_pb2.TupleBatch.FromString(batch)
        rows = marshal.loads(decoded.values) if decoded.serializer == tuple_pb2.MARSHAL else None
        roots = copies(decoded) if decoded.roots else None
        self.batches.append((task, decoded.stream, rows, roots))

    def send(self, frames: Any) -> None:
        self.frames.append(list(frames))


def build(
    plan: PlanView, component: str, task: int, acking: bool, specialise: bool, seed: int
) -> tuple[Router, Wire, Any, AckSender]:
    wire = Wire()
    router = Router(
        plan,
        component,
        task,
        plan.task_container[task],
        wire,
        batch_max=3,
        prepare_custom=lambda g, s, t: g.prepare(None, component, s, t),
        rng=random.Random(seed),
        acking=acking,
        specialise=specialise,
    )
    acks = AckSender(wire)  # type: ignore[arg-type]
    ids = EdgeIds(random.Random(seed + 1).getrandbits)
    collector: Any
    if component == "src":
        collector = SpoutCollector(router, acks, InFlight(lambda: 0.0), deque(), ids)
    else:
        collector = BoltCollector(router, Acker(acks, "here", lambda what: None, ids))
    return router, wire, collector, acks


keys = st.one_of(st.sampled_from(["a", "bb", "ccc", ""]), st.integers(-3, 3))
spout_emits = st.lists(
    st.tuples(st.booleans(), keys, st.integers(0, 5), st.one_of(st.none(), st.integers(0, 99))),
    max_size=25,
)
trees = st.lists(
    st.tuples(st.integers(1, 2), st.integers(1, (1 << 64) - 1)), min_size=1, max_size=3
)
bolt_emits = st.lists(
    st.tuples(st.booleans(), keys, st.integers(0, 5), st.lists(st.integers(0, 3), max_size=3)),
    max_size=25,
)


def values_of(side: bool, key: Any, v: int) -> list[Any]:
    return [key] if side else [key, v]


@settings(max_examples=150, deadline=None)
@given(plans, st.booleans(), st.integers(0, 1000), spout_emits)
def test_spout_emits_route_anchor_and_batch_the_same_on_both_paths(
    consumers: list[tuple[str, int, bool]],
    acking: bool,
    seed: int,
    emits: list[tuple[bool, Any, int, int | None]],
) -> None:
    plan = pplan_of(consumers)
    fast = build(plan, "src", 1, acking, True, seed)
    general = build(plan, "src", 1, acking, False, seed)
    for router, wire, collector, acks in (fast, general):
        results = []
        for side, key, v, msg_id in emits:
            stream = "side" if side else "default"
            results.append(collector.emit(values_of(side, key, v), msg_id, stream, None, True))
        router.flush()
        acks.flush()
        wire.results = results  # type: ignore[attr-defined]
    assert fast[1].results == general[1].results  # type: ignore[attr-defined]
    assert fast[1].batches == general[1].batches
    assert fast[1].frames == general[1].frames
    assert fast[0].emit_counts() == general[0].emit_counts()


@settings(max_examples=150, deadline=None)
@given(plans, st.booleans(), st.integers(0, 1000), trees, st.integers(1, 4), bolt_emits)
def test_bolt_emits_route_anchor_and_batch_the_same_on_both_paths(
    consumers: list[tuple[str, int, bool]],
    acking: bool,
    seed: int,
    input_trees: list[tuple[int, int]],
    inputs: int,
    emits: list[tuple[bool, Any, int, list[int]]],
) -> None:
    plan = pplan_of(consumers)
    task = plan.component_tasks["mid"][0]
    outcomes = []
    for router, wire, collector, acks in (
        build(plan, "mid", task, acking, True, seed),
        build(plan, "mid", task, acking, False, seed),
    ):
        received = []
        for i in range(inputs):  # input i belongs to the trees at i, i+1, ... (mod the count)
            tup = Tuple(None, "src", "default", 1, ["x", i])
            tup._roots = [(*input_trees[(i + j) % len(input_trees)], 7) for j in range(i % 3)]
            received.append(tup)
        results = []
        for side, key, v, anchor_indices in emits:
            stream = "side" if side else "default"
            anchors = [received[i % inputs] for i in anchor_indices]
            results.append(collector.emit(values_of(side, key, v), stream, anchors, None, True))
        for tup in received[::2]:
            collector.ack(tup)
        for tup in received[1::2]:
            collector.fail(tup)
        router.flush()
        acks.flush()
        outcomes.append(
            (
                results,
                wire.batches,
                wire.frames,
                [t._ackval for t in received],
                router.emit_counts(),
            )
        )
    assert outcomes[0] == outcomes[1]
