"""The window's queue of events: scanned when a trigger fires, compacted as it grows.

Follows Storm 2.x's ``org.apache.storm.windowing.WindowManager`` (read for this module):
events are kept in arrival order; when a trigger fires the whole queue is scanned with the
eviction policy; what expires is removed and reported (`WindowManager` calls
``on_expiry`` at once, and the window's ``expired`` list gathers everything expired since the
previous window); the events a scan keeps in the window are the window, and those that were
not in the previous window are its new events. Every `COMPACT_EVERY` additions the queue is
also scanned from its head for expired events alone, so a window that rarely fires does not
hold every event until then.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from heron_core.windowing._policies import (
    Action,
    Event,
    EvictionPolicy,
    TriggerPolicy,
    sliding_count_timestamps,
)

__all__ = ["COMPACT_EVERY", "WindowManager"]

T = TypeVar("T")

COMPACT_EVERY = 100
"""Additions (events and watermarks) between two compactions (Storm's
``EXPIRE_EVENTS_THRESHOLD``)."""

Activation = Callable[[list[T], list[T], list[T], int], None]
"""Called with a window's events, its new events, the events expired since the previous
window, and the window's reference time (its end, ms)."""

Expiry = Callable[[list[T]], None]
"""Called with events as they expire, in queue order, before any window that reports them."""


class WindowManager(Generic[T]):
    """Holds the events of one windowed component and fires its windows.

    Set `eviction` and `trigger` (they need the manager to exist first) before adding.

    Args:
        on_activation: called for every window that holds at least one event.
        on_expiry: called with each batch of events as they leave the window for good.
    """

    eviction: EvictionPolicy[T]
    trigger: TriggerPolicy[T]

    def __init__(self, on_activation: Activation[T], on_expiry: Expiry[T]) -> None:
        self.on_activation = on_activation
        self.on_expiry = on_expiry
        self.queue: deque[Event[T]] = deque()
        self.expired: list[T] = []
        self.previous: set[Event[T]] = set()
        self.since_compaction = 0

    def add(self, item: T, ts: int) -> None:
        """Queue ``item`` with timestamp ``ts`` (ms); the trigger may fire a window."""
        event = Event(item, ts)
        self.queue.append(event)
        self.eviction.track(event)
        self.trigger.track(event)
        self._compact()

    def add_watermark(self, ts: int) -> None:
        """A watermark at ``ts``: event-time triggers fire the windows it completes."""
        self.trigger.on_watermark(ts)
        self._compact()

    def fire(self) -> bool:
        """Scan the queue with the eviction context the trigger set, report the window (when
        it holds events) and reset the trigger. Returns whether the window held events."""
        events = self._scan(full=True)
        expired, self.expired = self.expired, []
        items = [event.item for event in events]
        new = [event.item for event in events if event not in self.previous]
        self.previous = set(events)
        if events:
            context = self.eviction.context
            reference = 0 if context is None else context.reference_time
            self.on_activation(items, new, expired, reference)
        self.trigger.reset()
        return bool(events)

    def _compact(self) -> None:
        self.since_compaction += 1
        if self.since_compaction >= COMPACT_EVERY:
            self._scan(full=False)

    def _scan(self, full: bool) -> list[Event[T]]:
        """Ask the eviction policy about each queued event, oldest first: remove and report
        what expires; return the events in the window (``full``), or stop at the first event
        that does not expire (not ``full``, a compaction)."""
        evict = self.eviction.evict
        queue = self.queue
        window: list[Event[T]] = []
        expired: list[T] = []
        kept: list[Event[T]] = []
        while queue:
            event = queue[0]
            action = evict(event)
            if action is Action.EXPIRE:
                queue.popleft()
                expired.append(event.item)
                continue
            if not full or action is Action.STOP:
                break
            queue.popleft()
            kept.append(event)
            if action is Action.PROCESS:
                window.append(event)
        queue.extendleft(reversed(kept))
        self.since_compaction = 0
        if expired:
            self.expired.extend(expired)
            self.on_expiry(expired)
        return window

    # --- EventQueries, for the event-time triggers -------------------------------------------
    def earliest_ts(self, after: int, until: int) -> int | None:
        """The smallest queued timestamp in ``(after, until]``, or None."""
        found = [e.ts for e in self.queue if after < e.ts <= until]
        return min(found) if found else None

    def count_until(self, reference: int) -> int:
        """How many queued events have a timestamp at or before ``reference``."""
        return sum(1 for e in self.queue if e.ts <= reference)

    def sliding_count_timestamps(self, after: int, until: int, count: int) -> list[int]:
        """See `heron_core.windowing._policies.EventQueries.sliding_count_timestamps`."""
        return sliding_count_timestamps(self.queue, after, until, count)
