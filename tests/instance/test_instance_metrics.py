"""What an instance publishes each export interval: deltas of counters, interval averages of
latencies, gauges, process metrics, user metrics by time bucket, and exceptions merged by stack
trace (a fake clock drives every interval)."""

from __future__ import annotations

from typing import Any

import pytest

from heron_core.api.metrics import CountMetric, MeanReducedMetric, MultiCountMetric
from heron_core.instance._metrics import ExceptionLog, InstanceMetrics
from heron_core.proto import metrics_pb2

SUM, AVG, LAST = metrics_pb2.SUM, metrics_pb2.AVG, metrics_pb2.LAST


class Clock:
    """Monotonic and wall time, moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_700_000_000.0 + self.now


@pytest.fixture(name="clock")
def clock_fixture() -> Clock:
    return Clock()


@pytest.fixture(name="metrics")
def metrics_fixture(clock: Clock) -> InstanceMetrics:
    metrics = InstanceMetrics("count", "container_1_count_3", 0, clock=clock, wall=clock.wall)
    metrics.export_s = 1.0
    metrics.sample_s = 10.0
    return metrics


def values(message: metrics_pb2.MetricPublisherPublishMessage) -> dict[str, tuple[str, int]]:
    return {d.name: (d.value, d.type) for d in message.metrics}


def user(message: metrics_pb2.MetricPublisherPublishMessage) -> dict[str, tuple[str, int]]:
    """The metrics that are not the instance's own (``__...``)."""
    return {k: v for k, v in values(message).items() if not k.startswith("__")}


def test_counters_are_published_as_deltas_with_a_sum_hint(metrics: InstanceMetrics) -> None:
    metrics.counters["__emit-count/default"] = 5
    first = metrics.snapshot()
    metrics.counters["__emit-count/default"] = 12
    second = metrics.snapshot()
    third = metrics.snapshot()
    assert values(first)["__emit-count/default"] == ("5", SUM)
    assert values(second)["__emit-count/default"] == ("7", SUM)
    assert values(third)["__emit-count/default"] == ("0", SUM)
    assert first.publisher.instance_id == "container_1_count_3"
    assert first.timestamp == (1_700_000_000 + 100) * 1000


def test_latencies_are_the_average_of_their_interval_only(metrics: InstanceMetrics) -> None:
    metrics.add_latency("__execute-latency/words/default", 30.0, 3)
    metrics.add_latency("__execute-latency/words/default", 10.0, 1)
    assert values(metrics.snapshot())["__execute-latency/words/default"] == ("10.000", AVG)
    assert "__execute-latency/words/default" not in values(metrics.snapshot())
    metrics.add_latency("__execute-latency/words/default", 4.0, 2)
    assert values(metrics.snapshot())["__execute-latency/words/default"] == ("2.000", AVG)


def test_process_metrics_are_sampled_every_sample_interval(
    metrics: InstanceMetrics, clock: Clock
) -> None:
    names = ("__py-user-cpu-time-secs", "__py-sys-cpu-time-secs", "__py-physical-memory-byte")
    first = values(metrics.snapshot())
    assert all(first[name][1] == LAST for name in names)
    assert int(first["__py-physical-memory-byte"][0]) > 1_000_000
    sampled = metrics.gauges["__py-physical-memory-byte"]
    metrics.gauges["__py-physical-memory-byte"] = -1  # a later sample would overwrite it
    clock.now += 9.0
    assert values(metrics.snapshot())["__py-physical-memory-byte"] == ("-1", LAST)
    clock.now += 1.0
    assert values(metrics.snapshot())["__py-physical-memory-byte"] != ("-1", LAST)
    assert sampled > 0


def test_user_metrics_follow_their_time_bucket_and_the_final_message_reads_all(
    metrics: InstanceMetrics, clock: Clock
) -> None:
    every, slow = CountMetric(), CountMetric()
    metrics.register("fast", every, 0.2)  # shorter than the export interval: every export
    metrics.register("slow", slow, 3)
    published: list[dict[str, tuple[str, int]]] = []
    for _ in range(7):
        every.incr()
        slow.incr()
        clock.now += 1.0
        published.append(user(metrics.snapshot()))
    assert [p.get("fast") for p in published] == [("1", SUM)] * 7
    assert [p.get("slow") for p in published] == [
        None,
        None,
        ("3", SUM),
        None,
        None,
        ("3", SUM),
        None,
    ]
    slow.incr(5)
    clock.now += 0.1
    assert user(metrics.snapshot(final=True))["slow"] == ("6", SUM)  # nothing lost at exit


def test_user_values_are_flattened_skipped_and_hinted(metrics: InstanceMetrics) -> None:
    words, mean = MultiCountMetric(), MeanReducedMetric()
    words.incr("storm", 2)
    words.incr("heron")
    mean.update(10)
    mean.update(20)

    class Gauge:  # any object with get_value_and_reset: a gauge by default
        def get_value_and_reset(self) -> Any:
            return {"queue": 3, "ready": True, "unset": None}

    class Nothing:
        def get_value_and_reset(self) -> Any:
            return None

    for name, metric in (("words", words), ("mean", mean), ("gauge", Gauge()), ("none", Nothing())):
        metrics.register(name, metric, 1)
    assert user(metrics.snapshot(final=True)) == {
        "words/storm": ("2", SUM),
        "words/heron": ("1", SUM),
        "mean": ("15.0", AVG),
        "gauge/queue": ("3", LAST),
        "gauge/ready": ("1", LAST),
    }
    assert user(metrics.snapshot(final=True)) == {
        "words/storm": ("0", SUM),
        "words/heron": ("0", SUM),
        "gauge/queue": ("3", LAST),
        "gauge/ready": ("1", LAST),
    }


def test_a_metric_that_raises_is_reported_and_the_others_still_published(
    metrics: InstanceMetrics, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def get_value_and_reset(self) -> Any:
            raise RuntimeError("no value today")

    count = CountMetric()
    count.incr(4)
    metrics.register("broken", Broken(), 1)
    metrics.register("count", count, 1)
    message = metrics.snapshot(final=True)
    assert user(message) == {"count": ("4", SUM)}
    [entry] = message.exceptions
    assert "RuntimeError: no value today" in entry.stacktrace and entry.count == 1
    assert "user metric 'broken': " in caplog.text
    assert "Broken.get_value_and_reset() raised" in caplog.text


@pytest.mark.parametrize(
    ("name", "metric", "bucket", "error"),
    [
        ("", CountMetric(), 1, "must be a non-empty string"),
        ("taken", CountMetric(), 1, "'taken' is registered already"),
        ("plain", object(), 1, "a object, which has no get_value_and_reset"),
        ("zero", CountMetric(), 0, "positive number of seconds, got 0"),
        ("text", CountMetric(), "60", "positive number of seconds, got '60'"),
    ],
)
def test_registration_errors_name_the_metric(
    metrics: InstanceMetrics, name: str, metric: Any, bucket: Any, error: str
) -> None:
    metrics.register("taken", CountMetric(), 1)
    with pytest.raises(ValueError, match=error) as info:
        metrics.register(name, metric, bucket)
    assert "component 'count', instance container_1_count_3" in str(info.value)


def raise_and_catch(text: str) -> ValueError:
    try:
        raise ValueError(text)
    except ValueError as exc:
        return exc


def test_identical_traces_of_an_interval_merge_with_count_and_times(
    metrics: InstanceMetrics, clock: Clock
) -> None:
    metrics.exceptions.add(raise_and_catch("boom"))
    clock.now += 0.5
    metrics.exceptions.add(raise_and_catch("boom"))
    metrics.exceptions.add("Traceback (multilang)\n  line 1\nError: x")
    message = metrics.snapshot()
    by_message = {e.logging: e for e in message.exceptions}
    boom = by_message["ValueError: boom"]
    assert boom.count == 2
    assert (boom.firsttime, boom.lasttime) == (
        "2023-11-14T22:15:00.000Z",
        "2023-11-14T22:15:00.500Z",
    )
    assert "raise ValueError(text)" in boom.stacktrace
    text = by_message["Traceback (multilang)"]
    assert (text.count, text.stacktrace) == (1, "Traceback (multilang)\n  line 1\nError: x")
    assert list(metrics.snapshot().exceptions) == []  # the next interval starts empty


def test_distinct_traces_beyond_the_limit_are_counted() -> None:
    errors = ExceptionLog(limit=2)
    for text in ("a", "b", "c", "d", "a"):
        errors.add(text)
    assert sorted((e.logging, e.count) for e in errors.drain()) == [("a", 2), ("b", 1)]
    assert errors.dropped == 2


def test_dropped_exceptions_are_published_as_a_count(metrics: InstanceMetrics) -> None:
    metrics.exceptions = ExceptionLog(limit=1)
    for text in ("a", "b", "c"):
        metrics.exceptions.add(text)
    assert values(metrics.snapshot())["__exceptions-dropped"] == ("2", SUM)
    assert values(metrics.snapshot())["__exceptions-dropped"] == ("0", SUM)
