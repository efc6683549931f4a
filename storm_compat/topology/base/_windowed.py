"""``BaseWindowedBolt``: a windowed bolt whose builder methods configure its window
(Storm's ``org.apache.storm.topology.base.BaseWindowedBolt``)."""

from __future__ import annotations

from typing import Any, TypeVar

from heron_core.windowing import (
    LATE_TUPLE_STREAM,
    LENGTH_COUNT,
    LENGTH_DURATION_MS,
    MAX_LAG_MS,
    SLIDING_COUNT,
    SLIDING_DURATION_MS,
    TIMESTAMP_FIELD,
    WATERMARK_INTERVAL_MS,
)
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology._declarer import OutputFieldsDeclarer
from storm_compat.windowing._executor import IWindowedBolt, TupleFieldTimestampExtractor
from storm_compat.windowing._window import TimestampExtractor, TimeUnit

__all__ = ["BaseWindowedBolt"]

B = TypeVar("B", bound="BaseWindowedBolt")


class _Count:
    """A number of tuples: a count window's length or sliding interval.

    >>> BaseWindowedBolt.Count.of(5) == BaseWindowedBolt.Count(5)
    True
    """

    def __init__(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"Count takes an int, got {value!r}")
        self.value = value

    @staticmethod
    def of(value: int) -> _Count:
        """``Count(value)``."""
        return _Count(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Count) and other.value == self.value

    def __hash__(self) -> int:
        return hash(("Count", self.value))

    def __repr__(self) -> str:
        return f"Count{{value={self.value}}}"


class _Duration:
    """A length of time, held in milliseconds: a duration window's length or sliding
    interval, a lag or a watermark interval.

    Raises:
        ValueError: a negative duration.
        TypeError: a value that is not an int, or a unit that is not a ``TimeUnit`` (or the
            name of one).

    >>> BaseWindowedBolt.Duration.seconds(2).value, BaseWindowedBolt.Duration(3, "MINUTES").value
    (2000, 180000)
    """

    def __init__(self, value: int, timeUnit: TimeUnit | str = TimeUnit.MILLISECONDS) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"Duration takes an int, got {value!r}")
        if value < 0:
            raise ValueError(f"Duration cannot be negative, got {value}")
        if isinstance(timeUnit, str):
            try:
                timeUnit = TimeUnit[timeUnit.upper()]
            except KeyError:
                raise TypeError(
                    f"unknown time unit {timeUnit!r}; use one of {[u.name for u in TimeUnit]}"
                ) from None
        if not isinstance(timeUnit, TimeUnit):
            raise TypeError(f"Duration takes a TimeUnit, got {timeUnit!r}")
        self.value = timeUnit.toMillis(value)

    @staticmethod
    def of(milliseconds: int) -> _Duration:
        """``milliseconds`` ms."""
        return _Duration(milliseconds, TimeUnit.MILLISECONDS)

    @staticmethod
    def seconds(seconds: int) -> _Duration:
        """``seconds`` s."""
        return _Duration(seconds, TimeUnit.SECONDS)

    @staticmethod
    def minutes(minutes: int) -> _Duration:
        """``minutes`` minutes."""
        return _Duration(minutes, TimeUnit.MINUTES)

    @staticmethod
    def hours(hours: int) -> _Duration:
        """``hours`` hours."""
        return _Duration(hours, TimeUnit.HOURS)

    @staticmethod
    def days(days: int) -> _Duration:
        """``days`` days."""
        return _Duration(days, TimeUnit.DAYS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Duration) and other.value == self.value

    def __hash__(self) -> int:
        return hash(("Duration", self.value))

    def __repr__(self) -> str:
        return f"Duration{{value={self.value}}}"


def _setting(what: str, value: object) -> tuple[str, int]:
    """The count or duration key of ``what`` ("length" or "sliding") and the value."""
    if isinstance(value, _Count):
        return (LENGTH_COUNT if what == "length" else SLIDING_COUNT), value.value
    if isinstance(value, _Duration):
        return (LENGTH_DURATION_MS if what == "length" else SLIDING_DURATION_MS), value.value
    name = "window length" if what == "length" else "sliding interval"
    raise TypeError(
        f"the {name} must be a BaseWindowedBolt.Count or BaseWindowedBolt.Duration, got {value!r}"
    )


class BaseWindowedBolt(IWindowedBolt):
    """A windowed bolt: implement ``execute(inputWindow)`` (and ``prepare``,
    ``declareOutputFields`` as needed), and configure the window with the builder methods,
    each of which returns the bolt.

    The window settings go into the bolt's component config (Storm's ``topology.bolts.*``
    keys), which ``TopologyBuilder.setBolt`` reads: call the builder methods before
    ``setBolt``. Wrong settings (no length, a non-positive count or duration, a sliding
    interval longer than the window, a lag or late-tuple stream without a timestamp field, a
    window longer than the message timeout) are refused when the topology is submitted, with
    the topology, the component and the setting named.

    Tuples are acked when they expire from the window; emits through the collector that
    ``prepare`` gets are anchored to every tuple of the current window unless given anchors.

    >>> from storm_compat.tuple import Fields, Values
    >>> class Sum(BaseWindowedBolt):
    ...     def prepare(self, topoConf, context, collector):
    ...         self.collector = collector
    ...     def execute(self, inputWindow):
    ...         self.collector.emit(Values(sum(t.getInteger(0) for t in inputWindow.get())))
    ...     def declareOutputFields(self, declarer):
    ...         declarer.declare(Fields("sum"))
    >>> bolt = Sum().withWindow(BaseWindowedBolt.Count(10), BaseWindowedBolt.Count(5))
    >>> for key, value in sorted(bolt.getComponentConfiguration().items()):
    ...     print(key, value)
    topology.bolts.window.length.count 10
    topology.bolts.window.sliding.interval.count 5
    """

    Count = _Count
    Duration = _Duration

    def __init__(self) -> None:
        self.windowConfiguration: dict[str, Any] = {}
        self.timestampExtractor: TimestampExtractor | None = None

    def _config(self) -> dict[str, Any]:
        # a subclass whose __init__ does not call super().__init__() still gets a config
        config = self.__dict__.get("windowConfiguration")
        if config is None:
            config = self.windowConfiguration = {}
        return config

    def _window(self: B, length: object, sliding: object) -> B:
        config = self._config()
        for what, value in (("length", length), ("sliding", sliding)):
            key, amount = _setting(what, value)
            for other in (
                (LENGTH_COUNT, LENGTH_DURATION_MS)
                if what == "length"
                else (SLIDING_COUNT, SLIDING_DURATION_MS)
            ):
                config.pop(other, None)
            config[key] = amount
        return self

    def withWindow(self: B, windowLength: _Count | _Duration, slidingInterval: Any = None) -> B:
        """A sliding window of ``windowLength`` (a ``Count`` of tuples or a ``Duration``)
        that fires every ``slidingInterval`` (a ``Count`` or a ``Duration``; default: every
        tuple, ``Count(1)``)."""
        return self._window(windowLength, _Count(1) if slidingInterval is None else slidingInterval)

    def withTumblingWindow(self: B, interval: _Count | _Duration) -> B:
        """A tumbling window: every ``interval`` (a ``Count`` or a ``Duration``) the window
        fires with the tuples since the last one."""
        return self._window(interval, interval)

    def withTimestampField(self: B, fieldName: str) -> B:
        """Event time: each tuple's timestamp (ms since the epoch, an int) is in field
        ``fieldName`` of every input stream; windows advance by watermarks.

        Raises:
            ValueError: a timestamp field or extractor is set already.
            TypeError: ``fieldName`` is not a str.
        """
        if not isinstance(fieldName, str) or not fieldName:
            raise TypeError(f"withTimestampField takes a field name, got {fieldName!r}")
        self.withTimestampExtractor(TupleFieldTimestampExtractor.of(fieldName))
        self._config()[TIMESTAMP_FIELD] = fieldName
        return self

    def withTimestampExtractor(self: B, timestampExtractor: TimestampExtractor) -> B:
        """Event time: ``timestampExtractor`` reads each tuple's timestamp (ms).

        Raises:
            ValueError: a timestamp field or extractor is set already.
            TypeError: not a ``TimestampExtractor``.
        """
        if not isinstance(timestampExtractor, TimestampExtractor):
            raise TypeError(
                f"withTimestampExtractor takes a TimestampExtractor, got {timestampExtractor!r}"
            )
        if self.__dict__.get("timestampExtractor") is not None:
            raise ValueError(
                f"the window is already configured with a timestamp extractor: "
                f"{self.timestampExtractor!r}"
            )
        self.timestampExtractor = timestampExtractor
        return self

    def getTimestampExtractor(self) -> TimestampExtractor | None:
        """The event-time extractor, or None (processing time)."""
        return self.__dict__.get("timestampExtractor")

    def withLateTupleStream(self: B, streamId: str) -> B:
        """Event time: emit late tuples (timestamp before the last watermark) on stream
        ``streamId``, declared for you with the single field ``late_tuple`` (a copy of the
        late tuple); without it they are logged and dropped. Either way they are acked.

        Raises:
            TypeError: ``streamId`` is not a str.
        """
        if not isinstance(streamId, str) or not streamId:
            raise TypeError(f"withLateTupleStream takes a stream id, got {streamId!r}")
        self._config()[LATE_TUPLE_STREAM] = streamId
        return self

    def withLag(self: B, duration: _Duration) -> B:
        """Event time: timestamps arrive at most ``duration`` out of order (watermarks trail
        the latest timestamp by it; default 0)."""
        self._config()[MAX_LAG_MS] = _duration(duration, "withLag")
        return self

    def withWatermarkInterval(self: B, interval: _Duration) -> B:
        """Event time: issue a watermark every ``interval`` (default 1 s)."""
        self._config()[WATERMARK_INTERVAL_MS] = _duration(interval, "withWatermarkInterval")
        return self

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Nothing to set up."""

    def cleanup(self) -> None:
        """Nothing to release."""

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """No streams (override to declare the bolt's)."""

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """The window settings made by the builder methods."""
        return self._config()


def _duration(value: object, method: str) -> int:
    if not isinstance(value, _Duration):
        raise TypeError(f"{method} takes a BaseWindowedBolt.Duration, got {value!r}")
    return value.value
