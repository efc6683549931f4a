"""Watermarks for event-time windows: how far event time has surely progressed.

Follows Storm 2.x's ``org.apache.storm.windowing.WaterMarkEventGenerator`` (read for this
module): the latest timestamp is tracked per input stream; every interval the watermark is
the smallest of those minus the lag, once every input stream has delivered; a watermark is
only issued when it moved forward. An event whose timestamp is before the last watermark
issued is late. Storm runs it on a timer thread; here `WatermarkGenerator.poll` is called
(`heron_core.windowing.Windower.poll`) and issues one watermark however many intervals passed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable

__all__ = ["WatermarkGenerator"]


class WatermarkGenerator:
    """Tracks event timestamps per input stream and issues watermarks.

    Args:
        issue: called with each new watermark (ms).
        interval_ms: time between two watermarks.
        lag_ms: how far behind the slowest stream's latest timestamp the watermark stays.
        streams: every input stream; no watermark is issued before each has delivered.

    >>> issued = []
    >>> marks = WatermarkGenerator(issued.append, 1000, 5, ["a", "b"])
    >>> marks.start(0)
    >>> marks.track("a", 100), marks.poll(1000), issued
    (True, None, [])
    >>> marks.track("b", 40), marks.poll(2000), issued
    (True, None, [35])
    >>> marks.track("b", 30)  # before the last watermark: late
    False
    """

    def __init__(
        self,
        issue: Callable[[int], None],
        interval_ms: int,
        lag_ms: int,
        streams: Collection[Hashable],
    ) -> None:
        self.issue = issue
        self.interval_ms = interval_ms
        self.lag_ms = lag_ms
        self.streams = frozenset(streams)
        self.latest: dict[Hashable, int] = {}
        self.last_watermark = 0
        self.next_due: int | None = None

    def start(self, now: int) -> None:
        """Issue the first watermark an interval after ``now``."""
        self.next_due = now + self.interval_ms

    def track(self, stream: Hashable, ts: int) -> bool:
        """Note an event of ``stream`` with timestamp ``ts``; False if it is late (before the
        last watermark: it must not enter the window)."""
        if ts > self.latest.get(stream, ts - 1):
            self.latest[stream] = ts
        return ts >= self.last_watermark

    def watermark(self) -> int:
        """The watermark the streams allow now (0 minus the lag until each has delivered)."""
        ts = 0
        if len(self.latest) >= len(self.streams):
            ts = min(self.latest.values(), default=0)
        return ts - self.lag_ms

    def poll(self, now: int) -> None:
        """Issue a watermark if one is due at ``now`` and it moved forward."""
        if self.next_due is None or now < self.next_due:
            return
        missed = (now - self.next_due) // self.interval_ms
        self.next_due += (missed + 1) * self.interval_ms
        ts = self.watermark()
        if ts > self.last_watermark:
            self.last_watermark = ts
            self.issue(ts)
