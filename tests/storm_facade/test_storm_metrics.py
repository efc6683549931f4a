"""Storm's metrics (``storm_compat.metric.api``) registered with ``registerMetric``, read by the
instance's own metrics registry as it publishes them, and ``reportError`` on both collectors."""

from __future__ import annotations

from typing import Any

import pytest
from storm_support import FakeBoltCollector, FakeContext

from heron_core.instance._metrics import InstanceMetrics
from heron_core.proto import metrics_pb2
from storm_compat.metric.api import (
    AssignableMetric,
    CombinedMetric,
    CountMetric,
    ICombiner,
    IReducer,
    MeanReducer,
    MultiCountMetric,
    MultiReducedMetric,
    ReducedMetric,
)
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext

SUM, AVG, LAST = metrics_pb2.SUM, metrics_pb2.AVG, metrics_pb2.LAST


class RegisteringContext(FakeContext):
    """A native context whose metrics and errors go to a real `InstanceMetrics`."""

    def __init__(self) -> None:
        super().__init__()
        self.registry = InstanceMetrics("bolt", "container_1_bolt_3", 0)
        self.buckets: dict[str, Any] = {}

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        self.registry.register(name, metric, time_bucket_in_sec)
        self.buckets[name] = time_bucket_in_sec

    def report_error(self, error: BaseException | str) -> None:
        self.registry.exceptions.add(error)

    def published(self) -> dict[str, tuple[str, int]]:
        message = self.registry.snapshot(final=True)
        return {d.name: (d.value, d.type) for d in message.metrics if not d.name.startswith("__")}


class Max(ICombiner):
    def identity(self) -> Any:
        return 0

    def combine(self, a: Any, b: Any) -> Any:
        return max(a, b)


class Last(IReducer):
    def init(self) -> Any:
        return None

    def reduce(self, accumulator: Any, input: Any) -> Any:
        return input

    def extractResult(self, accumulator: Any) -> Any:
        return accumulator


class Plain:  # an IMetric by duck typing only
    def __init__(self) -> None:
        self.calls = 0

    def getValueAndReset(self) -> Any:
        self.calls += 1
        return {"calls": self.calls}


def test_every_metric_class_is_published_with_its_hint() -> None:
    native = RegisteringContext()
    context = TopologyContext(native)
    count = context.registerMetric("count", CountMetric(), 10)
    multi = context.registerMetric("multi", MultiCountMetric(), 10)
    mean = context.registerMetric("mean", ReducedMetric(MeanReducer()), 10)
    means = context.registerMetric("means", MultiReducedMetric(MeanReducer()), 10)
    combined = context.registerMetric("peak", CombinedMetric(Max()), 10)
    gauge = context.registerMetric("gauge", AssignableMetric(1), 10)
    plain = context.registerMetric("plain", Plain(), 10)
    count.incr()
    count.incrBy(4)
    multi.scope("a").incr()
    multi.scope("b").incrBy(2)
    mean.update(1)
    mean.update(2)
    means.scope("x").update(4)
    combined.update(7)
    combined.update(3)
    gauge.setValue(8)
    assert native.published() == {
        "count": ("5", SUM),
        "multi/a": ("1", SUM),
        "multi/b": ("2", SUM),
        "mean": ("1.5", AVG),
        "means/x": ("4.0", AVG),
        "peak": ("7", LAST),
        "gauge": ("8", LAST),
        "plain/calls": ("1", LAST),
    }
    assert native.buckets["count"] == 10
    assert context.getRegisteredMetricByName("plain") is plain
    assert context.getRegisteredMetricByName("nothing") is None


def test_a_reducer_or_combiner_is_wrapped_and_returned() -> None:
    native = RegisteringContext()
    context = TopologyContext(native)
    mean = context.registerMetric("mean", MeanReducer(), 5)
    last = context.registerMetric("last", Last(), 5)
    peak = context.registerMetric("peak", Max(), 5)
    assert isinstance(mean, ReducedMetric) and isinstance(peak, CombinedMetric)
    mean.update(3)
    last.update("text")
    peak.update(2)
    assert native.published() == {
        "mean": ("3.0", AVG),
        "last": ("text", LAST),
        "peak": ("2", LAST),
    }


def test_bad_registrations_name_the_task_and_metric() -> None:
    context = TopologyContext(RegisteringContext())
    with pytest.raises(ValueError, match=r"task 3 of 'bolt': metric 'x' is a int: expected"):
        context.registerMetric("x", 5, 60)
    context.registerMetric("twice", CountMetric(), 60)
    with pytest.raises(ValueError, match="'twice' is registered already"):
        context.registerMetric("twice", CountMetric(), 60)


def test_report_error_reaches_the_exception_log_from_both_collectors() -> None:
    native = RegisteringContext()

    class Emitting:
        def emit(self, *args: Any) -> list[int]:
            return []

    bolt = OutputCollector(FakeBoltCollector(), "bolt", errors=native.report_error)
    spout = SpoutOutputCollector(Emitting(), "spout", errors=native.report_error)
    for collector, kind in ((bolt, ValueError), (spout, TypeError), (bolt, ValueError)):
        try:
            raise kind("bad record")
        except (ValueError, TypeError) as exc:
            collector.reportError(exc)
    entries = native.registry.snapshot().exceptions
    counts = sorted((e.logging, e.count) for e in entries)
    assert counts == [("TypeError: bad record", 1), ("ValueError: bad record", 2)]
    assert all("raise kind(" in e.stacktrace for e in entries)
