"""The native components that run Storm spouts, bolts and groupings in an instance."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from storm_support import FakeBoltCollector, FakeContext, FakeSpoutCollector, delivered

from heron_core.api import GlobalStreamId, InputBatch, Stream
from heron_core.api import Tuple as NativeTuple
from heron_core.errors import UserCodeError
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import (
    BasicOutputCollector,
    FailedException,
    OutputFieldsDeclarer,
    ReportedFailedException,
)
from storm_compat.topology._adapters import (
    BasicBoltAdapter,
    BoltAdapter,
    CustomGroupingAdapter,
    SpoutAdapter,
)
from storm_compat.topology.base import BaseBasicBolt, BaseRichBolt, BaseRichSpout
from storm_compat.tuple import Fields, Tuple, Values

OUTPUTS = [Stream(["word"])]
TICK = NativeTuple("__tick", "__system", "__tick", -1, [2.0])


class Recorder:
    events: list[Any]

    def record(self, *event: Any) -> None:
        self.events.append(event)


class Spout(BaseRichSpout, Recorder):
    def __init__(self, fail_open: bool = False) -> None:
        self.events = []
        self.fail_open = fail_open

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        if self.fail_open:
            raise RuntimeError("no broker")
        self.collector = collector
        self.record("open", conf, context.getThisComponentId(), context.getThisTaskIndex())

    def nextTuple(self) -> None:
        self.record("nextTuple", self.collector.emit(Values("w"), "m1"))

    def ack(self, msgId: Any) -> None:
        self.record("ack", msgId)

    def fail(self, msgId: Any) -> None:
        self.record("fail", msgId)

    def activate(self) -> None:
        self.record("activate")

    def deactivate(self) -> None:
        self.record("deactivate")

    def close(self) -> None:
        self.record("close")

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Not used here."""


def test_spout_adapter_translates_every_callback() -> None:
    spout = Spout()
    adapter = SpoutAdapter(spout, OUTPUTS)
    native = FakeSpoutCollector()
    adapter._collector = native
    adapter.initialize({"k": 1}, FakeContext("words", task=3, index=1))
    adapter.next_tuple()
    adapter.ack("m1")
    adapter.fail("m2")
    adapter.deactivate()
    adapter.activate()
    adapter.close()
    assert spout.events == [
        ("open", {"k": 1}, "words", 1),
        ("nextTuple", [2, 4]),
        ("ack", "m1"),
        ("fail", "m2"),
        ("deactivate",),
        ("activate",),
        ("close",),
    ]
    assert native.calls == [(["w"], "m1", "default", None, True)]
    assert adapter.outputs == OUTPUTS


def test_a_spout_raising_in_open_is_a_user_code_error_naming_the_component() -> None:
    adapter = SpoutAdapter(Spout(fail_open=True), OUTPUTS)
    adapter._collector = FakeSpoutCollector()
    with pytest.raises(
        UserCodeError,
        match=r"topology 't', component 'words', task 3: Spout.open\(\) raised "
        r"RuntimeError\('no broker'\)",
    ) as caught:
        adapter.initialize({}, FakeContext("words"))
    assert isinstance(caught.value.__cause__, RuntimeError)


class RichBolt(BaseRichBolt, Recorder):
    def __init__(self) -> None:
        self.events = []

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        self.record(input.getSourceComponent(), input.getFields().toList(), input.getValues())
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Not used here."""


def test_rich_bolt_gets_tuples_with_their_fields_and_ticks_in_execute() -> None:
    bolt = RichBolt()
    adapter = BoltAdapter(bolt, OUTPUTS)
    native = FakeBoltCollector()
    adapter._collector = native
    adapter.initialize({}, FakeContext("count", fields={("split", "default"): ["word"]}))
    adapter.process(delivered(adapter, "1", "split", "default", 4, ["storm"]))
    adapter.process_tick(TICK)
    assert bolt.events == [("split", ["word"], ["storm"]), ("__system", ["rate_secs"], [2.0])]
    assert native.calls == [("ack", ["storm"])]  # the tick's ack stays in the facade


class Basic(BaseBasicBolt, Recorder):
    def __init__(self) -> None:
        self.events = []

    def prepare(self, topoConf: dict[str, Any], context: TopologyContext) -> None:
        self.record("prepare", context.getThisTaskId())

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        value = input.getValue(0)
        if value == "fail":
            raise FailedException("failing it")
        if value == "report":
            raise ReportedFailedException(ValueError("reported"))
        if value == "crash":
            raise KeyError("crash")
        collector.emit(Values(f"{value}!"))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Not used here."""


def test_basic_bolt_is_anchored_acked_and_failed_for_the_user(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bolt = Basic()
    adapter = BasicBoltAdapter(bolt, OUTPUTS)
    native = FakeBoltCollector()
    adapter._collector = native
    adapter.initialize({}, FakeContext("exclaim", task=6, fields={("s", "default"): ["w"]}))
    for value in ("ok", "fail", "report"):
        adapter.process(delivered(adapter, value, "s", "default", 1, [value]))
    with pytest.raises(KeyError):
        adapter.process(delivered(adapter, "crash", "s", "default", 1, ["crash"]))
    assert bolt.events == [("prepare", 6)]
    assert native.calls == [
        ("emit", ["ok!"], "default", [["ok"]], None, True),
        ("ack", ["ok"]),
        ("fail", ["fail"]),
        ("fail", ["report"]),
    ]
    reported = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert reported == [
        "topology 't', component 'exclaim', task 6: reported error: "
        "ReportedFailedException('reported')"
    ]


def test_a_bolt_raising_in_prepare_is_a_user_code_error() -> None:
    class Broken(Basic):
        def prepare(self, topoConf: dict[str, Any], context: TopologyContext) -> None:
            raise OSError("disk")

    adapter = BasicBoltAdapter(Broken(), OUTPUTS)
    adapter._collector = FakeBoltCollector()
    with pytest.raises(UserCodeError, match=r"component 'bolt', task 3: .*prepare\(\) raised"):
        adapter.initialize({}, FakeContext())


def test_custom_grouping_adapter_passes_the_emitting_task_and_stream() -> None:
    seen: list[Any] = []

    class Modulo(CustomStreamGrouping):
        def prepare(
            self, context: TopologyContext, stream: GlobalStreamId, targetTasks: list[int]
        ) -> None:
            seen.append((context.getThisComponentId(), stream, targetTasks))
            self.targets = targetTasks

        def chooseTasks(self, taskId: int, values: list[Any]) -> list[int]:
            return [self.targets[(taskId + len(values[0])) % len(self.targets)]]

    adapter = CustomGroupingAdapter(Modulo())
    adapter.prepare(FakeContext("split", task=5), "count", "words", [7, 8])
    assert seen == [("split", GlobalStreamId("split", "words"), [7, 8])]
    assert adapter.choose_tasks(["ab"]) == [8]


class SelfAcking(BaseBasicBolt):
    """Acks its input through the outputter (Storm's BasicBoltExecutor then acks it again)."""

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        collector.emit(Values(input.getString(0)))
        collector.getOutputter().ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Not used here."""


def test_a_basic_bolt_input_acked_by_the_bolt_is_acked_once_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = BasicBoltAdapter(SelfAcking(), OUTPUTS)
    native = FakeBoltCollector()
    adapter._collector = native
    adapter.initialize({}, FakeContext("echo", fields={("s", "default"): ["w"]}))
    adapter.process(delivered(adapter, None, "s", "default", 1, ["a"]))
    assert native.calls == [("emit", ["a"], "default", [["a"]], None, True), ("ack", ["a"])]
    assert "ack of a tuple already acked or failed, ignored" in caplog.text


def test_a_debug_basic_bolt_logs_its_emits_and_acks(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    adapter = BasicBoltAdapter(Basic(), OUTPUTS)
    native = FakeBoltCollector()
    adapter._collector = native
    context = FakeContext("exclaim", task=6, fields={("s", "default"): ["w"]})
    adapter.initialize({"topology.debug": True}, context)
    adapter.process(delivered(adapter, "m", "s", "default", 1, ["ok"]))
    adapter.process_tick(TICK)
    assert native.calls == [
        ("emit", ["ok!"], "default", [["ok"]], None, True),
        ("ack", ["ok"]),
        ("emit", ["2.0!"], "default", [], None, True),
    ]
    where = "topology 't', component 'exclaim', task 6"
    assert caplog.messages[-4:] == [
        f"{where}: Emitting: default ['ok!']",
        f"{where}: BOLT ack TUPLE: source: s:1, stream: default, id: m, ['ok']",
        f"{where}: Emitting: default ['2.0!']",
        f"{where}: BOLT ack TUPLE: source: __system:-1, stream: __tick, id: __tick, [2.0]",
    ]


def test_a_rich_bolt_gets_one_storm_tuple_per_input_with_the_fields_of_its_stream() -> None:
    bolt = RichBolt()
    adapter = BoltAdapter(bolt, OUTPUTS)
    adapter._collector = FakeBoltCollector()
    fields = {("split", "default"): ["word"], ("split", "pairs"): ["word", "n"]}
    adapter.initialize({}, FakeContext("count", fields=fields))
    adapter.process(delivered(adapter, None, "split", "default", 4, ["a"]))
    adapter.process(delivered(adapter, None, "split", "pairs", 4, ["b", 2]))
    adapter.process(delivered(adapter, None, "split", "default", 4, ["c"]))
    assert bolt.events == [
        ("split", ["word"], ["a"]),
        ("split", ["word", "n"], ["b", 2]),
        ("split", ["word"], ["c"]),
    ]


class Keeping(BaseBasicBolt):
    """Keeps every input it gets."""

    def __init__(self) -> None:
        self.inputs: list[Tuple] = []

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        self.inputs.append(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Not used here."""


@pytest.mark.parametrize("kind", [BoltAdapter, BasicBoltAdapter])
def test_bolt_adapters_have_the_runtime_build_storm_tuples(kind: type[Any]) -> None:
    assert kind.tuple_type is Tuple


def test_a_bolt_gets_the_tuple_the_runtime_built_with_its_fields_and_identity_equality() -> None:
    bolt = Keeping()
    adapter = BasicBoltAdapter(bolt, OUTPUTS)
    native = FakeBoltCollector()
    adapter._collector = native
    adapter.initialize({}, FakeContext("count", fields={("split", "default"): ["word"]}))
    first = delivered(adapter, None, "split", "default", 4, ["same"])
    second = delivered(adapter, None, "split", "default", 4, ["same"])
    adapter.process(first)
    adapter.process(second)
    assert bolt.inputs[0] is first and bolt.inputs[1] is second
    assert first.getStringByField("word") == "same" and first.getFields() == Fields("word")
    assert len(set(bolt.inputs)) == 2
    assert native.calls == [("ack", ["same"]), ("ack", ["same"])]


def test_whole_batches_get_the_fields_of_their_stream_and_are_acked_like_single_inputs() -> None:
    rich, basic = RichBolt(), Keeping()
    adapters = [BoltAdapter(rich, OUTPUTS), BasicBoltAdapter(basic, OUTPUTS)]
    fields = {("split", "default"): ["word"], ("split", "pairs"): ["word", "n"]}
    for adapter in adapters:
        adapter._collector = FakeBoltCollector()
        adapter.initialize({}, FakeContext("count", fields=fields))
        adapter.process_batch(InputBatch("split", "pairs", 4, [["b", 2], ["c", 3]], kind=Tuple))
        adapter.process_batch(InputBatch("split", "default", 4, [["a"]], kind=Tuple))
    expected = [(["word", "n"], ["b", 2]), (["word", "n"], ["c", 3]), (["word"], ["a"])]
    assert [(fields, values) for _, fields, values in rich.events] == expected
    assert [(t.getFields().toList(), t.getValues()) for t in basic.inputs] == expected
    acked = [("ack", values) for _, values in expected]
    assert [a._collector.calls for a in adapters] == [acked, acked]


class Timed(BaseBasicBolt):
    """Each input takes as many milliseconds of ``clock`` as its word has letters."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        self.clock[0] += 0.001 * len(input.getString(0))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Not used here."""


class TimedRich(BaseRichBolt):
    """`Timed` as a rich bolt, which acks its input itself."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock

    def prepare(self, conf: Any, context: Any, collector: OutputCollector) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        self.clock[0] += 0.001 * len(input.getString(0))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Not used here."""


@pytest.mark.parametrize(
    ("kind", "bolt_class"), [(BoltAdapter, TimedRich), (BasicBoltAdapter, Timed)]
)
def test_task_hooks_see_each_input_s_own_execute_latency_in_a_batch(
    kind: type[Any], bolt_class: type[Any]
) -> None:
    """Storm's boltExecute times each tuple: a Storm bolt's batch reports every input with
    its own time, not the batch's shared out."""
    from hooks_support import execute_latencies

    clock = [100.0]
    adapter = kind(bolt_class(clock), OUTPUTS)
    adapter._collector = FakeBoltCollector()
    adapter.initialize({}, FakeContext("count", fields={("split", "default"): ["word"]}))
    batch = InputBatch("split", "default", 4, [["a"], ["abcd"], ["ab"]], kind=Tuple)
    assert execute_latencies(adapter.process_batch, batch, clock) == [
        (["a"], 1.0),
        (["abcd"], 4.0),
        (["ab"], 2.0),
    ]
    assert [call[0] for call in adapter._collector.calls] == ["ack", "ack", "ack"]
