"""The spout side of an instance: what a native ``Spout``'s ``emit`` delegates to."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM
from heron_core.instance._acking import AckSender, InFlight
from heron_core.instance._anchoring import EdgeIds, SpoutTree
from heron_core.instance._router import HookedRouter, Router


class SpoutCollector:
    """A spout's emits, through the router.

    With acking off, an emit with a message id is acked at once (as Heron does, and Storm with
    0 ackers): the ack reaches the spout on its next loop (``immediate_acks``). With acking on,
    such an emit roots a tuple tree (`SpoutTree`); an emit that reaches nobody is complete at
    once.

    Adding a task hook puts a `HookedRouter` in place of the router (`hook_emits`): a task
    without hooks pays nothing for them.
    """

    def __init__(
        self,
        router: Router,
        acks: AckSender,
        in_flight: InFlight,
        immediate_acks: deque[tuple[Any, str]],
        ids: EdgeIds | None = None,
    ) -> None:
        self._router = router
        self._acking = router.acking
        self._tree = SpoutTree(
            router.task_id, acks, in_flight, ids if ids is not None else EdgeIds()
        )
        self._immediate = immediate_acks
        self._acks = acks
        self._in_flight = in_flight
        self.emitted = 0
        """Tuples emitted on every stream (the spout loop's progress mark)."""

    def hook_emits(self, report: Callable[[Sequence[Any], str, list[int]], None]) -> None:
        """From now on, call ``report(values, stream, tasks)`` after each emit."""
        self._router = HookedRouter(self._router, report)

    def pending_count(self) -> int:
        """Tuple trees in flight: emitted with a message id, not yet acked, failed or timed
        out (0 with acking off)."""
        return len(self._in_flight)

    def flush(self) -> None:
        """Send what the spout emitted so far now (Storm's ``flush``), instead of at the next
        flush interval."""
        self._router.flush()
        self._acks.flush()

    def emit(
        self,
        tup: Any,
        tup_id: Any = None,
        stream: str | None = DEFAULT_STREAM,
        direct_task: Any = None,
        need_task_ids: Any = False,
    ) -> list[int] | None:
        tree = None
        if tup_id is not None and self._acking:
            tree = self._tree.start(self._router.one_copy(stream, direct_task))
        tasks = self._router.emit(tup, stream, direct_task, tree, bool(need_task_ids))
        self.emitted += 1
        if tup_id is not None:
            if stream is None:  # as pystorm's emit has it: the default stream
                stream = DEFAULT_STREAM
            if tree is None or not tree.commit(tup_id, stream):
                self._immediate.append((tup_id, stream))
        return tasks if need_task_ids else None
