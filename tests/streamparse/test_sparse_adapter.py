"""pystorm's component semantics through the in-process adapters (fake kernel side)."""

from __future__ import annotations

import logging
import pickle
import threading
import time
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

import pytest
from sparse_components import Recording
from sparse_support import FakeCollector, FakeContext, FakeSpoutCollector

from heron_core.api import GlobalStreamId, Grouping, InputBatch
from heron_core.api import Tuple as NativeTuple
from heron_core.errors import UserCodeError
from storm_compat.streamparse import PystormBoltAdapter, PystormSpoutAdapter

COMPONENTS = ("words", "echo")


def start_bolt(
    cls: str, config: dict[str, Any] | None = None
) -> tuple[PystormBoltAdapter, FakeCollector, FakeContext]:
    adapter = pickle.loads(pickle.dumps(PystormBoltAdapter(f"sparse_components.{cls}", COMPONENTS)))
    collector = FakeCollector()
    context = FakeContext(
        "echo",
        3,
        tasks={"words": [1], "echo": [3, 4]},
        fields={("words", "default"): ("word",), ("echo", "default"): ("word", "kind")},
        sources={GlobalStreamId("words", "default"): Grouping.fields("word")},
        targets={"default": {}},
    )
    adapter._collector = collector
    adapter.initialize({"topology.name": "t", **(config or {})}, context)
    return adapter, collector, context


def start_spout(cls: str) -> tuple[PystormSpoutAdapter, FakeSpoutCollector]:
    adapter = pickle.loads(
        pickle.dumps(PystormSpoutAdapter(f"sparse_components.{cls}", COMPONENTS))
    )
    collector = FakeSpoutCollector()
    context = FakeContext(
        "words",
        1,
        tasks={"words": [1], "echo": [3, 4]},
        fields={("words", "default"): ("word",)},
        targets={"default": {"echo": Grouping.SHUFFLE}},
    )
    adapter._collector = collector
    adapter.initialize({"topology.name": "t"}, context)
    return adapter, collector


def word(value: str) -> NativeTuple:
    return NativeTuple(None, "words", "default", 1, [value])


def tick() -> NativeTuple:
    return NativeTuple("__tick", "__system", "__tick", -1, [2.0])


def test_a_bolt_auto_anchors_auto_acks_and_gets_namedtuple_values() -> None:
    bolt, out, _ = start_bolt("EchoBolt")
    first, second = word("hi"), word("ho")
    bolt.process(first)
    bolt.process(second)
    assert out.emits == [
        (["hi", "WordsDefaultTuple"], "default", [first], None, False),
        (["ho", "WordsDefaultTuple"], "default", [second], None, False),
    ]
    assert out.acked == [first, second] and not out.failed


def test_initialize_gets_the_config_and_storms_handshake_context() -> None:
    start_bolt("EchoBolt", {"my.key": 1})
    [(_, conf, context)] = [c for c in Recording.calls if c[0] == "initialize"]
    assert conf["my.key"] == 1 and conf["topology.name"] == "t"
    assert context == {
        "taskid": 3,
        "componentid": "echo",
        "task->component": {"1": "words", "3": "echo", "4": "echo"},
        "streams": ["default"],
        "stream->outputfields": {"default": ["word", "kind"]},
        "stream->target->grouping": {"default": {}},
        "source->stream->grouping": {"words": {"default": {"type": "FIELDS", "fields": ["word"]}}},
        "source->stream->fields": {"words": {"default": ["word"]}},
    }


def test_an_exception_is_reported_fails_the_tuple_and_ends_the_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bolt, out, _ = start_bolt("EchoBolt")
    boom = word("boom")
    with pytest.raises(UserCodeError, match="EchoBolt raised ValueError") as raised:
        bolt.process(boom)
    assert isinstance(raised.value.__cause__, ValueError)
    assert out.failed == [boom] and not out.acked
    assert "Python ValueError raised while processing Tuple" in caplog.text


def test_without_auto_flags_the_bolt_acks_anchors_and_reports_itself(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bolt, out, context = start_bolt("ManualBolt")
    tup = word("hi")
    with caplog.at_level(logging.WARNING):
        bolt.process(tup)
    assert out.emits == [
        (["hi"], "default", [tup], None, False),
        (["hi"], "default", [], None, False),
        (["hi"], "default", [], None, True),
    ]
    assert ("ids", [7]) in Recording.calls and ("no ids", None) in Recording.calls
    assert out.acked == [tup]
    assert "a log line" in caplog.text
    assert context.metrics["seen"].get_value_and_reset() == 1
    bolt.process(word("boom"))  # exit_on_exception False, auto_fail False: reported only
    assert not out.failed and "Python ValueError raised" in caplog.text
    bolt.process(word("after"))
    assert out.emits[-1][0] == ["after"]


def test_an_unknown_or_repeated_ack_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    bolt, out, _ = start_bolt("ManualBolt")
    tup = word("hi")
    bolt.process(tup)
    bolt.component.ack("nope")
    bolt.component.fail("1")  # the id of the tuple acked already
    assert out.acked == [tup] and not out.failed
    assert "ack of 'nope', which is unknown" in caplog.text
    assert "fail of '1', which is unknown" in caplog.text


def test_overridden_emit_and_ack_take_pystorms_message_path() -> None:
    bolt, out, _ = start_bolt("OverridingBolt")
    tup = word("hi")
    bolt.process(tup)
    assert Recording.calls == [("emit", ["HI"]), ("ack", "1")]
    assert out.emits == [(["HI"], "default", [tup], None, False)] and out.acked == [tup]


def test_ticks_reach_process_tick_and_stay_in_the_bolt() -> None:
    bolt, out, _ = start_bolt("EchoBolt", {"topology.tick.tuple.freq.secs": 2})
    bolt.process_tick(tick())
    [(_, received)] = [c for c in Recording.calls if c[0] == "tick"]
    assert (received.component, received.stream, received.task, received.values) == (
        "__system",
        "__tick",
        -1,
        (2,),
    )
    assert not out.acked and not out.failed


def test_a_batching_bolt_flushes_every_second_tick_per_group_key() -> None:
    bolt, out, _ = start_bolt("GroupBatchingBolt")
    a1, a2, b1 = word("a"), word("a"), word("b")
    for tup in (a1, a2, b1):
        bolt.process(tup)
    bolt.process_tick(tick())
    assert not out.emits and not out.acked
    bolt.process_tick(tick())
    assert out.emits == [
        (["a", 2], "default", [a1, a2], None, False),
        (["b", 1], "default", [b1], None, False),
    ]
    assert out.acked == [a1, a2, b1]


def test_a_failing_batch_fails_every_pending_tuple() -> None:
    bolt, out, _ = start_bolt("GroupBatchingBolt")
    pending = [word("boom"), word("x"), word("boom")]
    for tup in pending:
        bolt.process(tup)
    bolt.process_tick(tick())
    with pytest.raises(UserCodeError, match="GroupBatchingBolt raised ValueError"):
        bolt.process_tick(tick())
    assert sorted(map(id, out.failed)) == sorted(map(id, pending)) and not out.acked


def test_a_tickless_batching_bolt_processes_batches_on_the_task_thread() -> None:
    bolt, out, _ = start_bolt("TimedBatchingBolt")
    received = [word("a"), word("b"), word("c")]
    for tup in received:
        bolt.process(tup)
    deadline = time.monotonic() + 30
    while not bolt._due:  # the timer thread marks the batches due; the next callback runs them
        assert time.monotonic() < deadline, "the batcher thread never marked the batch due"
        time.sleep(0.01)
    assert not out.emits
    bolt.process_tick(tick())
    assert Recording.calls == [("batch", threading.current_thread().name, 3)]
    assert out.emits == [([3], "default", received, None, False)]
    assert out.acked == received


def test_a_spout_emits_and_gets_activate_deactivate_ack_and_fail() -> None:
    spout, out = start_spout("CycleSpout")
    spout.next_tuple()
    spout.next_tuple()
    spout.deactivate()
    spout.activate()
    spout.ack("x")
    spout.fail("y")
    assert out.emits == [
        (["b"], None, "default", None, False),
        (["c"], None, "default", None, False),
    ]
    assert Recording.calls == [("deactivate",), ("activate",)]
    for _ in range(96):
        spout.next_tuple()
    with pytest.raises(UserCodeError, match="spout broke"):
        spout.next_tuple()


def test_a_reliable_spout_replays_failed_tuples_up_to_max_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spout, out = start_spout("NumberSpout")
    spout.component.limit = 2
    for _ in range(3):
        spout.next_tuple()
    assert [e[:2] for e in out.emits] == [(["n0"], "n0"), (["n1"], "n1")]
    spout.fail("n0")
    spout.fail("n0")
    assert [e[:2] for e in out.emits[2:]] == [(["n0"], "n0"), (["n0"], "n0")]
    with caplog.at_level(logging.INFO):
        spout.fail("n0")  # over max_fails (2): treated as acked
        spout.ack("n1")
    assert len(out.emits) == 4 and spout.component.unacked_tuples == {}
    assert "exceeded retry limit" in caplog.text and "acked n1" in caplog.text


def test_a_class_of_the_wrong_kind_is_a_user_code_error() -> None:
    with pytest.raises(UserCodeError, match="CycleSpout is not a pystorm Bolt subclass"):
        start_bolt("CycleSpout")
    with pytest.raises(UserCodeError, match=r"cannot load sparse_components\.Missing"):
        start_bolt("Missing")


def test_pystorm_log_path_sends_the_records_to_a_file(tmp_path: Path) -> None:
    bolt, _, _ = start_bolt(
        "EchoBolt", {"pystorm.log.path": str(tmp_path), "pystorm.log.file": "echo.log"}
    )
    root = logging.getLogger()
    handlers = [h for h in root.handlers if isinstance(h, RotatingFileHandler)]
    try:
        bolt.component.logger.info("to the file")
        assert "to the file" in (tmp_path / "echo.log").read_text()
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()


def test_inputs_kept_past_process_are_anchored_and_acked_later() -> None:
    bolt, out, _ = start_bolt("DeferBolt")
    first, second, third = word("a"), word("b"), word("c")
    for tup in (first, second, third):
        bolt.process(tup)
    assert out.emits == [
        (["b"], "default", [second, first], None, False),
        (["c"], "default", [third, second], None, False),
    ]
    assert out.acked == [first, second]
    assert list(bolt._pending.values()) == [third]


def test_current_tups_is_the_input_during_process_and_assignable_as_in_pystorm() -> None:
    bolt, out, _ = start_bolt("CurrentBolt")
    a, b, both = word("a"), word("b"), word("both")
    bolt.process(a)
    bolt.process_tick(tick())
    bolt.process(b)
    bolt.process(both)
    currents = [[t.values[0] for t in c[1]] for c in Recording.calls if c[0] == "current"]
    assert currents == [["a"], [2], ["b"], ["both"]]
    assert out.emits == [
        (["a"], "default", [a], None, False),
        (["b"], "default", [b], None, False),
        (["both"], "default", [both, b], None, False),
    ]
    assert out.acked == [a, b] and list(bolt._pending.values()) == [None, both]  # tick, "both"
    assert bolt.component._current_tups == []


def test_values_that_do_not_fit_the_fields_raise_as_in_pystorm() -> None:
    bolt, out, _ = start_bolt("EchoBolt")
    with pytest.raises(UserCodeError) as raised:
        bolt.process(NativeTuple(None, "words", "default", 1, ["a", "b"]))
    assert isinstance(raised.value.__cause__, TypeError) and not out.failed


def test_with_acking_off_emits_go_to_the_kernel_as_they_are_and_inputs_are_still_acked() -> None:
    bolt, out, _ = start_bolt("EchoBolt", {"topology.reliability.mode": "ATMOST_ONCE"})
    tup = word("hi")
    bolt.process(tup)
    assert out.emits == [(["hi", "WordsDefaultTuple"], "default", None, None, False)]
    assert out.acked == [tup]
    deferring, deferred, _ = start_bolt("DeferBolt", {"topology.acker.executors": 0})
    first, second = word("a"), word("b")
    deferring.process(first)
    deferring.process(second)
    # the explicit anchors (a pystorm Tuple and an id) reach the kernel, which ignores them
    ((values, stream, anchors, direct, need),) = deferred.emits
    assert (values, stream, direct, need) == (["b"], "default", None, False)
    assert [a if isinstance(a, str) else a.values for a in anchors] == [("b",), "1"]
    assert deferred.acked == [first]


OFF = {"topology.reliability.mode": "ATMOST_ONCE"}


def words(*values: str) -> InputBatch:
    return InputBatch("words", "default", 1, [[value] for value in values])


def test_with_acking_off_the_bolt_takes_whole_batches_and_counts_auto_acks_in_them() -> None:
    bolt, out, _ = start_bolt("EchoBolt", OFF)
    batch = words("hi", "ho")
    bolt.process_batch(batch)
    assert out.emits == [
        (["hi", "WordsDefaultTuple"], "default", None, None, False),
        (["ho", "WordsDefaultTuple"], "default", None, None, False),
    ]
    assert (batch.acked, batch.failed) == (2, 0) and not out.acked and not bolt._pending
    assert bolt.component._current_tups == []


def test_an_input_kept_past_its_batch_is_acked_later_through_a_tuple_built_from_the_batch() -> None:
    bolt, out, _ = start_bolt("DeferBolt", OFF)
    batch = words("a", "b", "c")
    bolt.process_batch(batch)
    assert [e[0] for e in out.emits] == [["b"], ["c"]]
    ((first, second),) = [out.acked]  # acked by the next input's process, through the kernel
    assert (first.values, second.values) == (["a"], ["b"]) and batch.acked == 0
    assert [(t.component, t.stream, t.task, t.values) for t in bolt._pending.values()] == [
        ("words", "default", 1, ["c"])
    ]
    assert bolt.component.previous.id == "3" and list(bolt._pending) == ["3"]
    bolt.process_tick(tick())  # ids go on from the batch's
    assert list(bolt._pending) == ["3", "4"]


def test_an_input_that_raises_in_a_batch_is_auto_failed_through_a_tuple_of_the_batch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bolt, out, _ = start_bolt("FailOnceBolt", OFF)
    batch = words("a", "a", "b")
    bolt.process_batch(batch)
    assert [t.values for t in out.failed] == [["a"], ["b"]] and not bolt._pending
    assert (batch.acked, batch.failed) == (1, 0) and [e[0] for e in out.emits] == [["a"]]
    assert caplog.text.count("Python ValueError raised while processing Tuple") == 2
    ending, ended, _ = start_bolt("EchoBolt", OFF)
    batch = words("x", "boom", "y")
    with pytest.raises(UserCodeError, match="EchoBolt raised ValueError"):
        ending.process_batch(batch)
    assert batch.acked == 1 and [t.values for t in ended.failed] == [["boom"]]
    assert [e[0][0] for e in ended.emits] == ["x"]


@pytest.mark.parametrize(("cls", "counts"), [("SelfAckBolt", (2, 0)), ("RejectBolt", (0, 2))])
def test_an_input_settled_by_the_bolt_in_a_batch_is_counted_once_with_a_warning(
    caplog: pytest.LogCaptureFixture, cls: str, counts: tuple[int, int]
) -> None:
    bolt, out, _ = start_bolt(cls, OFF)
    batch = words("a", "b")
    bolt.process_batch(batch)
    assert (batch.acked, batch.failed) == counts and not bolt._pending
    assert not out.acked and not out.failed
    assert caplog.text.count("ack of") == 2  # pystorm's auto-ack after it


def test_a_batch_whose_values_do_not_fit_the_fields_raises_as_in_pystorm() -> None:
    bolt, out, _ = start_bolt("EchoBolt", OFF)
    batch = InputBatch("words", "default", 1, [["a"], ["b", "c"]])
    with pytest.raises(UserCodeError) as raised:
        bolt.process_batch(batch)
    assert isinstance(raised.value.__cause__, TypeError)
    assert [e[0] for e in out.emits] == [["a", "WordsDefaultTuple"]]


def test_with_acking_on_a_batch_is_processed_on_its_tuples_in_their_trees() -> None:
    bolt, out, _ = start_bolt("EchoBolt")
    batch = InputBatch("words", "default", 1, [["hi"], ["ho"]], trees=[(), ()])
    bolt.process_batch(batch)
    first, second = batch.tuples()
    assert out.emits == [
        (["hi", "WordsDefaultTuple"], "default", [first], None, False),
        (["ho", "WordsDefaultTuple"], "default", [second], None, False),
    ]
    assert out.acked == [first, second] and batch.acked == 0


def test_an_emit_auto_anchored_to_an_input_already_acked_is_unanchored_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bolt, out, _ = start_bolt("AckThenEmitBolt")
    first, second = word("a"), word("b")
    bolt.process(first)
    bolt.process(second)
    assert out.acked == [first, second]
    assert out.emits == [(["a"], "default", [], None, False), (["b"], "default", [], None, False)]
    assert caplog.text.count("anchored to") == 2


def test_a_bolt_with_its_own_loop_body_gets_a_batch_through_it_one_input_at_a_time() -> None:
    bolt, out, _ = start_bolt("GroupBatchingBolt", OFF)
    batch = words("a", "a", "b")
    bolt.process_batch(batch)
    bolt.process_tick(tick())
    bolt.process_tick(tick())
    assert [e[0] for e in out.emits] == [["a", 2], ["b", 1]]
    assert out.acked == batch.tuples() and batch.acked == 0


def test_an_input_the_bolt_acked_itself_is_auto_acked_once_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bolt, out, _ = start_bolt("SelfAckBolt")
    first, second = word("a"), word("b")
    bolt.process(first)
    bolt.process(second)
    assert out.acked == [first, second] and not out.failed and not bolt._pending
    assert caplog.text.count("which is unknown or already acked or failed") == 2


def test_input_ids_are_distinct_decimal_strings() -> None:
    bolt, _, _ = start_bolt("DeferBolt")
    for value in ("a", "b", "c"):
        bolt.process(word(value))
    assert list(bolt._pending) == ["3"]
    assert bolt.component.previous.id == "3"


def test_a_spout_raising_in_ack_ends_the_task_as_pystorm_does() -> None:
    spout, out = start_spout("FragileSpout")
    spout.next_tuple()
    assert out.emits == [(["x"], "x", "default", None, False)]
    with pytest.raises(UserCodeError, match="FragileSpout raised RuntimeError") as raised:
        spout.ack("x")
    assert str(raised.value.__cause__) == "cannot ack x"


def test_a_spout_with_its_own_loop_body_gets_every_command_through_it() -> None:
    spout, out = start_spout("LoopSpout")
    spout.next_tuple()
    spout.ack("m1")
    spout.fail("m2")
    spout.deactivate()
    assert out.emits == [(["y"], None, "default", None, False)]
    assert Recording.calls == [
        ("run",),
        ("run",),
        ("ack", "m1"),
        ("run",),
        ("fail", "m2"),
        ("run",),
    ]


def test_a_pystorm_of_another_series_is_refused_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pystorm

    from heron_core.errors import HeronError
    from storm_compat.streamparse._adapter import check_pystorm

    check_pystorm()  # the pinned one passes
    monkeypatch.setattr(pystorm, "__version__", "4.0.0")
    with pytest.raises(HeronError, match=r"pystorm 4\.0\.0 is installed; .* needs pystorm 3\.1"):
        check_pystorm()
    with pytest.raises(HeronError, match="--multilang"):  # as the topology is built
        PystormBoltAdapter("bolts.wordcount.WordCountBolt", ["count"])
    monkeypatch.setattr(pystorm, "__version__", "3.1.9")
    monkeypatch.delattr(pystorm.bolt.Bolt, "_current_tups")
    with pytest.raises(HeronError, match=r"lacks bolt\.Bolt\._current_tups.*--multilang"):
        check_pystorm()


@pytest.mark.parametrize("config", [OFF, {}], ids=["acking off", "acking on"])
def test_task_hooks_see_each_input_s_own_execute_latency_in_a_batch(
    config: dict[str, Any],
) -> None:
    """Storm's boltExecute times each tuple: under task hooks, a streamparse bolt's batch
    reports every input with its own time, not the batch's shared out (without hooks the
    inlined loop takes the batch whole)."""
    from hooks_support import execute_latencies
    from sparse_components import TimedBolt

    bolt, out, _ = start_bolt("TimedBolt", config)
    trees = None if config else [(), (), ()]
    batch = InputBatch("words", "default", 1, [["a"], ["abcd"], ["ab"]], trees=trees)
    assert execute_latencies(bolt.process_batch, batch, TimedBolt.clock) == [
        (["a"], 1.0),
        (["abcd"], 4.0),
        (["ab"], 2.0),
    ]
    assert len(out.acked) + batch.acked == 3
