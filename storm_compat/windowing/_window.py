"""Storm's ``Window``, ``TupleWindow``, ``TupleWindowImpl`` and ``TimestampExtractor``
(``org.apache.storm.windowing``), and the ``TimeUnit`` of a ``BaseWindowedBolt.Duration``."""

from __future__ import annotations

import abc
import enum
from typing import Generic, TypeVar

from storm_compat.tuple import Tuple

__all__ = ["TimeUnit", "TimestampExtractor", "TupleWindow", "TupleWindowImpl", "Window"]

T = TypeVar("T")


class TimeUnit(enum.Enum):
    """Java's ``TimeUnit``, for ``BaseWindowedBolt.Duration(value, unit)``; each member's value
    is its length in milliseconds.

    >>> TimeUnit.MINUTES.toMillis(2)
    120000
    """

    MILLISECONDS = 1
    SECONDS = 1000
    MINUTES = 60_000
    HOURS = 3_600_000
    DAYS = 86_400_000

    def toMillis(self, duration: int) -> int:
        """``duration`` of this unit in milliseconds."""
        return int(duration * self.value)


class Window(abc.ABC, Generic[T]):
    """The events of one window activation, as a windowed bolt's ``execute`` gets them."""

    @abc.abstractmethod
    def get(self) -> list[T]:
        """Every event in the window, in arrival order."""

    @abc.abstractmethod
    def getNew(self) -> list[T]:
        """The events of this window that were not in the previous one."""

    @abc.abstractmethod
    def getExpired(self) -> list[T]:
        """The events that left the window since the previous activation (already acked)."""

    @abc.abstractmethod
    def getEndTimestamp(self) -> int | None:
        """The window's end (ms since the epoch): for a count window, when it fired (in event
        time, the timestamp it fired at)."""

    @abc.abstractmethod
    def getStartTimestamp(self) -> int | None:
        """The window's start (ms, exclusive) for a duration window: the end minus the
        length; None for a count window."""


class TupleWindow(Window[Tuple]):
    """A window of tuples: what ``IWindowedBolt.execute`` gets."""


class TupleWindowImpl(TupleWindow):
    """The ``TupleWindow`` the windowed bolt executor builds (build one in a unit test).

    >>> from storm_compat.tuple import Fields
    >>> a, b = (Tuple.of([n], Fields("n")) for n in (1, 2))
    >>> window = TupleWindowImpl([a, b], [b], [], 900, 1000)
    >>> [t.getInteger(0) for t in window.get()], window.getNew() == [b], window.getStartTimestamp()
    ([1, 2], True, 900)
    """

    def __init__(
        self,
        tuples: list[Tuple],
        newTuples: list[Tuple],
        expiredTuples: list[Tuple],
        startTimestamp: int | None = None,
        endTimestamp: int | None = None,
    ) -> None:
        self._tuples = tuples
        self._new = newTuples
        self._expired = expiredTuples
        self._start = startTimestamp
        self._end = endTimestamp

    def get(self) -> list[Tuple]:
        return self._tuples

    def getNew(self) -> list[Tuple]:
        return self._new

    def getExpired(self) -> list[Tuple]:
        return self._expired

    def getStartTimestamp(self) -> int | None:
        return self._start

    def getEndTimestamp(self) -> int | None:
        return self._end

    def __repr__(self) -> str:
        return (
            f"TupleWindowImpl(tuples={len(self._tuples)}, new={len(self._new)}, "
            f"expired={len(self._expired)}, start={self._start}, end={self._end})"
        )


class TimestampExtractor(abc.ABC):
    """Reads a tuple's event time, for event-time windows (``withTimestampExtractor``).

    It is pickled with the bolt, so it must be picklable (a module-level class).
    """

    @abc.abstractmethod
    def extractTimestamp(self, tuple: Tuple) -> int:
        """The timestamp of ``tuple`` in milliseconds."""
