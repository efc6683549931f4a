"""A basic bolt's collector over an instance's collector: ``emit(values)`` goes straight to the
kernel (heron_core.instance._bolt.InputAnchored, compiled), anchored to the input being
executed; every other call takes the general path, with the same results as over any other
collector."""

from __future__ import annotations

from typing import Any

import pytest
from instance_support import SINK_TASK, bolt_collector

from heron_core.api import InputBatch, Stream
from heron_core.errors import HeronError
from storm_compat.task import OutputCollector
from storm_compat.topology import BasicOutputCollector, OutputFieldsDeclarer
from storm_compat.topology._adapters import BasicBoltAdapter
from storm_compat.topology.base import BaseBasicBolt
from storm_compat.tuple import Fields, Tuple, Values


def received(word: str, tree: tuple[int, int, int] | None = None) -> Tuple:
    tup = Tuple.of([word], Fields("line"), component="src", task=1)
    if tree is not None:
        tup._roots, tup._ackval = (tree,), 0
    return tup


def test_emit_with_values_only_is_the_kernel_s_compiled_emit() -> None:
    native, wire = bolt_collector(acking=False)
    basic = BasicOutputCollector(OutputCollector(native))
    assert basic.emit == basic._input.emit  # the kernel's, bound to the input's anchors
    basic.setContext(received("a b"))
    assert basic.emit(Values("a")) == [SINK_TASK]
    assert basic.emit("other", Values("b")) == [SINK_TASK]
    native.flush()
    assert sorted((stream, rows) for _, stream, rows, _ in wire.batches) == [
        ("default", [["a"]]),
        ("other", [["b"]]),
    ]


def test_every_other_call_gets_the_general_path_s_errors() -> None:
    native, _ = bolt_collector(acking=False)
    basic = BasicOutputCollector(OutputCollector(native))
    with pytest.raises(HeronError, match="outside execute"):
        basic.emit(Values("a"))
    basic.setContext(received("a"))
    with pytest.raises(TypeError, match=r"emit\(\) missing .*argument.*'first'"):
        basic.emit()  # Python's own error (compiled: mypyc's)
    with pytest.raises(TypeError, match=r"emit\(\[streamId,\] values\) got 3 arguments"):
        basic.emit("other", Values("x"), "extra")
    with pytest.raises(TypeError, match=r"got 2 arguments"):
        basic.emit(Values("x"), Values("y"))  # a stream id must be a str


class Logging(BasicOutputCollector):
    def emit(self, *args: Any) -> list[int]:
        self.seen = args
        return super().emit(*args)


def test_a_subclass_s_own_emit_and_debug_logging_keep_the_general_path() -> None:
    native, _ = bolt_collector(acking=False)
    mine = Logging(OutputCollector(native))
    mine.setContext(received("a"))
    assert mine.emit(Values("x")) == [SINK_TASK] and mine.seen == (["x"],)
    debug = BasicOutputCollector(OutputCollector(native, debug=True))
    assert "emit" not in vars(debug)


class Words(BaseBasicBolt):
    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        for word in input.getString(0).split():
            collector.emit(Values(word))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))


class Context:
    def get_output_fields(self, source: str, stream: str) -> list[str]:
        return ["line"]

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def test_each_input_s_emits_are_anchored_to_that_input_only() -> None:
    native, wire = bolt_collector(acking=True)
    adapter = BasicBoltAdapter(Words(), [Stream(["word"])])
    adapter._collector = native  # as the runtime sets it
    adapter.initialize({}, Context())  # type: ignore[arg-type]
    first, second = received("a b", (1, 111, 5)), received("c", (1, 222, 6))
    batch = InputBatch("src", "default", 1, [first.values, second.values], kind=Tuple)
    batch._tuples = [first, second]  # tracked inputs, as the runtime builds them
    adapter.process_batch(batch)
    native.flush()
    [(task, stream, rows, roots)] = wire.batches
    assert (task, stream, rows) == (SINK_TASK, "default", [["a"], ["b"], ["c"]])
    assert [[root for _, root, _ in anchors] for anchors in roots] == [[111], [111], [222]]
    assert first._ackval is None and second._ackval is None  # acked after execute
