"""The tmanager's writes to the state manager while it serves, kept until they are stored.

The stream managers get the physical plan from the tmanager, not from the state manager, so the
topology keeps flowing while the state manager is unreachable (a ZooKeeper server restarting,
a session being re-established). A write that fails then is not a reason to stop serving: it is
kept, the newest value per node, and stored once the state manager answers again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from heron_core.errors import StateManagerError

__all__ = ["PendingWrites"]

logger = logging.getLogger(__name__)


class PendingWrites:
    """Writes to the state manager that must eventually succeed; the newest per node wins.

    `put` makes a write at once when nothing is pending. A write that raises
    `StateManagerError` is kept (replacing an older write of the same node) and made again by
    `flush` once due, with a back-off doubling from ``retry_interval`` to ``max_interval``
    seconds; while writes are pending, new ones wait for that turn too, so an unreachable store
    costs the caller one call timeout per back-off at most. Writes are made in the order they
    were (last) put. Times come from ``clock``; this class never sleeps or reads other time.

    Args:
        clock: monotonic seconds.
        retry_interval: the first back-off, seconds.
        max_interval: the longest back-off, seconds.

    >>> now, store, down = [0.0], {}, [True]
    >>> def write(value):
    ...     if down[0]:
    ...         raise StateManagerError("ZooKeeper is restarting")
    ...     store["pplans/wc"] = value
    >>> writes = PendingWrites(lambda: now[0], retry_interval=1.0)
    >>> writes.put("pplans/wc", lambda: write("plan 1")), writes.pending, writes.next_due
    (False, ['pplans/wc'], 1.0)
    >>> writes.put("pplans/wc", lambda: write("plan 2")), writes.next_due  # no call meanwhile
    (False, 1.0)
    >>> down[0], now[0] = False, 1.0
    >>> writes.flush(), store, writes.pending, writes.next_due
    (True, {'pplans/wc': 'plan 2'}, [], None)
    """

    def __init__(
        self,
        clock: Callable[[], float],
        *,
        retry_interval: float = 0.5,
        max_interval: float = 10.0,
    ) -> None:
        self._clock = clock
        self._first_interval = retry_interval
        self._max_interval = max_interval
        self._interval = retry_interval
        self._pending: dict[str, Callable[[], None]] = {}
        self._due: float | None = None

    @property
    def pending(self) -> list[str]:
        """The nodes with a write not yet stored, in the order they will be written."""
        return list(self._pending)

    @property
    def next_due(self) -> float | None:
        """The clock reading at which `flush` makes the pending writes, or None."""
        return self._due

    def put(self, node: str, write: Callable[[], None]) -> bool:
        """Make ``write`` (which stores ``node``) now, or after the pending ones if any.

        Returns:
            True when every write is stored, False when some wait for a later `flush`.
        """
        self._pending.pop(node, None)
        self._pending[node] = write
        if self._due is not None:  # the store is failing: wait for the next turn
            return False
        return self._write_all()

    def flush(self) -> bool:
        """Make the pending writes if they are due; True when none is left."""
        if self._due is None:
            return True
        if self._clock() < self._due:
            return False
        return self._write_all()

    def _write_all(self) -> bool:
        retrying = self._due is not None
        stored = 0
        while self._pending:
            node, write = next(iter(self._pending.items()))
            try:
                write()
            except StateManagerError as exc:
                logger.warning(
                    "could not store %s (%d write(s) waiting); trying again in %g s: %s",
                    node,
                    len(self._pending),
                    self._interval,
                    exc,
                )
                self._due = self._clock() + self._interval
                self._interval = min(self._interval * 2, self._max_interval)
                return False
            del self._pending[node]
            stored += 1
        if retrying:
            logger.info("the state manager answers again: stored %d waiting write(s)", stored)
        self._due = None
        self._interval = self._first_interval
        return True
