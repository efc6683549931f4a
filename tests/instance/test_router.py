"""The router: batching per destination, and clear errors for bad emits."""

from __future__ import annotations

import marshal
import pickle
from collections import namedtuple
from typing import Any

import pytest
from instance_support import physical_plan

from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder, Tuple
from heron_core.errors import UserCodeError
from heron_core.instance._acking import AckSender
from heron_core.instance._anchoring import Acker
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._router import DEFAULT_VALUES, GENERAL, ONE, SILENT, Router
from heron_core.instance._values import ValuePolicy
from heron_core.proto import tuple_pb2


class Src(Spout):
    outputs = [
        Stream(["word"]),
        Stream(["a", "b"], name="pairs"),
        Stream(["x"], name="d", direct=True),
        Stream(["y", "z"], name="unheard"),
    ]


class Sink(Bolt):
    def process(self, tup: Any) -> None:
        pass


class FakeClient:
    def __init__(self) -> None:
        self.sent: list[tuple[int, tuple_pb2.TupleBatch]] = []

    def send_data(self, task: int, batch: bytes) -> None:
        self.sent.append((task, tuple_pb2.TupleBatch.FromString(batch)))


def make(
    batch_max: int = 3, acking: bool = False, values: ValuePolicy = DEFAULT_VALUES
) -> tuple[Router, FakeClient]:
    b = TopologyBuilder("t")
    src = b.add_spout("src", Src, par=1)
    b.add_bolt("fields", Sink, par=2, inputs={src: Grouping.fields("word")})
    b.add_bolt("pairs", Sink, par=1, inputs={src["pairs"]: Grouping.ALL})
    b.add_bolt("direct", Sink, par=2, inputs={src["d"]: Grouping.DIRECT})
    client = FakeClient()
    view = physical_plan(b.build())
    router = Router(
        view, "src", 1, 1, client, batch_max, lambda *a: None, acking=acking, values=values
    )
    return router, client


def test_batches_are_sent_when_full_and_on_flush() -> None:
    router, client = make(batch_max=3)
    for _ in range(7):
        router.emit(["same"])
    assert [b.count for _, b in client.sent] == [3, 3]
    router.flush()
    assert [b.count for _, b in client.sent] == [3, 3, 1]
    task, batch = client.sent[0]
    assert batch.dest_task == task and batch.src_task == 1 and batch.stream == "default"
    assert batch.serializer == tuple_pb2.MARSHAL
    assert marshal.loads(batch.values) == [["same"]] * 3
    assert router.emit_counts()["default"] == 7


def test_emit_returns_the_destinations() -> None:
    router, _ = make()
    assert router.emit(["a", 1], stream="pairs") == [4]
    assert router.emit(["x"], stream="d", direct_task=6) == [6]
    assert router.emit(["w"]) in ([2], [3])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": ["a"], "stream": "nope"}, "does not declare.*declared streams"),
        (
            {"values": ["a", "b", "c"], "stream": "pairs"},
            r"Tuple created with wrong number of fields\. Expected 2 fields but got 3 fields "
            r"\(stream 'pairs' declares \['a', 'b'\], the emit gave \['a', 'b', 'c'\]\)",
        ),
        ({"values": "abc"}, "needs a list or tuple"),
        ({"values": ["a"], "direct_task": 5}, "not declared direct"),
        ({"values": ["x"], "stream": "d"}, "is direct: emit with a direct task"),
        ({"values": ["x"], "stream": "d", "direct_task": 2}, "subscribed with a direct grouping"),
    ],
)
def test_bad_emits_name_topology_component_and_stream(kwargs: dict[str, Any], message: str) -> None:
    router, _ = make()
    values = kwargs.pop("values")
    with pytest.raises(UserCodeError, match=message) as info:
        router.emit(values, **kwargs)
    assert "topology 't', component 'src', task 1" in str(info.value)
    assert isinstance(info.value, TypeError) == (message == "needs a list or tuple")


def test_values_of_any_number_on_a_stream_nobody_subscribes_to_are_only_counted() -> None:
    # Storm checks the number of values when it builds a tuple for a target task: a stream
    # without subscribers builds none, so topologies that emit loosely there run on Storm.
    router, client = make()
    assert router.emit(["only one"], stream="unheard") == []
    assert router.emit(["one", "two", "three"], stream="unheard") == []
    router.flush()
    assert client.sent == [] and router.emit_counts()["unheard"] == 2
    with pytest.raises(UserCodeError, match="needs a list or tuple"):
        router.emit("not values", stream="unheard")  # not values at all is still an error


def test_anchors_are_looked_at_only_for_an_emit_that_reaches_a_task() -> None:
    # Storm's executor walks an emit's anchors once per receiving task: an emit on a stream
    # nobody subscribes to never looks at them (no error, no warning, no edge).
    router, client = make(acking=True)
    warnings: list[str] = []
    collector = BoltCollector(router, Acker(AckSender(client), "here", warnings.append))  # type: ignore[arg-type]
    settled = Tuple(None, "src", "default", 1, ["w"])
    settled._roots, settled._ackval = ((1, 7, 5),), None
    live = Tuple(None, "src", "default", 1, ["w"])
    live._roots, live._ackval = ((1, 8, 6),), 0
    collector.emit(["y", "z"], "unheard", anchors=["not a tuple"])
    collector.emit(["y", "z"], "unheard", anchors=[settled, live])
    assert warnings == [] and live._ackval == 0
    collector.emit(["w"], "default", anchors=[settled, live])  # one task: one edge
    assert len(warnings) == 1 and "already acked or failed" in warnings[0]
    assert live._ackval != 0
    with pytest.raises(UserCodeError, match="anchors must be input Tuples of this bolt"):
        collector.emit(["w"], "default", anchors=["not a tuple"])
    before = live._ackval
    collector.emit(["a", "b"], "pairs", anchors=[live])  # ALL grouping, one task here
    assert live._ackval != before


def test_a_stream_with_one_consumer_task_per_tuple_gets_the_specialised_send() -> None:
    router, _ = make()
    words = router.routes["default"]
    # "pairs" goes to all tasks: the general send; "unheard" has no subscribers: it only counts
    assert words.choose is not None and words.key_index == 0
    assert words.kind == ONE
    assert router.routes["pairs"].kind == GENERAL
    assert router.routes["unheard"].kind == SILENT
    tasks = words.send(["hello"], None)
    assert tasks is not None and words.cache == {"hello": tasks[0]}  # the grouping's memo
    assert words.send(["hello"], None, need=False) is None  # no list unless asked for
    assert router.routes["unheard"].send(["y", "z"], None, need=False) is None


Pair = namedtuple("Pair", "a b")


def test_a_value_marshal_refuses_switches_the_stream_to_pickle_for_good() -> None:
    router, client = make(batch_max=2, values=ValuePolicy([Pair]))  # Pair is registered
    router.emit(["a", (1, 2.5, None, b"x", {"k": [True]})], stream="pairs")
    router.emit(["b", Pair(1, 2)], stream="pairs")  # a tuple subclass: marshal would lose it
    router.emit(["c", 3], stream="pairs")
    router.flush()
    first, second = (batch for _, batch in client.sent)
    assert first.serializer == tuple_pb2.PICKLE and second.serializer == tuple_pb2.PICKLE
    rows = pickle.loads(first.values)
    assert rows == [["a", (1, 2.5, None, b"x", {"k": [True]})], ["b", Pair(1, 2)]]
    assert type(rows[1][1]) is Pair
    assert pickle.loads(second.values) == [["c", 3]]
