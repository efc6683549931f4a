"""The bolt side of an instance: what a native ``Bolt``'s ``emit``, ``ack`` and ``fail``
delegate to."""

from __future__ import annotations

from typing import Any

from heron_core.api import DEFAULT_STREAM, Tuple
from heron_core.instance._anchoring import Acker
from heron_core.instance._router import Router


class BoltCollector:
    """A bolt's emits, through the router, anchored as Storm anchors (`Acker`); ``ack``,
    ``fail`` and ``reset_timeout`` are the acker's (the runtime binds them onto the bolt itself
    when its class does not override them, saving a call per tuple). With acking off, anchors
    are ignored."""

    def __init__(self, router: Router, acker: Acker) -> None:
        self._router = router
        self._acking = router.acking
        self._acker = acker
        self.ack = acker.ack if self._acking else acker.count_ack
        self.fail = acker.fail if self._acking else acker.count_fail

    def emit(
        self,
        tup: Any,
        stream: str | None = DEFAULT_STREAM,
        anchors: Any = None,
        direct_task: Any = None,
        need_task_ids: Any = False,
    ) -> list[int] | None:
        tree = self._acker.anchored(anchors) if anchors and self._acking else None
        tasks = self._router.emit(tup, stream, direct_task, tree)
        return tasks if need_task_ids else None

    def reset_timeout(self, tup: Tuple) -> None:
        """Restart the message timeout of every tree ``tup`` belongs to (Storm's
        resetTimeout)."""
        if self._acking:
            self._acker.reset_timeout(tup)
