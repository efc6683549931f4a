"""``Bolt.emit_many``: the rows of one call go where, and with the anchors, that one emit per
row would give them; errors name the topology, component and stream."""

from __future__ import annotations

import marshal
import pickle
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from instance_support import copies, physical_plan

from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder, Tuple
from heron_core.errors import EmitTypeError, HeronError, UserCodeError
from heron_core.instance._acking import AckSender
from heron_core.instance._anchoring import Acker, EdgeIds
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._router import Router
from heron_core.proto import tuple_pb2


class Src(Spout):
    outputs = ["line"]


class Middle(Bolt):
    outputs = [
        Stream(["word"]),
        Stream(["a", "b"], name="pairs"),
        Stream(["x"], name="d", direct=True),
        Stream(["y"], name="unheard"),
    ]


class Sink(Bolt):
    pass


class Wire:
    def __init__(self) -> None:
        self.sent: list[tuple[int, bytes]] = []

    def send_data(self, task: int, batch: bytes) -> None:
        self.sent.append((task, batch))

    def send(self, frames: Any) -> None:
        pass


def collector(acking: bool, seed: int = 0) -> tuple[BoltCollector, Wire]:
    """Task 2 of src -> bolt -> {fields (2 tasks), pairs (ALL, 2 tasks), direct (2 tasks)}."""
    b = TopologyBuilder("t")
    src = b.add_spout("src", Src, par=1)
    bolt = b.add_bolt("bolt", Middle, par=1, inputs={src: Grouping.SHUFFLE})
    b.add_bolt("fields", Sink, par=2, inputs={bolt: Grouping.fields("word")})
    b.add_bolt("pairs", Sink, par=2, inputs={bolt["pairs"]: Grouping.ALL})
    b.add_bolt("direct", Sink, par=2, inputs={bolt["d"]: Grouping.DIRECT})
    wire = Wire()
    router = Router(
        physical_plan(b.build()),
        "bolt",
        2,
        1,
        wire,
        4,
        lambda *a: None,
        rng=random.Random(seed),
        acking=acking,
    )
    ids = EdgeIds(random.Random(seed).getrandbits)
    acker = Acker(AckSender(wire), "bolt", lambda what: None, ids)  # type: ignore[arg-type]
    return BoltCollector(router, acker), wire


def decoded_batches(sent: list[tuple[int, bytes]]) -> list[tuple[int, str, Any, Any]]:
    """(task, stream, rows, anchors) of each batch sent."""
    out = []
    for task, data in sent:
        batch = tuple_pb2.TupleBatch.FromString(data)
        load = marshal.loads if batch.serializer == tuple_pb2.MARSHAL else pickle.loads
        roots = copies(batch) if batch.roots else None
        out.append((task, batch.stream, load(batch.values), roots))
    return out


def inputs(trees: list[int]) -> list[Tuple]:
    """Received tuples, one per entry of ``trees`` (its root key; 0: no tree)."""
    made = []
    for root in trees:
        tup = Tuple(None, "src", "default", 1, ["line"])
        tup._roots = ((1, root, 99),) if root else ()
        tup._ackval = 0
        made.append(tup)
    return made


STREAMS = {"default": 1, "pairs": 2, "unheard": 1}

calls = st.lists(
    st.tuples(
        st.sampled_from(sorted(STREAMS)),
        st.lists(st.text(max_size=3), max_size=6),  # the words of each row's values
        st.lists(st.integers(0, 3), max_size=2),  # which inputs anchor the call's rows
    ),
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(calls=calls, acking=st.booleans(), trees=st.lists(st.integers(0, 5), min_size=4, max_size=4))
def test_emit_many_sends_what_one_emit_per_row_sends(
    calls: list[tuple[str, list[str], list[int]]], acking: bool, trees: list[int]
) -> None:
    many, many_wire = collector(acking)
    one, one_wire = collector(acking)
    many_inputs, one_inputs = inputs(trees), inputs(trees)
    for stream, words, anchored in calls:
        rows = [[word] * STREAMS[stream] for word in words]
        many.emit_many(rows, stream, [many_inputs[i] for i in anchored])
        for row in rows:
            one.emit(row, stream, [one_inputs[i] for i in anchored], None, False)
    many.flush()
    one.flush()
    assert decoded_batches(many_wire.sent) == decoded_batches(one_wire.sent)
    assert [t._ackval for t in many_inputs] == [t._ackval for t in one_inputs]
    assert many._router.emit_counts() == one._router.emit_counts()


def test_rows_are_any_iterable_of_rows() -> None:
    many, wire = collector(False)
    many.emit_many(iter([["a"], ("b",)]), "default", None)
    many.emit_many((["c"],), "default", None)
    many.flush()
    words = sorted(row[0] for batch in decoded_batches(wire.sent) for row in batch[2])
    assert words == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("rows", "stream", "error", "message"),
    [
        (7, "default", EmitTypeError, "emit_many on stream 'default' needs a list"),
        ("ab", "default", EmitTypeError, "got str"),
        ([["a"]], "nope", UserCodeError, "emitted on stream 'nope'"),
        ([["a"]], "d", UserCodeError, "stream 'd' is direct"),
        ([["a"], "b"], "default", EmitTypeError, "needs a list or tuple of values, got str"),
        ([["a"], ["b", "c"]], "default", UserCodeError, "Expected 1 fields but got 2"),
    ],
)
def test_bad_rows_name_topology_component_and_stream(
    rows: Any, stream: str, error: type[Exception], message: str
) -> None:
    many, _ = collector(False)
    with pytest.raises(error) as raised:
        many.emit_many(rows, stream, None)
    assert "topology 't', component 'bolt', task 2" in str(raised.value)
    assert message in str(raised.value)


def test_an_error_stops_at_its_row_the_rows_before_it_are_sent() -> None:
    many, wire = collector(False)
    with pytest.raises(UserCodeError):
        many.emit_many([["a"], ["b"], ["c", "d"], ["e"]], "default", None)
    many.flush()
    assert sorted(row[0] for batch in decoded_batches(wire.sent) for row in batch[2]) == ["a", "b"]
    assert many._router.emit_counts()["default"] == 2


def test_task_hooks_see_each_row() -> None:
    many, _ = collector(False)
    seen: list[tuple[Any, str, list[int]]] = []
    many.hook_emits(lambda values, stream, tasks: seen.append((values, stream, tasks)))
    many.emit_many([["a", 1], ["b", 2]], "pairs", None)
    assert seen == [(["a", 1], "pairs", [5, 6]), (["b", 2], "pairs", [5, 6])]
    with pytest.raises(UserCodeError, match="emitted on stream 'nope'"):
        many.emit_many([], "nope", None)
    with pytest.raises(EmitTypeError, match="needs a list"):
        many.emit_many(3, "pairs", None)


def test_a_bolt_outside_a_topology_cannot_emit_many() -> None:
    with pytest.raises(HeronError, match="emit_many called outside a running topology"):
        Middle().emit_many([["a"]])
