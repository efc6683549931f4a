"""Which connections an HTTP server keeps open under a bound: the one rule of the tracker's and
the UI's servers (`heron_core._http_limits`) and of the metrics manager's Prometheus endpoint
(`heron_core.metricsmgr.sinks.prometheus`). A module of its own, without the web stack, so the
metrics manager does not import uvicorn to use it."""

from __future__ import annotations

from typing import Generic, NamedTuple, TypeVar

__all__ = ["Admission", "ConnectionBound"]

C = TypeVar("C")


class Admission(NamedTuple, Generic[C]):
    """What `ConnectionBound.admit` decided."""

    admitted: bool
    """Whether the new connection may stay open."""
    evicted: C | None
    """The connection to close to make room for it, if one was chosen."""


class ConnectionBound(Generic[C]):
    """Which connections stay open: at most ``limit``; a new one beyond takes the place of the
    one that has waited longest for its request, and is refused when none is waiting.

    A connection is waiting from its admission, and again from each `waiting` ``(c, True)``
    (the end of a response), until `waiting` ``(c, False)`` (its request arrived). Not
    thread-safe: one event loop thread owns it.

    >>> bound = ConnectionBound[str](2)
    >>> bound.admit("a"), bound.admit("b")
    (Admission(admitted=True, evicted=None), Admission(admitted=True, evicted=None))
    >>> bound.waiting("a", False)  # a's request is being answered
    >>> bound.admit("c")  # b has waited longest
    Admission(admitted=True, evicted='b')
    >>> bound.waiting("c", False)
    >>> bound.admit("d")  # a and c are both being answered
    Admission(admitted=False, evicted=None)
    >>> bound.release("a"); bound.admit("d"), len(bound)
    (Admission(admitted=True, evicted=None), 2)
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a connection bound must admit at least 1 connection, got {limit}")
        self.limit = limit
        self._open: dict[C, bool] = {}
        """Each open connection -> whether it waits for a request, in the order they began
        waiting (a connection being answered keeps the place it had)."""

    def __len__(self) -> int:
        return len(self._open)

    def admit(self, connection: C) -> Admission[C]:
        """Count ``connection`` (new, waiting for its request) as open if there is room or
        a waiting connection to evict; the evicted one is no longer counted (close it)."""
        evicted = None
        if len(self._open) >= self.limit:
            evicted = next((c for c, waiting in self._open.items() if waiting), None)
            if evicted is None:
                return Admission(False, None)
            del self._open[evicted]
        self._open[connection] = True
        return Admission(True, evicted)

    def waiting(self, connection: C, waiting: bool) -> None:
        """Note that ``connection`` now waits for a request (``True``: it goes to the end of
        the eviction order) or has one being answered (``False``). Ignored for a connection
        not counted (evicted or released)."""
        if connection not in self._open:
            return
        if waiting:
            del self._open[connection]
        self._open[connection] = waiting

    def release(self, connection: C) -> None:
        """Stop counting ``connection`` (it closed). Idempotent."""
        self._open.pop(connection, None)
