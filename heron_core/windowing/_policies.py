"""When a window fires (trigger policies) and which events it holds (eviction policies).

The decisions follow Apache Storm 2.x's ``org.apache.storm.windowing`` package, read in
``CountEvictionPolicy``, ``TimeEvictionPolicy``, ``WatermarkCountEvictionPolicy``,
``WatermarkTimeEvictionPolicy``, ``CountTriggerPolicy``, ``TimeTriggerPolicy``,
``WatermarkCountTriggerPolicy`` and ``WatermarkTimeTriggerPolicy``; the edge cases each class
keeps are stated in its docstring. Two things differ by design: nothing here runs a thread (a
time trigger fires when `TimeTrigger.poll` is called at or after its deadline, and uses the
deadline, not the time of the call, as its reference time), and times are integer
milliseconds read from an injected clock.
"""

from __future__ import annotations

import abc
import enum
import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = [
    "Action",
    "CountEviction",
    "CountTrigger",
    "Event",
    "EventQueries",
    "EvictionContext",
    "EvictionPolicy",
    "TimeEviction",
    "TimeTrigger",
    "TriggerPolicy",
    "WatermarkCountEviction",
    "WatermarkCountTrigger",
    "WatermarkTimeEviction",
    "WatermarkTimeTrigger",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

Clock = Callable[[], int]
"""Returns the time in milliseconds (processing time: the epoch, as Storm's
``System.currentTimeMillis``)."""

_ALL_EVENTS = sys.maxsize
"""The window length adjustment of a time eviction's first window: every event is in it."""

DRIFT_WARNING_MS = 100
"""A time window whose reference time moved by more than this beyond its sliding interval is
logged (Storm warns of clock drift or a long computation at the same bound)."""


class Event(Generic[T]):
    """One item in a window with the timestamp it is windowed by (ms). Compared by identity:
    the same item added twice is two events."""

    __slots__ = ("item", "ts")

    def __init__(self, item: T, ts: int) -> None:
        self.item = item
        self.ts = ts

    def __repr__(self) -> str:
        return f"Event({self.item!r}, ts={self.ts})"


class Action(enum.Enum):
    """What an eviction policy says of one event when the window is scanned."""

    EXPIRE = "expire"
    """Out of the window for good: removed, reported expired."""
    PROCESS = "process"
    """In the current window."""
    KEEP = "keep"
    """Not in the current window but kept for a later one (a timestamp past the reference)."""
    STOP = "stop"
    """Not in the window, and the scan ends here (the events after it are not looked at)."""


@dataclass(frozen=True)
class EvictionContext:
    """What a trigger tells the eviction policy before the window is scanned.

    Attributes:
        reference_time: the window's end (ms): events after it are not in it.
        current_count: for event-time count windows fired by time: how many events have a
            timestamp at or before ``reference_time``.
        sliding_count: for event-time count windows: how many events the window slid by.
        sliding_interval: for processing-time windows fired by time: the interval (ms),
            so a time eviction can correct for a late or early trigger.
    """

    reference_time: int
    current_count: int | None = None
    sliding_count: int | None = None
    sliding_interval: int | None = None


class EvictionPolicy(abc.ABC, Generic[T]):
    """Decides, event by event, whether it is in the window, expired, or kept for later."""

    context: EvictionContext | None = None

    @abc.abstractmethod
    def evict(self, event: Event[T]) -> Action:
        """The action for ``event`` (may update the policy's counters: call it once per event
        per scan, in window order)."""

    def track(self, event: Event[T]) -> None:
        """A new event entered the window queue."""

    def set_context(self, context: EvictionContext) -> None:
        """The trigger fired: ``context`` is the window about to be scanned."""
        self.context = context


class CountEviction(EvictionPolicy[T]):
    """The last ``threshold`` events (processing time), as Storm's ``CountEvictionPolicy``:
    every event added counts; a scan expires events from the oldest while more than
    ``threshold`` are counted, and everything after is in the window."""

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self.count = 0

    def track(self, event: Event[T]) -> None:
        self.count += 1

    def evict(self, event: Event[T]) -> Action:
        if self.count > self.threshold:
            self.count -= 1
            return Action.EXPIRE
        return Action.PROCESS


class TimeEviction(EvictionPolicy[T]):
    """Events younger than ``length_ms`` at the reference time (processing time), as Storm's
    ``TimeEvictionPolicy``.

    An event with ``reference - ts >= length + delta`` expires, one with a timestamp past the
    reference is kept for the next window, the rest are in the window. ``delta`` corrects for
    a time trigger that fired late or early: the reference time's move since the previous
    window minus the sliding interval; the first window of a time trigger takes every event
    (Storm: "consider all events for the initial window"). Without a context yet (a scan
    before the first trigger) the reference is the clock's time.
    """

    def __init__(self, length_ms: int, clock: Clock) -> None:
        self.length_ms = length_ms
        self.clock = clock
        self.delta = 0

    def evict(self, event: Event[T]) -> Action:
        now = self.clock() if self.context is None else self.context.reference_time
        age = now - event.ts
        if age >= self.length_ms + self.delta:
            return Action.EXPIRE
        if age < 0:
            return Action.KEEP
        return Action.PROCESS

    def set_context(self, context: EvictionContext) -> None:
        previous, self.context = self.context, context
        if context.sliding_interval is None:
            return
        if previous is None:
            self.delta = _ALL_EVENTS
            return
        self.delta = context.reference_time - previous.reference_time - context.sliding_interval
        if abs(self.delta) > DRIFT_WARNING_MS:
            log.warning(
                "a time window fired %d ms off its sliding interval (previous end %d, this end "
                "%d): clock drift or a long computation in the window",
                self.delta,
                previous.reference_time,
                context.reference_time,
            )


class WatermarkTimeEviction(TimeEviction[T]):
    """Events with a timestamp in ``(reference - length, reference]`` (event time), as Storm's
    ``WatermarkTimeEvictionPolicy``: as `TimeEviction`, except that before the first
    watermark every scan stops at once (nothing is evicted early), and an event more than
    ``lag_ms`` past the reference stops the scan (the events queued after it are left for a
    later window, even one with an earlier timestamp)."""

    def __init__(self, length_ms: int, lag_ms: int, clock: Clock) -> None:
        super().__init__(length_ms, clock)
        self.lag_ms = lag_ms

    def evict(self, event: Event[T]) -> Action:
        if self.context is None:
            return Action.STOP
        age = self.context.reference_time - event.ts
        if age < -self.lag_ms:
            return Action.STOP
        if age < 0:
            return Action.KEEP
        return super().evict(event)


class WatermarkCountEviction(EvictionPolicy[T]):
    """The last ``threshold`` events at or before the reference time (event time), as Storm's
    ``WatermarkCountEvictionPolicy``.

    Each window counts ``current``: the events it covers (given by a time trigger, or the
    previous window's processed events plus the sliding count). Scanning in arrival order,
    an event at or before the reference is expired while ``current`` exceeds the threshold
    (each expiry lowers it) and is in the window otherwise, until ``current`` events were
    taken; later events are kept. Before the first watermark every scan stops at once.
    """

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self.current = 0
        self.processed = 0

    def evict(self, event: Event[T]) -> Action:
        if self.context is None:
            return Action.STOP
        if event.ts > self.context.reference_time or self.processed >= self.current:
            return Action.KEEP
        if self.current > self.threshold:
            self.current -= 1
            return Action.EXPIRE
        self.processed += 1
        return Action.PROCESS

    def set_context(self, context: EvictionContext) -> None:
        self.context = context
        if context.current_count is not None:
            self.current = context.current_count
        else:
            self.current = self.processed + (context.sliding_count or 0)
        self.processed = 0


class EventQueries(Protocol):
    """What event-time triggers ask of the window's queue (the `WindowManager`)."""

    def earliest_ts(self, after: int, until: int) -> int | None:
        """The smallest timestamp in ``(after, until]``, or None."""
        ...

    def count_until(self, reference: int) -> int:
        """How many queued events have a timestamp at or before ``reference``."""
        ...

    def sliding_count_timestamps(self, after: int, until: int, count: int) -> list[int]:
        """Walking the queue in arrival order over events with a timestamp in
        ``(after, until]``: the largest timestamp seen so far at every ``count``-th one."""
        ...


Fire = Callable[[], bool]
"""The window manager's trigger handler: scans, calls the listener; True if the window held
events."""


class TriggerPolicy(abc.ABC, Generic[T]):
    """Decides when the window fires; it sets the eviction context, then calls ``fire``."""

    def __init__(self, fire: Fire, eviction: EvictionPolicy[T]) -> None:
        self.fire = fire
        self.eviction = eviction
        self.started = False

    def start(self, now: int) -> None:
        """Begin firing (timers count from ``now``)."""
        self.started = True

    def track(self, event: Event[T]) -> None:
        """A new event entered the window queue (after the eviction policy tracked it)."""

    def on_watermark(self, ts: int) -> None:
        """A watermark: no event with an earlier timestamp will be added."""

    def reset(self) -> None:
        """The window just fired."""

    def due(self) -> int | None:
        """When `poll` must next be called (ms), or None if this trigger has no timer."""
        return None

    def poll(self, now: int) -> None:
        """Fire what the timer owes at ``now``."""


class CountTrigger(TriggerPolicy[T]):
    """Fires on every ``count``-th event added (processing time), as Storm's
    ``CountTriggerPolicy``: the first window fires with the ``count``-th event, holding what
    the eviction policy keeps of the events so far; the reference time is the clock's."""

    def __init__(self, count: int, fire: Fire, eviction: EvictionPolicy[T], clock: Clock) -> None:
        super().__init__(fire, eviction)
        self.count = count
        self.clock = clock
        self.seen = 0

    def track(self, event: Event[T]) -> None:
        if not self.started:
            return
        self.seen += 1
        if self.seen >= self.count:
            self.eviction.set_context(EvictionContext(self.clock()))
            self.fire()

    def reset(self) -> None:
        self.seen = 0


class TimeTrigger(TriggerPolicy[T]):
    """Fires every ``interval_ms`` from `start` (processing time), as Storm's
    ``TimeTriggerPolicy`` does at a fixed rate. The reference time of the window due at ``d``
    is ``d - 1`` (Storm leaves out the current millisecond, as tuples may arrive during it).
    Storm fires from a timer thread at the time of the clock; here `poll` fires every
    deadline that has passed, each with its own deadline as reference, so a late poll does
    not move the windows."""

    def __init__(self, interval_ms: int, fire: Fire, eviction: EvictionPolicy[T]) -> None:
        super().__init__(fire, eviction)
        self.interval_ms = interval_ms
        self.next_due: int | None = None

    def start(self, now: int) -> None:
        super().start(now)
        self.next_due = now + self.interval_ms

    def due(self) -> int | None:
        return self.next_due

    def poll(self, now: int) -> None:
        while self.next_due is not None and self.next_due <= now:
            reference = self.next_due - 1
            self.next_due += self.interval_ms
            self.eviction.set_context(EvictionContext(reference, sliding_interval=self.interval_ms))
            self.fire()


class WatermarkCountTrigger(TriggerPolicy[T]):
    """Fires every ``count`` events by timestamp as watermarks pass them (event time), as
    Storm's ``WatermarkCountTriggerPolicy``: on a watermark, the events with a timestamp
    after the last window's end and at or before the watermark are walked in arrival order;
    every ``count``-th one ends a window at the largest timestamp walked so far."""

    def __init__(
        self, count: int, fire: Fire, eviction: EvictionPolicy[T], queries: EventQueries
    ) -> None:
        super().__init__(fire, eviction)
        self.count = count
        self.queries = queries
        self.last_end = 0

    def on_watermark(self, ts: int) -> None:
        if not self.started:
            return
        for end in self.queries.sliding_count_timestamps(self.last_end, ts, self.count):
            self.eviction.set_context(EvictionContext(end, sliding_count=self.count))
            self.fire()
            self.last_end = end


class WatermarkTimeTrigger(TriggerPolicy[T]):
    """Fires a window ending at each multiple of ``interval_ms`` that a watermark passes
    (event time), as Storm's ``WatermarkTimeTriggerPolicy``.

    The next window end starts at 0. While it is at or before the watermark, the window
    ending there fires; if it held events the end moves by the interval, else it jumps to the
    first multiple of the interval at or after the earliest queued timestamp past it (so
    empty windows are skipped, and windows are aligned to the epoch), or the loop ends when
    no event lies before the watermark.
    """

    def __init__(
        self, interval_ms: int, fire: Fire, eviction: EvictionPolicy[T], queries: EventQueries
    ) -> None:
        super().__init__(fire, eviction)
        self.interval_ms = interval_ms
        self.queries = queries
        self.next_end = 0

    def on_watermark(self, ts: int) -> None:
        if not self.started:
            return
        end = self.next_end
        while end <= ts:
            count = self.queries.count_until(end)
            self.eviction.set_context(EvictionContext(end, current_count=count))
            if self.fire():
                end += self.interval_ms
                continue
            earliest = self.queries.earliest_ts(end, ts)
            if earliest is None:
                break
            end = -(-earliest // self.interval_ms) * self.interval_ms
        self.next_end = end


def sliding_count_timestamps(
    events: Iterable[Event[T]], after: int, until: int, count: int
) -> list[int]:
    """See `EventQueries.sliding_count_timestamps`.

    >>> events = [Event(name, ts) for name, ts in [("a", 5), ("b", 3), ("c", 9), ("d", 7)]]
    >>> sliding_count_timestamps(events, 0, 8, 2)
    [5]
    >>> sliding_count_timestamps(events, 0, 9, 2)
    [5, 9]
    """
    ends: list[int] = []
    if until <= after:
        return ends
    seen = 0
    largest: int | None = None
    for event in events:
        if after < event.ts <= until:
            largest = event.ts if largest is None else max(largest, event.ts)
            seen += 1
            if seen % count == 0:
                ends.append(largest)
    return ends
