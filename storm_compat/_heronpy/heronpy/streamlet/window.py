"""``Window``: the time span a windowed operation's result belongs to (heronpy's module path)."""

from __future__ import annotations

from typing import Any

__all__ = ["Window"]


class Window:
    """The whole seconds ``[start_time, end_time]`` of one window (times as ``int(time.time())``).

    heronpy's class keeps both times private and shows them in its ``repr``; this one also
    reads them as ``start_time``/``end_time`` and compares by value (additions).

    >>> window = Window(100, 110)
    >>> window
    Window {start_time: 100, end_time: 110}
    >>> window == Window(100, 110), window.end_time - window.start_time
    (True, 10)
    """

    __slots__ = ("_end_time", "_start_time")

    def __init__(self, start_time: int, end_time: int) -> None:
        self._start_time = start_time
        self._end_time = end_time

    @property
    def start_time(self) -> int:
        """The window's first second."""
        return self._start_time

    @property
    def end_time(self) -> int:
        """The window's last second (when it was computed)."""
        return self._end_time

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Window):
            return NotImplemented
        return (self._start_time, self._end_time) == (other._start_time, other._end_time)

    def __hash__(self) -> int:
        return hash((self._start_time, self._end_time))

    def __reduce__(self) -> tuple[Any, ...]:
        return Window, (self._start_time, self._end_time)

    def __repr__(self) -> str:
        return f"Window {{start_time: {self._start_time}, end_time: {self._end_time}}}"
