"""`Windower`: one component's windows, assembled from a `WindowSpec`."""

from __future__ import annotations

import time
from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from heron_core.windowing._manager import WindowManager
from heron_core.windowing._policies import (
    Clock,
    CountEviction,
    CountTrigger,
    EvictionPolicy,
    TimeEviction,
    TimeTrigger,
    TriggerPolicy,
    WatermarkCountEviction,
    WatermarkCountTrigger,
    WatermarkTimeEviction,
    WatermarkTimeTrigger,
)
from heron_core.windowing._spec import WindowSpec
from heron_core.windowing._watermarks import WatermarkGenerator

__all__ = ["Window", "WindowListener", "Windower", "wall_clock_ms"]

T = TypeVar("T")


def wall_clock_ms() -> int:
    """The time since the epoch in milliseconds (Storm's ``System.currentTimeMillis``)."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Window(Generic[T]):
    """One activation of a window (Storm's ``Window``/``TupleWindow``).

    Attributes:
        items: every event in the window, in arrival order.
        new: the events of ``items`` that were not in the previous window (all of them after
            a window that held nothing).
        expired: the events that left the window since the previous activation (reported
            to the listener's ``on_expiry`` already); events expired before a window that
            held nothing are not repeated here.
        end_ts: the window's reference time (ms): the end of a duration window, the time of
            the trigger (or, in event time, the timestamp it fired at) for a count window.
        start_ts: ``end_ts`` minus the length for duration windows, else None.
    """

    items: list[T]
    new: list[T] = field(default_factory=list)
    expired: list[T] = field(default_factory=list)
    end_ts: int | None = None
    start_ts: int | None = None


class WindowListener(Protocol[T]):
    """What a `Windower` reports to: called on the thread that calls `Windower.add` or
    `Windower.poll`, never concurrently."""

    def on_activation(self, window: Window[T]) -> None:
        """A window fired and holds at least one event."""
        ...

    def on_expiry(self, items: list[T]) -> None:
        """``items`` left the window for good, before any window that reports them expired
        (Storm acks tuples here)."""
        ...


class Windower(Generic[T]):
    """The windows of one component: add events, poll the clock, get windows and expiries.

    Nothing here runs a thread: a window that fires by time (a processing-time window that
    slides by duration, or any event-time window, whose watermarks are issued by time) fires
    from `poll` once its time has come, so the caller polls at least every
    `WindowSpec.timer_period_ms` (a bolt does it on tick tuples) and, for timely windows,
    before adding each event. Windows that slide by count fire from `add`.

    The semantics are Storm 2.x's (see `heron_core.windowing`).

    Args:
        spec: the window.
        listener: gets the windows and the expired events.
        streams: event time: the input streams (any hashable ids); watermarks wait for each.
        clock: milliseconds now (processing time: since the epoch, as event timestamps are).

    >>> class Printer:
    ...     def on_activation(self, window):
    ...         print("window", window.items, "new", window.new, "expired", window.expired)
    ...     def on_expiry(self, items):
    ...         print("expired", items)
    >>> spec = WindowSpec(length_count=3, slide_count=2)
    >>> windows = Windower(spec, Printer(), clock=lambda: 0)
    >>> for n in range(1, 7):
    ...     _ = windows.add(n)
    window [1, 2] new [1, 2] expired []
    expired [1]
    window [2, 3, 4] new [3, 4] expired [1]
    expired [2, 3]
    window [4, 5, 6] new [5, 6] expired [2, 3]
    """

    def __init__(
        self,
        spec: WindowSpec,
        listener: WindowListener[T],
        streams: Collection[Hashable] = (),
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.spec = spec
        self.listener = listener
        self.clock = clock
        manager: WindowManager[T] = WindowManager(self._activate, listener.on_expiry)
        self.manager = manager
        self.eviction = self._eviction(spec, clock)
        self.trigger = self._trigger(spec, manager, self.eviction, clock)
        manager.eviction = self.eviction
        manager.trigger = self.trigger
        self.watermarks: WatermarkGenerator | None = None
        now = clock()
        if spec.event_time:
            self.watermarks = WatermarkGenerator(
                manager.add_watermark, spec.watermark_interval_ms, spec.lag_ms, streams
            )
            self.watermarks.start(now)
        self.trigger.start(now)

    @staticmethod
    def _eviction(spec: WindowSpec, clock: Clock) -> EvictionPolicy[T]:
        if spec.length_count is not None:
            if spec.event_time:
                return WatermarkCountEviction(spec.length_count)
            return CountEviction(spec.length_count)
        assert spec.length_ms is not None
        if spec.event_time:
            return WatermarkTimeEviction(spec.length_ms, spec.lag_ms, clock)
        return TimeEviction(spec.length_ms, clock)

    @staticmethod
    def _trigger(
        spec: WindowSpec, manager: WindowManager[T], eviction: EvictionPolicy[T], clock: Clock
    ) -> TriggerPolicy[T]:
        if spec.slide_count is not None:
            if spec.event_time:
                return WatermarkCountTrigger(spec.slide_count, manager.fire, eviction, manager)
            return CountTrigger(spec.slide_count, manager.fire, eviction, clock)
        assert spec.slide_ms is not None
        if spec.event_time:
            return WatermarkTimeTrigger(spec.slide_ms, manager.fire, eviction, manager)
        return TimeTrigger(spec.slide_ms, manager.fire, eviction)

    def _activate(self, items: list[T], new: list[T], expired: list[T], end: int) -> None:
        start = None if self.spec.length_ms is None else end - self.spec.length_ms
        self.listener.on_activation(Window(items, new, expired, end, start))

    def add(self, item: T, ts: int | None = None, stream: Hashable = None) -> bool:
        """Add an event; a window that slides by count may fire before this returns.

        Args:
            item: the event.
            ts: event time: its timestamp (ms); ignored in processing time, where the clock's
                time is the event's.
            stream: event time: the input stream it came on (one of ``streams``).

        Returns:
            False if the event is late (event time: its timestamp is before the last
            watermark): it was not added, and the caller drops it or sends it aside (Storm
            acks it, after emitting it on the late-tuple stream if one is declared).

        Raises:
            ValueError: event time and no ``ts``.
        """
        if self.watermarks is None:
            self.manager.add(item, self.clock())
            return True
        if ts is None:
            raise ValueError("an event-time window needs each event's timestamp")
        if not self.watermarks.track(stream, ts):
            return False
        self.manager.add(item, ts)
        return True

    def due(self) -> int | None:
        """When `poll` next has something to do (ms, by the clock), or None: never."""
        if self.watermarks is not None:
            return self.watermarks.next_due
        return self.trigger.due()

    def poll(self) -> None:
        """Fire what is due by the clock: the windows of a time trigger whose deadlines have
        passed, or a watermark (which fires the event-time windows it completes)."""
        now = self.clock()
        if self.watermarks is not None:
            self.watermarks.poll(now)
        else:
            self.trigger.poll(now)

    @property
    def size(self) -> int:
        """How many events are queued (in a window or waiting for one)."""
        return len(self.manager.queue)
