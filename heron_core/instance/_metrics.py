"""What an instance publishes to its container's metrics manager: one
``MetricPublisherPublishMessage`` per export interval, whose values cover that interval only.

* Counters (``__emit-count/<stream>``, ...) are kept cumulative by the runtime; each message
  carries what was added since the previous one (type hint SUM).
* Latencies (``__execute-latency/<source>/<stream>``, ...; ms) are the average of the interval
  (AVG); an interval without samples leaves them out.
* Gauges and process metrics (``__py-*``, sampled every
  ``heron.instance.metrics.system.sample.interval.sec``) are the newest value (LAST).
* User metrics registered with ``context.register_metric`` are read when their time bucket has
  passed (and at the final message), flattened and hinted by their ``metric_type``.
* Exceptions (uncaught, or reported by the task) go in ``exceptions``, one entry per distinct
  stack trace per interval with its count and first and last time.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psutil

from heron_core.proto import metrics_pb2

__all__ = ["ExceptionLog", "InstanceMetrics", "format_error", "iso_utc", "metric_values"]

log = logging.getLogger(__name__)

SUM = metrics_pb2.SUM
AVG = metrics_pb2.AVG
LAST = metrics_pb2.LAST
_HINTS: dict[object, metrics_pb2.MetricType.ValueType] = {
    "SUM": SUM,
    "AVG": AVG,
    "LAST": LAST,
    SUM: SUM,
    AVG: AVG,
    LAST: LAST,
}

MAX_EXCEPTIONS = 1024
"""Distinct stack traces kept per interval (Heron's limit per message); more are counted in
``__exceptions-dropped``."""


def iso_utc(seconds: float) -> str:
    """Unix time ``seconds`` as ISO 8601 UTC, to the millisecond.

    >>> iso_utc(0.25)
    '1970-01-01T00:00:00.250Z'
    """
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def format_error(error: BaseException | str) -> tuple[str, str]:
    """``(stack trace, message)`` of an exception, or of a stack trace text (its first line is
    the message).

    >>> format_error("Python ValueError raised\\nTraceback ...")
    ('Python ValueError raised\\nTraceback ...', 'Python ValueError raised')
    >>> format_error(ValueError("boom"))
    ('ValueError: boom\\n', 'ValueError: boom')
    """
    if isinstance(error, BaseException):
        trace = "".join(traceback.format_exception(error))
        message = "".join(traceback.format_exception_only(error)).strip()
        return trace, message
    text = str(error)
    first = next((line for line in text.splitlines() if line.strip()), "")
    return text, first.strip()


@dataclass
class _Entry:
    first: float
    last: float
    count: int
    message: str


class ExceptionLog:
    """The exceptions of the current interval, merged by stack trace.

    Args:
        wall: the wall clock (unix seconds), for first and last times.
        limit: distinct traces kept per interval; the rest only counted in `dropped`.

    >>> clock = iter([10.0, 11.5]).__next__
    >>> errors = ExceptionLog(clock)
    >>> errors.add(ValueError("boom")); errors.add(ValueError("boom"))
    >>> [(e.count, e.firsttime, e.lasttime, e.logging) for e in errors.drain()]
    [(2, '1970-01-01T00:00:10.000Z', '1970-01-01T00:00:11.500Z', 'ValueError: boom')]
    >>> errors.drain()
    []
    """

    def __init__(self, wall: Callable[[], float] = time.time, limit: int = MAX_EXCEPTIONS) -> None:
        self._wall = wall
        self._limit = limit
        self._entries: dict[str, _Entry] = {}
        self.dropped = 0
        """Cumulative: distinct traces beyond ``limit`` in an interval."""

    def add(self, error: BaseException | str) -> None:
        """Record one occurrence of ``error`` (an exception or a stack trace text)."""
        trace, message = format_error(error)
        now = self._wall()
        entry = self._entries.get(trace)
        if entry is not None:
            entry.count += 1
            entry.last = now
            entry.message = message
        elif len(self._entries) < self._limit:
            self._entries[trace] = _Entry(now, now, 1, message)
        else:
            self.dropped += 1

    def drain(self) -> list[metrics_pb2.ExceptionData]:
        """The interval's entries; the next interval starts empty."""
        entries, self._entries = self._entries, {}
        return [
            metrics_pb2.ExceptionData(
                stacktrace=trace,
                firsttime=iso_utc(e.first),
                lasttime=iso_utc(e.last),
                count=e.count,
                logging=e.message,
            )
            for trace, e in entries.items()
        ]


def metric_values(name: str, value: Any) -> Iterator[tuple[str, str]]:
    """The ``(name, value text)`` pairs a user metric's value publishes: None is skipped, a
    dict flattened as ``name/key`` (nested dicts too), a bool as 0 or 1, anything else its
    ``str``.

    >>> list(metric_values("words", {"a": 1, "b": None, "c": {"d": 2.5}}))
    [('words/a', '1'), ('words/c/d', '2.5')]
    >>> list(metric_values("up", True)), list(metric_values("gone", None))
    ([('up', '1')], [])
    """
    if value is None:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from metric_values(f"{name}/{key}", item)
    elif isinstance(value, bool):
        yield name, str(int(value))
    else:
        yield name, str(value)


def _hint(metric: Any) -> metrics_pb2.MetricType.ValueType:
    kind = getattr(metric, "metric_type", None)
    if isinstance(kind, str):
        kind = kind.upper()
    return _HINTS.get(kind, LAST)


@dataclass
class _UserMetric:
    metric: Any
    bucket_s: float
    due: float


class InstanceMetrics:
    """Counters, latencies, gauges, user metrics and exceptions of one instance.

    Args:
        component: the component's name.
        instance_id: the instance's id.
        index: its index in the component.
        clock: monotonic seconds (time buckets, process sampling).
        wall: unix seconds (message timestamps, exception times).

    Attributes:
        counters: cumulative counts by metric name; the runtime updates them.
        gauges: newest values by metric name.
        exceptions: the interval's exceptions.
        export_s: ``heron.metrics.export.interval.sec``.
        sample_s: ``heron.instance.metrics.system.sample.interval.sec``.
    """

    def __init__(
        self,
        component: str,
        instance_id: str,
        index: int,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.counters: dict[str, int] = defaultdict(int)
        self.gauges: dict[str, float] = {}
        self.exceptions = ExceptionLog(wall)
        self.export_s = 1.0
        self.sample_s = 10.0
        self._clock = clock
        self._wall = wall
        self._sent: dict[str, int] = {}
        self._latency_sum: dict[str, float] = defaultdict(float)
        self._latency_n: dict[str, int] = defaultdict(int)
        self._user: dict[str, _UserMetric] = {}
        self._next_sample = -float("inf")
        self._process: psutil.Process | None = None
        self._where = f"component {component!r}, instance {instance_id}"
        self._publisher = metrics_pb2.MetricPublisher(
            component_name=component, instance_id=instance_id, instance_index=index
        )

    def add_latency(self, name: str, total_ms: float, count: int) -> None:
        """Add ``count`` samples summing ``total_ms`` to latency ``name`` of this interval."""
        self._latency_sum[name] += total_ms
        self._latency_n[name] += count

    def register(self, name: str, metric: Any, time_bucket_in_sec: float) -> None:
        """Publish ``metric`` (with ``get_value_and_reset``) every ``time_bucket_in_sec``.

        Raises:
            ValueError: a bad name, a name registered already, no ``get_value_and_reset``,
                or a bucket that is not a positive number.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self._where}: a metric name must be a non-empty string: {name!r}")
        if name in self._user:
            raise ValueError(f"{self._where}: a metric named {name!r} is registered already")
        if not callable(getattr(metric, "get_value_and_reset", None)):
            raise ValueError(
                f"{self._where}: metric {name!r} is a {type(metric).__name__}, which has no "
                "get_value_and_reset() method"
            )
        numeric = isinstance(time_bucket_in_sec, int | float) and not isinstance(
            time_bucket_in_sec, bool
        )
        if not numeric or not time_bucket_in_sec > 0:
            raise ValueError(
                f"{self._where}: metric {name!r}: time_bucket_in_sec must be a positive "
                f"number of seconds, got {time_bucket_in_sec!r}"
            )
        bucket = float(time_bucket_in_sec)
        self._user[name] = _UserMetric(metric, bucket, self._clock() + bucket)

    def snapshot(self, final: bool = False) -> metrics_pb2.MetricPublisherPublishMessage:
        """The message of the interval that ends now; the next interval starts.

        With ``final``, every user metric is read whatever its bucket, and the process is
        sampled (the last message before the instance exits).
        """
        now = self._clock()
        message = metrics_pb2.MetricPublisherPublishMessage(
            publisher=self._publisher, timestamp=int(self._wall() * 1000)
        )
        add = message.metrics.add
        counters = self.counters
        counters["__exceptions-dropped"] = self.exceptions.dropped
        sent = self._sent
        for name, value in counters.items():
            add(name=name, value=str(value - sent.get(name, 0)), type=SUM)
            sent[name] = value
        for name, total in self._latency_sum.items():
            n = self._latency_n[name]
            if n:
                add(name=name, value=f"{total / n:.3f}", type=AVG)
        self._latency_sum.clear()
        self._latency_n.clear()
        if final or now >= self._next_sample:
            self._sample_process()
            self._next_sample = now + self.sample_s
        for name, gauge in self.gauges.items():
            add(name=name, value=str(gauge), type=LAST)
        self._read_user_metrics(message, now, final)
        message.exceptions.extend(self.exceptions.drain())
        return message

    def _sample_process(self) -> None:
        try:
            if self._process is None:
                self._process = psutil.Process()
            cpu = self._process.cpu_times()
            rss = self._process.memory_info().rss
        except psutil.Error as exc:  # pragma: no cover - /proc unreadable
            log.warning("%s: cannot sample the process: %s", self._where, exc)
            return
        self.gauges["__py-user-cpu-time-secs"] = round(cpu.user, 3)
        self.gauges["__py-sys-cpu-time-secs"] = round(cpu.system, 3)
        self.gauges["__py-physical-memory-byte"] = rss

    def _read_user_metrics(
        self, message: metrics_pb2.MetricPublisherPublishMessage, now: float, final: bool
    ) -> None:
        """Read the user metrics whose bucket has passed (within half an export interval, so
        that a bucket equal to the interval is read at every export)."""
        slack = self.export_s / 2
        add = message.metrics.add
        for name, user in self._user.items():
            if not final and now + slack < user.due:
                continue
            while user.due <= now + slack:
                user.due += user.bucket_s
            metric = user.metric
            hint = _hint(metric)
            try:
                value = metric.get_value_and_reset()
                pairs = list(metric_values(name, value))
            except Exception as exc:
                log.exception(
                    "%s: user metric %r: %s.get_value_and_reset() raised; its value is skipped",
                    self._where,
                    name,
                    type(metric).__qualname__,
                )
                self.exceptions.add(exc)
                continue
            for key, text in pairs:
                add(name=key, value=text, type=hint)
