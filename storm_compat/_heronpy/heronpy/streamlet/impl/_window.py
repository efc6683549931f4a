"""Time windows over whole seconds, driven by tick tuples: the engine under
``reduce_by_window``, ``reduce_by_key_and_window`` and the joins.

Items arrive with ``add``; each tick (every slide interval) calls ``slide``, which closes the
window ending now and says which items left the last window they belong to (the bolt acks
those, as heronpy's ``SlidingWindowBolt`` acks expired tuples).

When the duration is a whole number N of slides (tumbling windows, and every window of
Heron's examples), the window is the last N slide intervals, counted in ticks: each item is
in exactly N consecutive windows, however late a tick fires on a loaded machine. Otherwise it
holds the items that arrived in the last ``duration`` seconds by the clock.

>>> windows = TimeWindows(duration=4, slide=2)
>>> windows.add("a", now=100.5)
>>> windows.slide(now=101.0)
(['a'], [])
>>> windows.add("b", now=102.0)
>>> windows.slide(now=103.0)
(['a', 'b'], ['a'])
>>> windows.slide(now=105.0)
(['b'], ['b'])
>>> windows.slide(now=107.0)
([], [])
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

__all__ = ["TimeWindows"]

T = TypeVar("T")


class TimeWindows(Generic[T]):
    """The items of a sliding (or tumbling: slide = duration) time window.

    Args:
        duration: the window's length in whole seconds.
        slide: seconds between two windows (between two calls of `slide`), at most
            ``duration``.

    Raises:
        ValueError: ``slide`` is below 1 or above ``duration``.
    """

    def __init__(self, duration: int, slide: int) -> None:
        if slide < 1 or duration < slide:
            raise ValueError(
                f"a window needs 1 <= slide <= duration, got duration {duration}s, slide {slide}s"
            )
        self.duration = duration
        self.slide_secs = slide
        self._panes_per_window = duration // slide if duration % slide == 0 else 0
        self._panes: deque[list[tuple[float, T]]] = deque()
        self._current: list[tuple[float, T]] = []

    def add(self, item: T, now: float) -> None:
        """``item`` arrived at ``now`` (seconds)."""
        self._current.append((now, item))

    def slide(self, now: float) -> tuple[list[T], list[T]]:
        """Close the window that ends at ``now``.

        Returns:
            The items in the window, in arrival order, and the items that are in no later
            window (to be acked).
        """
        self._panes.append(self._current)
        self._current = []
        if self._panes_per_window:
            window = [item for pane in self._panes for _, item in pane]
            expired: list[T] = []
            if len(self._panes) >= self._panes_per_window:
                expired = [item for _, item in self._panes.popleft()]
            return window, expired
        # Not a whole number of slides: by the clock, like heronpy (arrivals in the last
        # `duration` seconds).
        arrivals = [arrival for pane in self._panes for arrival in pane]
        self._panes.clear()
        horizon = now - self.duration
        gone = [item for at, item in arrivals if at <= horizon]
        kept = [(at, item) for at, item in arrivals if at > horizon]
        self._panes.append(kept)
        next_horizon = now + self.slide_secs - self.duration
        leaving = [item for at, item in kept if at <= next_horizon]
        if leaving:  # in this window, in no later one: acked now
            self._panes[0] = [(at, item) for at, item in kept if at > next_horizon]
        return [item for _, item in kept], gone + leaving

    def __len__(self) -> int:
        """How many items are held (in a window to come)."""
        return len(self._current) + sum(len(pane) for pane in self._panes)
