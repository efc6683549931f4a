"""What a windowed component asked for: `WindowSpec`, read from its config and checked.

The config keys are Storm's (``topology.bolts.*``, ``org.apache.storm.Config``); Storm's
``BaseWindowedBolt`` builder methods set them and ``WindowedBoltExecutor`` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from heron_core.errors import ConfigurationError

__all__ = [
    "DEFAULT_WATERMARK_INTERVAL_MS",
    "LATE_TUPLE_STREAM",
    "LENGTH_COUNT",
    "LENGTH_DURATION_MS",
    "MAX_LAG_MS",
    "SLIDING_COUNT",
    "SLIDING_DURATION_MS",
    "TIMESTAMP_FIELD",
    "WATERMARK_INTERVAL_MS",
    "WindowConfigError",
    "WindowSpec",
]

LENGTH_COUNT = "topology.bolts.window.length.count"
LENGTH_DURATION_MS = "topology.bolts.window.length.duration.ms"
SLIDING_COUNT = "topology.bolts.window.sliding.interval.count"
SLIDING_DURATION_MS = "topology.bolts.window.sliding.interval.duration.ms"
TIMESTAMP_FIELD = "topology.bolts.tuple.timestamp.field.name"
MAX_LAG_MS = "topology.bolts.tuple.timestamp.max.lag.ms"
WATERMARK_INTERVAL_MS = "topology.bolts.watermark.event.interval.ms"
LATE_TUPLE_STREAM = "topology.bolts.late.tuple.stream"

DEFAULT_WATERMARK_INTERVAL_MS = 1000
"""Storm's default watermark interval (``WindowedBoltExecutor``)."""

MESSAGE_TIMEOUT_SECS = "topology.message.timeout.secs"
ENABLE_MESSAGE_TIMEOUTS = "topology.enable.message.timeouts"
MAX_SPOUT_PENDING = "topology.max.spout.pending"
DEFAULT_MESSAGE_TIMEOUT_SECS = 30


class WindowConfigError(ConfigurationError):
    """A windowed component's settings are missing, contradictory or out of range.

    Attributes:
        setting: the config key at fault (the builder method that sets it is in the message).
        problem: what is wrong, without the component's name (the caller adds it).
    """

    def __init__(self, setting: str, problem: str) -> None:
        self.setting = setting
        self.problem = problem
        super().__init__(f"{setting}: {problem}")


def _positive(config: Mapping[str, Any], key: str, method: str) -> int | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise WindowConfigError(key, f"must be a positive int (set by {method}), got {value!r}")
    return value


@dataclass(frozen=True)
class WindowSpec:
    """A window's length and slide (each a count of events or a duration in ms, exactly one
    of the pair set) and its notion of time.

    Attributes:
        length_count: the window holds the last this many events.
        length_ms: the window holds the events of the last this many milliseconds.
        slide_count: the window fires every this many events.
        slide_ms: the window fires every this many milliseconds.
        event_time: windows go by each event's own timestamp, advanced by watermarks;
            otherwise by the time each event arrived (processing time).
        lag_ms: event time: how far out of order timestamps may arrive (a watermark trails
            the latest timestamp of the slowest input stream by this).
        watermark_interval_ms: event time: milliseconds between two watermarks.
        late_stream: event time: the stream late events are emitted on, or None (dropped).

    >>> WindowSpec.from_config({LENGTH_COUNT: 3, SLIDING_COUNT: 1}).describe()
    'sliding count window of 3 events, every 1 event, processing time'
    >>> WindowSpec.from_config({LENGTH_DURATION_MS: 500}, event_time=True).timer_period_ms
    1000
    >>> WindowSpec.from_config({LENGTH_COUNT: 2, SLIDING_COUNT: 3})
    Traceback (most recent call last):
    ...
    heron_core.windowing._spec.WindowConfigError: topology.bolts.window.sliding.interval.count: \
the sliding interval (3 events) is longer than the window (2 events): events between windows \
would never be in one (withWindow(length, slidingInterval) takes the length first)
    """

    length_count: int | None = None
    length_ms: int | None = None
    slide_count: int | None = None
    slide_ms: int | None = None
    event_time: bool = False
    lag_ms: int = 0
    watermark_interval_ms: int = DEFAULT_WATERMARK_INTERVAL_MS
    late_stream: str | None = None

    def __post_init__(self) -> None:
        if (self.length_count is None) == (self.length_ms is None):
            raise ValueError("a WindowSpec needs exactly one of length_count and length_ms")
        if (self.slide_count is None) == (self.slide_ms is None):
            raise ValueError("a WindowSpec needs exactly one of slide_count and slide_ms")

    @property
    def timer_period_ms(self) -> int | None:
        """How often something is due by the clock alone (ms): the watermark interval in
        event time, the sliding interval of a processing-time window that slides by time,
        else None (the window fires only as events arrive)."""
        if self.event_time:
            return self.watermark_interval_ms
        return self.slide_ms

    def describe(self) -> str:
        """A short human description, for logs."""

        def amount(count: int | None, ms: int | None) -> str:
            if count is not None:
                return f"{count} event{'s' if count != 1 else ''}"
            return f"{ms} ms"

        tumbling = (self.length_count, self.length_ms) == (self.slide_count, self.slide_ms)
        kind = "count" if self.length_count is not None else "duration"
        length = amount(self.length_count, self.length_ms)
        text = f"{'tumbling' if tumbling else 'sliding'} {kind} window of {length}"
        if not tumbling:
            text += f", every {amount(self.slide_count, self.slide_ms)}"
        if self.event_time:
            return text + f", event time (lag {self.lag_ms} ms)"
        return text + ", processing time"

    @classmethod
    def from_config(cls, config: Mapping[str, Any], event_time: bool = False) -> WindowSpec:
        """The window a component's effective config (topology config overlaid with the
        component's) asks for.

        Args:
            config: the keys of this module (None or absent = unset), and the message timeout
                and max spout pending, which bound the window as Storm's
                ``WindowedBoltExecutor.validate`` does.
            event_time: the component extracts timestamps in code (Storm's
                ``withTimestampExtractor``); a ``TIMESTAMP_FIELD`` in the config also means
                event time.

        Raises:
            WindowConfigError: naming the setting: no length or two lengths, two sliding
                intervals, a count or duration that is not positive, a sliding interval longer
                than the length (same unit), a lag, watermark interval or late-tuple stream
                without event time, or a window longer than the message timeout (durations)
                or the max spout pending (counts).
        """
        length_count = _positive(config, LENGTH_COUNT, "withWindow/withTumblingWindow")
        length_ms = _positive(config, LENGTH_DURATION_MS, "withWindow/withTumblingWindow")
        slide_count = _positive(config, SLIDING_COUNT, "withWindow/withTumblingWindow")
        slide_ms = _positive(config, SLIDING_DURATION_MS, "withWindow/withTumblingWindow")
        if length_count is None and length_ms is None:
            raise WindowConfigError(
                LENGTH_COUNT,
                f"a windowed bolt needs a window length ({LENGTH_COUNT} or {LENGTH_DURATION_MS}"
                ", set by withWindow or withTumblingWindow)",
            )
        if length_count is not None and length_ms is not None:
            raise WindowConfigError(
                LENGTH_DURATION_MS,
                f"the window length is set both as a count ({length_count}) and as a duration "
                f"({length_ms} ms): set one",
            )
        if slide_count is not None and slide_ms is not None:
            raise WindowConfigError(
                SLIDING_DURATION_MS,
                f"the sliding interval is set both as a count ({slide_count}) and as a "
                f"duration ({slide_ms} ms): set one",
            )
        if slide_count is None and slide_ms is None:
            slide_count = 1  # Storm's default: the window slides with every event
        if length_count is not None and slide_count is not None and slide_count > length_count:
            raise WindowConfigError(
                SLIDING_COUNT,
                f"the sliding interval ({slide_count} events) is longer than the window "
                f"({length_count} events): events between windows would never be in one "
                "(withWindow(length, slidingInterval) takes the length first)",
            )
        if length_ms is not None and slide_ms is not None and slide_ms > length_ms:
            raise WindowConfigError(
                SLIDING_DURATION_MS,
                f"the sliding interval ({slide_ms} ms) is longer than the window ({length_ms} "
                "ms): events between windows would never be in one "
                "(withWindow(length, slidingInterval) takes the length first)",
            )
        event_time = event_time or config.get(TIMESTAMP_FIELD) is not None
        lag = config.get(MAX_LAG_MS)
        interval = config.get(WATERMARK_INTERVAL_MS)
        late = config.get(LATE_TUPLE_STREAM)
        if not event_time:
            for key, value, method in (
                (MAX_LAG_MS, lag, "withLag"),
                (WATERMARK_INTERVAL_MS, interval, "withWatermarkInterval"),
                (LATE_TUPLE_STREAM, late, "withLateTupleStream"),
            ):
                if value is not None:
                    raise WindowConfigError(
                        key,
                        f"{method} ({value!r}) needs event time: set a timestamp field "
                        "(withTimestampField) or extractor (withTimestampExtractor) first",
                    )
        if lag is not None and (isinstance(lag, bool) or not isinstance(lag, int) or lag < 0):
            raise WindowConfigError(MAX_LAG_MS, f"must be an int >= 0 (withLag), got {lag!r}")
        watermark_ms = _positive(config, WATERMARK_INTERVAL_MS, "withWatermarkInterval")
        if late is not None and (not isinstance(late, str) or not late):
            raise WindowConfigError(
                LATE_TUPLE_STREAM, f"must be a stream id (withLateTupleStream), got {late!r}"
            )
        spec = cls(
            length_count,
            length_ms,
            slide_count,
            slide_ms,
            event_time,
            lag or 0,
            watermark_ms or DEFAULT_WATERMARK_INTERVAL_MS,
            late,
        )
        spec._check_bounds(config)
        return spec

    def _check_bounds(self, config: Mapping[str, Any]) -> None:
        """Storm's ``WindowedBoltExecutor.validate``: a window's events must not time out
        before it is done with them, nor exceed what the spouts may have pending."""
        durations = (self.length_ms or 0) + (self.slide_ms or 0)
        timeouts = config.get(ENABLE_MESSAGE_TIMEOUTS)
        timeout_s = config.get(MESSAGE_TIMEOUT_SECS)
        if timeout_s is None:
            timeout_s = DEFAULT_MESSAGE_TIMEOUT_SECS
        if durations and timeouts is not False and durations > timeout_s * 1000:
            raise WindowConfigError(
                MESSAGE_TIMEOUT_SECS,
                f"the window's duration (length + sliding interval) is {durations} ms, more "
                f"than the message timeout of {timeout_s} s: its tuples would time out before "
                "the window expires them; raise the timeout or shorten the window",
            )
        counts = (self.length_count or 0) + (self.slide_count or 0)
        pending = config.get(MAX_SPOUT_PENDING)
        if counts and pending is not None and counts > pending:
            raise WindowConfigError(
                MAX_SPOUT_PENDING,
                f"the window's count (length + sliding interval) is {counts}, more than the "
                f"max spout pending of {pending}: the spouts would stop before the window "
                "fills; raise the max spout pending or shorten the window",
            )
