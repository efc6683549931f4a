"""Storm's collectors translate every overload into the kernel's collector calls."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from storm_support import FakeBoltCollector, FakeSpoutCollector, ResettingBoltCollector

from heron_core.errors import HeronError
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector
from storm_compat.topology import BasicOutputCollector
from storm_compat.tuple import Fields, Tuple, Values

WHERE = "topology 't', component 'bolt', task 3"


def received(*values: Any) -> Tuple:
    return Tuple.of(list(values), Fields([f"f{i}" for i in range(len(values))]))


def tick() -> Tuple:
    return Tuple.of([1], Fields("rate_secs"), component="__system", stream="__tick", task=-1)


def test_bolt_emit_overloads() -> None:
    native = FakeBoltCollector(task_ids=[4, 6])
    out = OutputCollector(native, WHERE)
    a, b = received("a"), received("b")
    assert out.emit(Values("x")) == [4, 6]
    out.emit("s", Values("x"))
    out.emit(a, Values("x"))
    out.emit([a, b], Values("x"))
    out.emit("s", a, Values("x"))
    out.emit("s", (b,), Values("x"))
    out.emit([tick(), a], Values("x"))  # ticks belong to no tree
    out.emitDirect(9, Values("x"))
    out.emitDirect(9, "s", [a], Values("x"))
    assert native.calls == [
        ("emit", ["x"], "default", None, None, True),
        ("emit", ["x"], "s", None, None, True),
        ("emit", ["x"], "default", [["a"]], None, True),
        ("emit", ["x"], "default", [["a"], ["b"]], None, True),
        ("emit", ["x"], "s", [["a"]], None, True),
        ("emit", ["x"], "s", [["b"]], None, True),
        ("emit", ["x"], "default", [["a"]], None, True),
        ("emit", ["x"], "default", None, 9, False),
        ("emit", ["x"], "s", [["a"]], 9, False),
    ]


def test_bolt_emit_argument_errors_name_the_task() -> None:
    out = OutputCollector(FakeBoltCollector(), WHERE)
    with pytest.raises(TypeError, match=f"{WHERE}: emit.* got 0 arguments"):
        out.emit()
    with pytest.raises(TypeError, match=f"{WHERE}: anchors must be Tuples"):
        out.emit(["not a tuple"], Values("x"))
    with pytest.raises(TypeError, match="got 4 arguments"):
        out.emit("s", received("a"), Values("x"), "extra")


def test_ack_and_fail_once_each_and_ignore_a_second_time_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    native = FakeBoltCollector()
    out = OutputCollector(native, WHERE)
    a, b = received("a"), received("b")
    out.ack(a)
    out.fail(b)
    with caplog.at_level(logging.WARNING):
        out.ack(a)
        out.fail(a)
        out.ack(b)
    assert native.calls == [("ack", ["a"]), ("fail", ["b"])]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3
    assert all(w.startswith(f"{WHERE}: ") and "already acked or failed" in w for w in warnings)
    assert "ack of a tuple" in warnings[0] and "fail of a tuple" in warnings[1]


def test_tick_tuples_are_not_acked_in_the_kernel() -> None:
    native = FakeBoltCollector()
    OutputCollector(native).ack(tick())
    assert native.calls == []


def test_reset_timeout_needs_a_kernel_that_can() -> None:
    with pytest.raises(HeronError, match=f"{WHERE}: resetTimeout needs at-least-once acking"):
        OutputCollector(FakeBoltCollector(), WHERE).resetTimeout(received("a"))
    native = ResettingBoltCollector()
    OutputCollector(native).resetTimeout(received("a"))
    assert native.calls == [("reset", ["a"])]


def test_report_error_logs_the_error_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise ValueError("bad record")
    except ValueError as exc:
        OutputCollector(FakeBoltCollector(), WHERE).reportError(exc)
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == f"{WHERE}: reported error: ValueError('bad record')"
    assert record.exc_info is not None and record.exc_info[1] is not None


def test_debug_logs_every_emit_and_ack(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    out = OutputCollector(FakeBoltCollector(), WHERE, debug=True)
    out.emit(Values("x"))
    out.ack(received("a"))
    spout = SpoutOutputCollector(FakeSpoutCollector(), WHERE, debug=True)
    spout.emit(Values("y"), 7)
    assert caplog.messages == [
        f"{WHERE}: Emitting: default ['x']",
        f"{WHERE}: BOLT ack TUPLE: source: component:1, stream: default, id: None, ['a']",
        f"{WHERE}: Emitting: default ['y'] 7",
    ]
    quiet = OutputCollector(FakeBoltCollector(), WHERE)
    caplog.clear()
    quiet.emit(Values("x"))
    assert caplog.messages == []


def test_spout_emit_overloads() -> None:
    native = FakeSpoutCollector()
    out = SpoutOutputCollector(native, WHERE)
    assert out.emit(Values("a")) == [2, 4]
    out.emit(Values("a"), "id-1")
    out.emit("s", Values("a"))
    out.emit("s", Values("a"), ("id", 2))
    out.emitDirect(3, Values("a"))
    out.emitDirect(3, Values("a"), "id-2")
    out.emitDirect(3, "s", Values("a"))
    out.emitDirect(3, "s", Values("a"), "id-3")
    assert native.calls == [
        (["a"], None, "default", None, True),
        (["a"], "id-1", "default", None, True),
        (["a"], None, "s", None, True),
        (["a"], ("id", 2), "s", None, True),
        (["a"], None, "default", 3, False),
        (["a"], "id-2", "default", 3, False),
        (["a"], None, "s", 3, False),
        (["a"], "id-3", "s", 3, False),
    ]
    with pytest.raises(TypeError, match=f"{WHERE}: emit.* got 4 arguments"):
        out.emit("s", Values("a"), 1, 2)


def test_basic_collector_anchors_every_emit_to_the_input() -> None:
    native = FakeBoltCollector()
    basic = BasicOutputCollector(OutputCollector(native, WHERE))
    with pytest.raises(HeronError, match="outside execute"):
        basic.emit(Values("x"))
    basic.setContext(received("in"))
    assert basic.emit(Values("x")) == [5]
    basic.emit("s", Values("y"))
    basic.emitDirect(8, Values("z"))
    basic.emitDirect(8, "s", Values("w"))
    assert native.calls == [
        ("emit", ["x"], "default", [["in"]], None, True),
        ("emit", ["y"], "s", [["in"]], None, True),
        ("emit", ["z"], "default", [["in"]], 8, False),
        ("emit", ["w"], "s", [["in"]], 8, False),
    ]
    assert basic.getOutputter() is basic.out
    with pytest.raises(TypeError, match=r"emit\(\[streamId,\] values\) got 3 arguments"):
        basic.emit("s", Values("x"), "extra")


class RawBoltCollector(FakeBoltCollector):
    """Keeps the values objects the kernel receives, as received."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: list[Any] = []

    def emit(self, tup: Any, *rest: Any) -> list[int] | None:
        self.raw.append(tup)
        return super().emit(tup, *rest)


def test_the_kernel_gets_plain_lists_for_values() -> None:
    native = RawBoltCollector()
    out = OutputCollector(native, WHERE)
    a = received("a")
    out.emit(Values("x"))
    out.emit(a, Values("y"))
    out.emit("s", a, Values("z"))
    basic = BasicOutputCollector(out)
    basic.setContext(a)
    basic.emit(Values("w"))
    out.emitDirect(9, Values("u"))
    assert [type(v) for v in native.raw] == [list] * 5
    assert native.raw == [["x"], ["y"], ["z"], ["w"], ["u"]]


def test_a_basic_collector_in_a_tick_emits_unanchored() -> None:
    native = FakeBoltCollector()
    basic = BasicOutputCollector(OutputCollector(native, WHERE))
    basic.setContext(tick())
    basic.emit(Values("x"))
    basic.setContext(received("in"))
    basic.emit(Values("y"))
    assert native.calls == [
        ("emit", ["x"], "default", [], None, True),
        ("emit", ["y"], "default", [["in"]], None, True),
    ]


def test_a_debug_basic_collector_logs_every_emit(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    basic = BasicOutputCollector(OutputCollector(FakeBoltCollector(), WHERE, debug=True))
    basic.setContext(received("in"))
    basic.emit(Values("x"))
    assert caplog.messages == [f"{WHERE}: Emitting: default ['x']"]


def test_anchoring_to_a_tick_in_the_two_argument_emit_leaves_it_out() -> None:
    native = FakeBoltCollector()
    OutputCollector(native, WHERE).emit(tick(), Values("x"))
    assert native.calls == [("emit", ["x"], "default", [], None, True)]
