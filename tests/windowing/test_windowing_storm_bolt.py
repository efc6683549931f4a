"""Storm's BaseWindowedBolt on the facade: the builder methods, the checks at submit, and the
executor (windows, anchoring, acking on expiry, late tuples, ticks as its timer) run through
the facade's bolt adapter against a fake kernel collector."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from window_fakes import TICK, Clock, FakeCollector, FakeContext, delivered

from heron_core.errors import ConfigurationError, UserCodeError
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing import FixedTupleSpout
from storm_compat.topology import (
    OutputFieldsDeclarer,
    TopologyBuilder,
    TupleFieldTimestampExtractor,
    WindowedBoltExecutor,
)
from storm_compat.topology._adapters import BoltAdapter
from storm_compat.topology.base import BaseWindowedBolt
from storm_compat.tuple import Fields, Tuple, Values
from storm_compat.windowing import TimestampExtractor, TimeUnit, TupleWindow

Count = BaseWindowedBolt.Count
Duration = BaseWindowedBolt.Duration


class Summer(BaseWindowedBolt):
    """Emits the sum of field ``n`` over each window, and records what it saw."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.seen: list[tuple[list[int], list[int], list[int], Any, Any]] = []

    def execute(self, inputWindow: TupleWindow) -> None:
        def ns(tuples: list[Tuple]) -> list[int]:
            return [t.getIntegerByField("n") for t in tuples]

        window = inputWindow
        self.seen.append(
            (
                ns(window.get()),
                ns(window.getNew()),
                ns(window.getExpired()),
                window.getStartTimestamp(),
                window.getEndTimestamp(),
            )
        )
        self.collector.emit(Values(sum(ns(window.get()))))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sum"))


class Sliding(BaseWindowedBolt):
    """A windowed bolt that only records, for the builder tests."""

    def execute(self, inputWindow: TupleWindow) -> None:
        raise AssertionError("not run")


class EveryOther(TimestampExtractor):
    def extractTimestamp(self, tuple: Tuple) -> int:
        return 2 * tuple.getInteger(0)


def run(
    bolt: BaseWindowedBolt, clock: Clock, extra: dict[str, Any] | None = None
) -> tuple[BoltAdapter, FakeCollector]:
    """The bolt as an instance runs it: wrapped, adapted, attached and initialized."""
    executor = WindowedBoltExecutor(bolt, clock)
    declarer = OutputFieldsDeclarer("win")
    executor.declareOutputFields(declarer)
    adapter = BoltAdapter(executor, declarer.streams)
    collector = FakeCollector()
    adapter._collector = collector
    config = {**(executor.getComponentConfiguration() or {}), **(extra or {})}
    adapter.initialize(config, FakeContext({("src", "default"): ["n", "ts"]}))
    return adapter, collector


def feed(adapter: BoltAdapter, *rows: list[Any]) -> None:
    for row in rows:
        adapter.process(delivered(adapter, "src", "default", row))


# --- builder methods ------------------------------------------------------------------------


def test_builder_methods_set_storms_config_keys() -> None:
    assert Sliding().withWindow(Count(10), Count(5)).getComponentConfiguration() == {
        "topology.bolts.window.length.count": 10,
        "topology.bolts.window.sliding.interval.count": 5,
    }
    assert Sliding().withWindow(Duration.seconds(10)).getComponentConfiguration() == {
        "topology.bolts.window.length.duration.ms": 10_000,
        "topology.bolts.window.sliding.interval.count": 1,
    }
    assert Sliding().withWindow(Count(3), Duration.of(500)).getComponentConfiguration() == {
        "topology.bolts.window.length.count": 3,
        "topology.bolts.window.sliding.interval.duration.ms": 500,
    }
    bolt = (
        Sliding()
        .withTumblingWindow(Duration.minutes(1))
        .withTimestampField("ts")
        .withLag(Duration(2, TimeUnit.SECONDS))
        .withWatermarkInterval(Duration.of(200))
        .withLateTupleStream("late")
    )
    assert bolt.getComponentConfiguration() == {
        "topology.bolts.window.length.duration.ms": 60_000,
        "topology.bolts.window.sliding.interval.duration.ms": 60_000,
        "topology.bolts.tuple.timestamp.field.name": "ts",
        "topology.bolts.tuple.timestamp.max.lag.ms": 2000,
        "topology.bolts.watermark.event.interval.ms": 200,
        "topology.bolts.late.tuple.stream": "late",
    }
    extractor = bolt.getTimestampExtractor()
    assert isinstance(extractor, TupleFieldTimestampExtractor) and extractor.fieldName == "ts"
    # a later withWindow replaces the earlier setting, whatever its unit
    assert Sliding().withWindow(Count(3)).withTumblingWindow(
        Duration.hours(1)
    ).getComponentConfiguration() == {
        "topology.bolts.window.length.duration.ms": 3_600_000,
        "topology.bolts.window.sliding.interval.duration.ms": 3_600_000,
    }
    assert Duration.days(1).value == 86_400_000 and Count.of(4) == Count(4)


def test_builder_methods_refuse_wrong_types_and_a_second_timestamp_source() -> None:
    with pytest.raises(TypeError, match=r"Count or BaseWindowedBolt\.Duration"):
        Sliding().withWindow(10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="negative"):
        Duration.of(-1)
    with pytest.raises(TypeError, match="unknown time unit"):
        Duration(1, "FORTNIGHTS")
    with pytest.raises(ValueError, match="already configured with a timestamp extractor"):
        Sliding().withTimestampField("ts").withTimestampExtractor(EveryOther())
    with pytest.raises(TypeError, match=r"withLag takes a BaseWindowedBolt\.Duration"):
        Sliding().withLag(5)  # type: ignore[arg-type]


# --- at submit --------------------------------------------------------------------------------


def plan_config(bolt: BaseWindowedBolt, conf: dict[str, Any] | None = None) -> dict[str, Any]:
    builder = TopologyBuilder()
    builder.setSpout("src", FixedTupleSpout([], Fields("n", "ts")))
    builder.setBolt("win", bolt).shuffleGrouping("src")
    topology = builder.createTopology()
    assert isinstance(topology.components[1].component, WindowedBoltExecutor)
    plan = topology.to_logical_plan("wt", conf)
    return plan.components[1].config


def test_a_window_that_fires_by_time_gets_ticks_a_quarter_of_its_period() -> None:
    assert plan_config(Sliding().withWindow(Count(5), Count(2))) == {
        "topology.bolts.window.length.count": 5,
        "topology.bolts.window.sliding.interval.count": 2,
    }
    tumbling = plan_config(Sliding().withTumblingWindow(Duration.seconds(2)))
    assert tumbling["topology.tick.tuple.freq.secs"] == 0.5
    event_time = Sliding().withWindow(Count(5)).withTimestampField("ts")
    assert plan_config(event_time)["topology.tick.tuple.freq.secs"] == 0.25  # watermarks: 1 s
    faster = plan_config(
        Sliding().withTumblingWindow(Duration.seconds(2)), {"topology.tick.tuple.freq.secs": 0.1}
    )
    assert faster["topology.tick.tuple.freq.secs"] == 0.1


def test_the_late_tuple_stream_is_declared_with_the_late_tuple_field() -> None:
    builder = TopologyBuilder()
    bolt = Summer().withTumblingWindow(Count(2)).withTimestampField("ts")
    builder.setBolt("win", bolt.withLateTupleStream("late")).shuffleGrouping("src")
    [component] = builder.createTopology().components
    assert [(s.stream_id, s.fields) for s in component.streams] == [
        ("late", ("late_tuple",)),
        ("default", ("sum",)),
    ]


@pytest.mark.parametrize(
    ("bolt", "conf", "setting", "says"),
    [
        (Sliding(), {}, "topology.bolts.window.length.count", "needs a window length"),
        (
            Sliding().withWindow(Count(2), Count(3)),
            {},
            "topology.bolts.window.sliding.interval.count",
            "longer than the window",
        ),
        (
            Sliding().withWindow(Duration.of(100), Duration.of(300)),
            {},
            "topology.bolts.window.sliding.interval.duration.ms",
            "longer than the window",
        ),
        (Sliding().withWindow(Count(0)), {}, "topology.bolts.window.length.count", ">= 1"),
        (
            Sliding().withWindow(Count(5)).withLag(Duration.of(10)),
            {},
            "topology.bolts.tuple.timestamp.max.lag.ms",
            "withLag (10) needs event time",
        ),
        (
            Sliding().withWindow(Count(5)).withLateTupleStream("late"),
            {},
            "topology.bolts.late.tuple.stream",
            "needs event time",
        ),
        (
            Sliding().withTumblingWindow(Duration.seconds(20)),
            {"topology.message.timeout.secs": 30},
            "topology.message.timeout.secs",
            "40000 ms, more than the message timeout of 30 s",
        ),
        (
            Sliding().withWindow(Count(50), Count(10)),
            {"topology.max.spout.pending": 40},
            "topology.max.spout.pending",
            "is 60, more than the max spout pending of 40",
        ),
        (
            Sliding().withWindow(Count(5)).withTimestampField("ts"),
            {"topology.bolts.late.tuple.stream": "late"},
            "topology.bolts.late.tuple.stream",
            "must be set on the bolt with withLateTupleStream",
        ),
    ],
)
def test_wrong_window_settings_are_refused_at_submit_naming_topology_component_setting(
    bolt: BaseWindowedBolt, conf: dict[str, Any], setting: str, says: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        plan_config(bolt, conf)
    message = str(caught.value)
    assert "topology 'wt'" in message and "component 'win'" in message
    assert setting in message and says in message


# --- running --------------------------------------------------------------------------------


def test_a_sliding_count_window_emits_anchored_to_its_tuples_and_acks_them_on_expiry() -> None:
    bolt = Summer().withWindow(Count(3), Count(2))
    adapter, collector = run(bolt, Clock(7))
    feed(adapter, [1, 0], [2, 0])
    assert collector.take() == [("emit", [3], "default", [[1, 0], [2, 0]])]
    feed(adapter, [3, 0], [4, 0])
    # tuple 1 expires (acked) before the window that reports it expired is executed
    assert collector.take() == [
        ("ack", [1, 0]),
        ("emit", [9], "default", [[2, 0], [3, 0], [4, 0]]),
    ]
    assert bolt.seen == [([1, 2], [1, 2], [], None, 7), ([2, 3, 4], [3, 4], [1], None, 7)]
    adapter.process_tick(TICK)  # no timer: a tick changes nothing, and never reaches the bolt
    assert collector.take() == [] and len(bolt.seen) == 2


def test_emits_with_anchors_keep_them() -> None:
    class Anchoring(Summer):
        def execute(self, inputWindow: TupleWindow) -> None:
            last = inputWindow.get()[-1]
            self.collector.emit("default", last, Values(0))

    adapter, collector = run(Anchoring().withTumblingWindow(Count(2)), Clock())
    feed(adapter, [1, 0], [2, 0])
    assert collector.take() == [("emit", [0], "default", [[2, 0]])]


def test_a_tumbling_duration_window_fires_on_ticks_and_acks_at_the_next_window() -> None:
    clock = Clock(10_000)
    bolt = Summer().withTumblingWindow(Duration.seconds(1))
    adapter, collector = run(bolt, clock)
    clock.now = 10_100
    feed(adapter, [1, 0], [2, 0])
    clock.now = 11_000
    adapter.process_tick(TICK)
    assert collector.take() == [("emit", [3], "default", [[1, 0], [2, 0]])]
    clock.now = 11_500
    feed(adapter, [5, 0])
    clock.now = 12_200
    feed(adapter, [7, 0])  # the window due at 12000 fires first: 7 is in the next one
    assert collector.take() == [
        ("ack", [1, 0]),
        ("ack", [2, 0]),
        ("emit", [5], "default", [[5, 0]]),
    ]
    assert [s[3:] for s in bolt.seen] == [(9_999, 10_999), (10_999, 11_999)]


def test_late_tuples_go_to_the_late_stream_anchored_and_are_acked() -> None:
    clock = Clock()
    bolt = Summer().withTumblingWindow(Duration.of(100)).withTimestampField("ts")
    adapter, collector = run(bolt.withLateTupleStream("late"), clock)
    feed(adapter, [1, 50], [2, 150], [3, 260])
    clock.now = 1000
    adapter.process_tick(TICK)  # watermark 260: windows (0, 100] and (100, 200]
    assert collector.take() == [
        ("emit", [1], "default", [[1, 50]]),
        ("ack", [1, 50]),
        ("emit", [2], "default", [[2, 150]]),
    ]
    feed(adapter, [4, 120])
    [emit, ack] = collector.take()
    assert emit[0] == "emit" and emit[2] == "late" and emit[3] == [[4, 120]]
    [late] = emit[1]
    assert isinstance(late, Tuple) and late.getIntegerByField("ts") == 120
    assert late.getSourceComponent() == "src" and late.getFields().toList() == ["n", "ts"]
    assert ack == ("ack", [4, 120])


def test_late_tuples_without_a_late_stream_are_logged_dropped_and_acked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    adapter, collector = run(
        Summer().withTumblingWindow(Count(10)).withTimestampExtractor(EveryOther()), clock
    )
    feed(adapter, [100, 0])  # timestamp 200
    clock.now = 1000
    adapter.process_tick(TICK)  # watermark 200
    with caplog.at_level(logging.INFO, logger="storm_compat.windowing._executor"):
        feed(adapter, [99, 0])  # timestamp 198: late
    assert collector.take() == [("ack", [99, 0])]
    assert "a late tuple (timestamp 198" in caplog.text


def test_a_tuple_without_the_timestamp_field_names_the_field_and_the_component() -> None:
    adapter, _ = run(Summer().withWindow(Count(2)).withTimestampField("when"), Clock())
    with pytest.raises(UserCodeError) as caught:
        feed(adapter, [1, 2])
    message = str(caught.value)
    assert "component 'win'" in message and "'when'" in message and "['n', 'ts']" in message
