"""The topology manager's metrics cache and exception log (Heron's metrics collector).

Every container's metrics manager forwards what its instances and stream manager published
(``PublishMetrics`` on the server port). Each `MetricDatum` value covers one export interval:
a count since the previous message, the interval's average latency, the newest gauge. The
cache aggregates them per instance and metric name by the metric's type (`MetricTypes`):

* ``SUM`` adds the intervals' values;
* ``AVG`` is the mean of the intervals' values;
* ``LAST`` is the value with the newest timestamp.

It keeps the all-time aggregate and one aggregate per minute (``floor(timestamp / 60 s)``) for
the last ``heron.tmanager.metrics.collector.maximum.interval.min`` minutes, and an exception log
of at most ``heron.tmanager.metrics.collector.maximum.exception`` entries. It answers the stats
port's queries (`MetricsCache.latest`, `MetricsCache.metrics`, `MetricsCache.exceptions`)
without raising: a bad query gets a NOTOK status naming the topology and component.

Memory is bounded: at most ``heron.tmanager.metrics.collector.maximum.metrics`` series
(instance, metric name), each holding at most one bucket per minute of the window (three
machine numbers a bucket), plus the capped exception log.
"""

from __future__ import annotations

import logging
import math
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, TypeAlias

from heron_core.config import REGISTRY
from heron_core.executor import stmgr_name
from heron_core.metricsmgr import AVG, LAST, STMGR_COMPONENT, SUM, MetricTypes
from heron_core.proto import (
    common_pb2,
    metrics_pb2,
    packing_plan_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.tmanager._registration import instance_id

__all__ = ["BUCKET_S", "MetricsCache", "planned_instances"]

logger = logging.getLogger(__name__)

BUCKET_S = 60
"""Seconds per bucket of the timeline."""

MAX_INTERVAL_KEY = "heron.tmanager.metrics.collector.maximum.interval.min"
MAX_EXCEPTION_KEY = "heron.tmanager.metrics.collector.maximum.exception"
MAX_METRICS_KEY = "heron.tmanager.metrics.collector.maximum.metrics"
_SINKS_KEY = "heron.metrics.sinks"

_KINDS = frozenset({SUM, AVG, LAST})
_WARNING_INTERVAL_S = 10.0
_INT32_MAX = 2**31 - 1

Number = int | float


def planned_instances(
    topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
) -> dict[str, frozenset[str]]:
    """The instance ids the packing plan gives each component of ``topology``, and the stream
    managers' ids under `STMGR_COMPONENT` (they publish metrics of their own).

    >>> from heron_core.proto import packing_plan_pb2 as pp, topology_pb2 as tp
    >>> topology = tp.Topology(spouts=[tp.Spout(comp=tp.Component(name="word"))])
    >>> plan = pp.PackingPlan(containers=[pp.ContainerPlan(
    ...     id=1, instances=[pp.InstancePlan(component_name="word", task_id=2)])])
    >>> planned_instances(topology, plan)
    {'word': frozenset({'container_1_word_2'}), '__stmgr__': frozenset({'stmgr-1'})}
    """
    found: dict[str, set[str]] = {c.comp.name: set() for c in topology.spouts}
    found.update({c.comp.name: set() for c in topology.bolts})
    found[STMGR_COMPONENT] = {stmgr_name(c.id) for c in packing_plan.containers}
    for container in packing_plan.containers:
        for plan in container.instances:
            found.setdefault(plan.component_name, set()).add(
                instance_id(container.id, plan.component_name, plan.task_id)
            )
    return {name: frozenset(ids) for name, ids in found.items()}


Kind: TypeAlias = metrics_pb2.MetricType.ValueType


def _text(kind: Kind, integral: bool, value: Number) -> str:
    """A value as answered: integers without ".0" for a SUM or LAST of integers."""
    if integral and kind != AVG:
        return str(int(value))
    return repr(float(value))


class _Series:
    """One metric of one instance: the all-time aggregate and the minute buckets.

    The buckets are three parallel arrays sorted by minute: the minute, then for SUM and AVG the
    sum and the number of intervals, for LAST the newest value and its timestamp (ms).
    """

    __slots__ = ("aux", "count", "integral", "kind", "last", "last_ts", "minute", "total", "value")

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.integral = True
        self.total: Number = 0
        self.count = 0
        self.last: Number = 0
        self.last_ts = -1
        self.minute = array("q")
        self.value = array("d")
        self.aux = array("d")

    def add(self, value: Number, ts_ms: int, minute: int, oldest: int) -> None:
        """Account one interval's ``value`` stamped ``ts_ms`` (in bucket ``minute``); no bucket
        when ``minute`` is older than ``oldest``."""
        if type(value) is float:
            self.integral = False
        self.count += 1
        last = self.kind == LAST
        if last:
            if ts_ms >= self.last_ts:
                self.last = value
                self.last_ts = ts_ms
        else:
            self.total += value
        if minute < oldest:
            return
        minutes = self.minute
        if minutes and minutes[-1] == minute:
            pos = len(minutes) - 1
        elif not minutes or minutes[-1] < minute:
            minutes.append(minute)
            self.value.append(value)
            self.aux.append(ts_ms if last else 1)
            return
        else:  # an interval of an earlier minute arriving late
            pos = bisect_left(minutes, minute)
            if minutes[pos] != minute:
                minutes.insert(pos, minute)
                self.value.insert(pos, value)
                self.aux.insert(pos, ts_ms if last else 1)
                return
        if last:
            if ts_ms >= self.aux[pos]:
                self.value[pos] = value
                self.aux[pos] = ts_ms
        else:
            self.value[pos] += value
            self.aux[pos] += 1

    def purge(self, oldest: int) -> None:
        """Drop the buckets of minutes before ``oldest``."""
        cut = bisect_left(self.minute, oldest)
        if cut:
            del self.minute[:cut]
            del self.value[:cut]
            del self.aux[:cut]

    def all_time(self) -> str:
        if self.kind == LAST:
            return _text(LAST, self.integral, self.last)
        if self.kind == AVG:
            return _text(AVG, False, self.total / self.count)
        return _text(self.kind, self.integral, self.total)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """The positions ``[lo, hi)`` of the buckets of minutes ``first..last``."""
        return bisect_left(self.minute, first), bisect_right(self.minute, last)

    def minutes(self, lo: int, hi: int) -> Iterator[tuple[int, str]]:
        """(minute, value) of each bucket ``lo..hi-1``."""
        minutes, values = self.minute[lo:hi], self.value[lo:hi]
        if self.kind == AVG:
            for minute, total, count in zip(minutes, values, self.aux[lo:hi], strict=True):
                yield minute, repr(total / count)
        elif self.integral:
            for minute, value in zip(minutes, values, strict=True):
                yield minute, str(int(value))
        else:
            for minute, value in zip(minutes, values, strict=True):
                yield minute, repr(value)

    def over(self, lo: int, hi: int) -> str:
        """The aggregate of buckets ``lo..hi-1`` (at least one)."""
        if self.kind == LAST:  # buckets are in time order: the newest value is the last one's
            return _text(LAST, self.integral, self.value[hi - 1])
        total = math.fsum(self.value[lo:hi])
        if self.kind == AVG:
            return _text(AVG, False, total / math.fsum(self.aux[lo:hi]))
        return _text(self.kind, self.integral, total)


class _Instance:
    __slots__ = ("publisher", "series", "timestamp")

    def __init__(self, publisher: metrics_pb2.MetricPublisher) -> None:
        self.publisher = publisher
        self.timestamp = -1
        self.series: dict[str, _Series] = {}


class _Exception:
    __slots__ = (
        "component",
        "count",
        "first",
        "first_text",
        "hostname",
        "last",
        "last_text",
        "logging",
    )

    def __init__(self, component: str, hostname: str) -> None:
        self.component = component
        self.hostname = hostname
        self.first = math.inf
        self.first_text = ""
        self.last = -math.inf
        self.last_text = ""
        self.count = 0
        self.logging = ""


def _iso(unix_s: float) -> str:
    """ISO 8601 UTC of unix seconds ("" for a time no datetime can hold)."""
    try:
        return datetime.fromtimestamp(unix_s, UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        return ""


def _unix(text: str) -> float | None:
    """Unix seconds of an ISO 8601 time (UTC when it names no zone), None if unreadable."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _status(message: str = "") -> common_pb2.Status:
    if message:
        return common_pb2.Status(status=common_pb2.NOTOK, message=message)
    return common_pb2.Status(status=common_pb2.OK)


class MetricsCache:
    """The metrics and exceptions of one topology's instances, as the stats port answers them.

    Not thread-safe: the tmanager's poll loop is its only user.

    Args:
        types: how each metric aggregates.
        topology_name: named in answers and warnings.
        components: component name -> the instance ids the packing plan gives it. Queries may
            name these, and any component or instance that has published.
        max_minutes: minute buckets kept (the window of interval queries).
        max_exceptions: exception log entries kept; beyond it the entry whose last time is the
            oldest is dropped.
        max_series: (instance, metric) series kept, and instances; data for new ones beyond
            it is dropped with a warning.
        clock: unix seconds; the window and "the last N seconds" are read from it.

    >>> from heron_core.metricsmgr import SUM
    >>> cache = MetricsCache(MetricTypes({}), clock=lambda: 130.0)
    >>> pub = metrics_pb2.MetricPublisher(component_name="word", instance_id="container_1_word_1")
    >>> def interval(at_ms, count):
    ...     return metrics_pb2.MetricPublisherPublishMessage(publisher=pub, timestamp=at_ms,
    ...         metrics=[metrics_pb2.MetricDatum(name="__emit-count/default", value=count,
    ...                                          type=SUM)])
    >>> cache.publish([interval(59_000, "3"), interval(61_000, "4"), interval(121_000, "5")])
    >>> [d.value for d in cache.latest("word")[0].metrics]
    ['12']
    >>> answer = cache.metrics(tmanager_pb2.MetricRequest(
    ...     component_name="word", metric=["__emit-count/"], interval=10, minutely=True))
    >>> [(m.name, m.value, [v.value for v in m.interval_values]) for m in answer.metric[0].metric]
    [('__emit-count/default', '5', ['5'])]
    >>> cache.metrics(tmanager_pb2.MetricRequest(component_name="nope")).status.message
    "topology '': no component 'nope' (components: ['word'])"
    """

    def __init__(
        self,
        types: MetricTypes,
        *,
        topology_name: str = "",
        components: Mapping[str, Collection[str]] | None = None,
        max_minutes: int = REGISTRY[MAX_INTERVAL_KEY].default,
        max_exceptions: int = REGISTRY[MAX_EXCEPTION_KEY].default,
        max_series: int = REGISTRY[MAX_METRICS_KEY].default,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._types = types
        self._topology = topology_name
        self._planned = {name: frozenset(ids) for name, ids in (components or {}).items()}
        self._max_minutes = max_minutes
        self._max_exceptions = max_exceptions
        self._max_series = max_series
        self._clock = clock
        self._started = clock()
        self._next_purge = self._started + BUCKET_S
        self._instances: dict[str, _Instance] = {}
        self._series = 0
        self._exceptions: dict[tuple[str, str], _Exception] = {}
        self._quiet_until: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        topology_name: str,
        components: Mapping[str, Collection[str]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> MetricsCache:
        """A cache sized and typed by a topology config (registry defaults for missing keys).

        Raises:
            ConfigurationError: a bad value of one of the keys, or a bad metric type table.
        """
        where = f"the topology config of {topology_name!r}"

        def get(name: str) -> Any:
            key = REGISTRY[name]
            return key.check(config.get(name, key.default), where)

        sinks = config if _SINKS_KEY in config else {_SINKS_KEY: REGISTRY[_SINKS_KEY].default}
        return cls(
            MetricTypes.from_config(sinks),
            topology_name=topology_name,
            components=components,
            max_minutes=get(MAX_INTERVAL_KEY),
            max_exceptions=get(MAX_EXCEPTION_KEY),
            max_series=get(MAX_METRICS_KEY),
            clock=clock,
        )

    # ------------------------------------------------------------------------------ intake

    def publish(self, messages: Iterable[metrics_pb2.MetricPublisherPublishMessage]) -> None:
        """Account each message: one export interval of one instance.

        A message without ``publisher.instance_id``, a value that is not a finite number and a
        series beyond the cap are dropped with a rate-limited warning. A message without a
        timestamp counts as now. Never raises for bad content.
        """
        now = self._clock()
        if now >= self._next_purge:
            self.purge()
        oldest = self._oldest_minute(now)
        instances = self._instances
        for message in messages:
            publisher = message.publisher
            iid = publisher.instance_id
            instance = instances.get(iid)
            if instance is None:
                if not iid:
                    self._warn(now, "id", "dropping metrics without publisher.instance_id")
                    continue
                if len(instances) >= self._max_series:
                    self._warn(now, "cap", "dropping metrics of instance %r: %s", iid, self._full())
                    continue
                instance = instances[iid] = _Instance(metrics_pb2.MetricPublisher())
            ts = message.timestamp or int(now * 1000)
            if ts >= instance.timestamp:
                instance.timestamp = ts
                if instance.publisher != publisher:
                    instance.publisher = metrics_pb2.MetricPublisher()
                    instance.publisher.CopyFrom(publisher)
            minute = ts // (BUCKET_S * 1000)
            series = instance.series
            for datum in message.metrics:
                name = datum.name
                text = datum.value
                try:
                    value: Number = int(text)
                except ValueError:
                    try:
                        value = float(text)
                    except ValueError:
                        value = math.nan
                    if not math.isfinite(value):
                        self._warn(
                            now,
                            "value",
                            "instance %r, metric %r: value %r is not a finite number; dropped",
                            iid,
                            name,
                            text,
                        )
                        continue
                one = series.get(name)
                if one is None:
                    if self._series >= self._max_series or not name:
                        why = self._full() if name else "the metric has no name"
                        self._warn(now, "cap", "instance %r, metric %r dropped: %s", iid, name, why)
                        continue
                    hint = datum.type if datum.type in _KINDS else metrics_pb2.METRIC_TYPE_UNSET
                    one = series[name] = _Series(self._types.type_of(name, hint))
                    self._series += 1
                one.add(value, ts, minute, oldest)
            if message.exceptions:
                self._log_exceptions(instance, message, ts)

    def _full(self) -> str:
        return (
            f"the metrics cache holds {self._max_series} series or instances "
            f"(raise {MAX_METRICS_KEY!r})"
        )

    def _log_exceptions(
        self, instance: _Instance, message: metrics_pb2.MetricPublisherPublishMessage, ts: int
    ) -> None:
        publisher = instance.publisher
        fallback = ts / 1000
        for data in message.exceptions:
            key = (publisher.instance_id, data.stacktrace)
            entry = self._exceptions.get(key)
            if entry is None:
                if len(self._exceptions) >= self._max_exceptions:
                    stale = min(self._exceptions, key=lambda k: self._exceptions[k].last)
                    del self._exceptions[stale]
                entry = self._exceptions[key] = _Exception(
                    publisher.component_name, publisher.hostname
                )
            first_read = _unix(data.firsttime)
            last_read = _unix(data.lasttime)
            if last_read is not None:
                last = last_read
            else:
                last = fallback if first_read is None else max(first_read, fallback)
            first = last if first_read is None else first_read
            if first < entry.first:
                entry.first = first
                entry.first_text = data.firsttime if first_read is not None else _iso(first)
            if last >= entry.last:
                entry.last = last
                entry.last_text = data.lasttime if last_read is not None else _iso(last)
                entry.logging = data.logging
                entry.component = publisher.component_name
                entry.hostname = publisher.hostname
            entry.count = min(_INT32_MAX, entry.count + max(data.count, 1))

    def purge(self) -> None:
        """Drop buckets older than the window (`publish` calls it about once a minute)."""
        now = self._clock()
        oldest = self._oldest_minute(now)
        for instance in self._instances.values():
            for one in instance.series.values():
                one.purge(oldest)
        self._next_purge = now + BUCKET_S

    def _oldest_minute(self, now: float) -> int:
        return int(now // BUCKET_S) - self._max_minutes + 1

    def _warn(self, now: float, kind: str, fmt: str, *args: Any) -> None:
        """Log at most one warning of ``kind`` every 10 s, counting the ones held back."""
        if now < self._quiet_until.get(kind, -math.inf):
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return
        held = self._suppressed.pop(kind, 0)
        suffix = f" ({held} more like it in the last {_WARNING_INTERVAL_S:g} s)" if held else ""
        logger.warning("topology %r: " + fmt + "%s", self._topology, *args, suffix)
        self._quiet_until[kind] = now + _WARNING_INTERVAL_S

    # ------------------------------------------------------------------------------ answers

    def latest(self, component_name: str = "") -> list[metrics_pb2.MetricPublisherPublishMessage]:
        """The legacy ``MetricsResponse``: per instance of ``component_name`` (every one when
        empty), sorted by id, one message holding the all-time value of each metric (sorted by
        name), stamped with the newest interval's timestamp."""
        answer = []
        for iid in sorted(self._instances):
            instance = self._instances[iid]
            if component_name and instance.publisher.component_name != component_name:
                continue
            answer.append(
                metrics_pb2.MetricPublisherPublishMessage(
                    publisher=instance.publisher,
                    timestamp=instance.timestamp,
                    metrics=[
                        metrics_pb2.MetricDatum(name=name, value=one.all_time(), type=one.kind)
                        for name, one in sorted(instance.series.items())
                    ],
                )
            )
        return answer

    def metrics(self, request: tmanager_pb2.MetricRequest) -> tmanager_pb2.MetricResponse:
        """Answer Heron's metric query.

        ``component_name`` is required; ``instance_id`` filters (empty: every instance of the
        component that published); ``metric`` names metrics, a name ending in "/" every metric
        it prefixes (empty: every metric). ``interval`` -1 asks for all-time values, N > 0 for
        the buckets of the last N seconds; ``explicit_interval`` (unix seconds, inclusive)
        wins when set. ``minutely`` adds each minute bucket's value, oldest first. A metric with
        no bucket in the asked interval is left out. The answer's ``interval`` is the seconds
        covered (for all time: since the cache started).

        Unknown component or instance, or a bad interval: status NOTOK with a message.
        """
        now = self._clock()
        instances, problem = self._select(request.component_name, request.instance_id)
        if problem:
            return tmanager_pb2.MetricResponse(status=_status(problem))
        where = f"topology {self._topology!r}, component {request.component_name!r}"
        oldest = self._oldest_minute(now)
        all_time = False
        if request.HasField("explicit_interval"):
            start, end = request.explicit_interval.start, request.explicit_interval.end
            if not 0 <= start <= end:
                return tmanager_pb2.MetricResponse(
                    status=_status(
                        f"{where}: explicit_interval start {start}, end {end}: expected unix "
                        "seconds with 0 <= start <= end"
                    )
                )
            first, last, covered = start // BUCKET_S, end // BUCKET_S, end - start
        elif request.interval == -1:
            all_time = True
            first, last, covered = oldest, 2**62, int(now - self._started)
        elif request.interval > 0:
            start = int(now) - request.interval
            first, last, covered = start // BUCKET_S, 2**62, request.interval
        else:
            return tmanager_pb2.MetricResponse(
                status=_status(
                    f"{where}: interval {request.interval}: expected -1 (all time) or a "
                    "number of seconds > 0"
                )
            )
        first = max(first, oldest)
        exact = {name for name in request.metric if not name.endswith("/")}
        prefixes = tuple(name for name in request.metric if name.endswith("/"))
        response = tmanager_pb2.MetricResponse(status=_status(), interval=covered)
        for iid, instance in instances:
            task = response.metric.add(instance_id=iid)
            if instance is None:
                continue
            for name in sorted(instance.series):
                if request.metric and name not in exact and not name.startswith(prefixes):
                    continue
                one = instance.series[name]
                lo, hi = one.span(first, last)
                if all_time:
                    value = one.all_time()
                elif lo < hi:
                    value = one.over(lo, hi)
                else:
                    continue
                metric = task.metric.add(name=name, value=value)
                if request.minutely:
                    add = metric.interval_values.add
                    for minute, text in one.minutes(lo, hi):
                        bucket = add(value=text).interval
                        bucket.start = start = minute * BUCKET_S
                        bucket.end = start + BUCKET_S - 1
        return response

    def exceptions(
        self, request: tmanager_pb2.ExceptionLogRequest
    ) -> tmanager_pb2.ExceptionLogResponse:
        """Answer an exception log query: the entries of ``component_name`` (required),
        filtered by ``instances`` (empty: all), the most recent first. Unknown component or
        instance: status NOTOK with a message."""
        instances, problem = self._select(request.component_name, request.instances)
        if problem:
            return tmanager_pb2.ExceptionLogResponse(status=_status(problem))
        wanted = {iid for iid, _ in instances} if request.instances else None
        found = [
            (key, entry)
            for key, entry in self._exceptions.items()
            if entry.component == request.component_name and (wanted is None or key[0] in wanted)
        ]
        found.sort(key=lambda item: (-item[1].last, item[0]))
        return tmanager_pb2.ExceptionLogResponse(
            status=_status(),
            exceptions=[
                tmanager_pb2.TmanagerExceptionLog(
                    component_name=entry.component,
                    hostname=entry.hostname,
                    instance_id=iid,
                    stacktrace=stacktrace,
                    lasttime=entry.last_text,
                    firsttime=entry.first_text,
                    count=entry.count,
                    logging=entry.logging,
                )
                for (iid, stacktrace), entry in found
            ],
        )

    def _select(
        self, component: str, asked: Collection[str]
    ) -> tuple[list[tuple[str, _Instance | None]], str]:
        """The instances a query names, sorted by id (None for one planned that never
        published), or a problem to answer."""
        if not component:
            return [], f"topology {self._topology!r}: a component_name is required"
        published = {
            iid: instance
            for iid, instance in self._instances.items()
            if instance.publisher.component_name == component
        }
        planned = self._planned.get(component)
        if planned is None and not published:
            known = set(self._planned)
            known.update(i.publisher.component_name for i in self._instances.values())
            return [], (
                f"topology {self._topology!r}: no component {component!r} "
                f"(components: {sorted(known)})"
            )
        if not asked:
            return sorted(published.items()), ""
        everyone = published.keys() | (planned or frozenset())
        unknown = sorted(set(asked) - everyone)
        if unknown:
            return [], (
                f"topology {self._topology!r}, component {component!r}: no instance "
                f"{', '.join(map(repr, unknown))} (instances: {sorted(everyone)})"
            )
        return [(iid, published.get(iid)) for iid in sorted(set(asked))], ""
