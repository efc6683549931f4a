"""Storm's ``SpoutOutputCollector``: how a spout emits.

Argument lists follow Storm's Java overloads: a ``str`` first is the stream id, then the
values, then an optional message id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM, SpoutCollector
from storm_compat.tuple._overloads import UNSET, given

__all__ = ["SpoutOutputCollector"]

log = logging.getLogger("storm_compat.spout")


def _parse(method: str, args: Sequence[Any], where: str) -> tuple[str, Sequence[Any], Any]:
    """``(stream, values, message id)`` from ``[streamId,] values[, messageId]``."""
    count = len(args)
    if count == 1 or (count == 2 and not isinstance(args[0], str)):
        stream, values, message_id = DEFAULT_STREAM, args[0], args[1] if count == 2 else None
    elif count in (2, 3):
        stream, values, message_id = args[0], args[1], args[2] if count == 3 else None
    else:
        raise TypeError(
            f"{where}: {method}([streamId,] values[, messageId]) got {count} arguments: {args!r}"
        )
    return stream, values, message_id


class SpoutOutputCollector:
    """What a spout emits with (given to ``open``).

    A tuple emitted with a message id is tracked: the spout's ``ack`` or ``fail`` gets the id
    back when its tree completes, fails or times out (at once, acked, when acking is off).

    Args:
        collector: the kernel's collector of the running spout (a fake in unit tests).
        where: names the topology, component and task in messages.
        debug: log every emit (``topology.debug``).
        errors: where `reportError` sends an error (the native context's ``report_error``,
            which logs and publishes it); None only logs it.

    >>> class Printing:  # a fake kernel collector
    ...     def emit(self, values, tup_id, stream, direct_task, need_task_ids):
    ...         print(stream, values, tup_id)
    ...         return [3]
    >>> SpoutOutputCollector(Printing()).emit("words", ["storm"], "msg-1")
    words ['storm'] msg-1
    [3]
    """

    def __init__(
        self,
        collector: SpoutCollector,
        where: str = "spout",
        debug: bool = False,
        errors: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._collector = collector
        self._where = where
        self._debug = debug
        self._errors = errors

    def emit(
        self, first: Any = UNSET, second: Any = UNSET, third: Any = UNSET, /, *more: Any
    ) -> list[int]:
        """``emit([streamId,] values[, messageId])``: the ids of the receiving tasks."""
        if third is UNSET and not self._debug:  # emit(values[, messageId]), straight to the kernel
            if second is UNSET:
                if first is not UNSET:
                    return self._collector.emit(first, None, DEFAULT_STREAM, None, True) or []
            elif not isinstance(first, str):
                return self._collector.emit(first, second, DEFAULT_STREAM, None, True) or []
        stream, values, message_id = _parse("emit", given(first, second, third, *more), self._where)
        if self._debug:
            log.info("%s: Emitting: %s %r %r", self._where, stream, values, message_id)
        return self._collector.emit(values, message_id, stream, None, True) or []

    def emitDirect(self, taskId: int, *args: Any) -> None:
        """``emitDirect(taskId, [streamId,] values[, messageId])`` on a direct stream: to
        task ``taskId``, which must subscribe to it with a direct grouping; tracked like
        ``emit`` when a message id is given."""
        stream, values, message_id = _parse("emitDirect", args, self._where)
        if self._debug:
            log.info(
                "%s: Emitting direct: %d; %s %r %r", self._where, taskId, stream, values, message_id
            )
        self._collector.emit(values, message_id, stream, taskId, False)

    def flush(self) -> None:
        """Send what this spout emitted so far now, instead of at the next flush interval
        (``heron.instance.batch.flush.interval.ms``).

        Raises:
            NotImplementedError: the kernel's collector cannot flush (a fake in a unit test).
        """
        self._kernel("flush")()

    def getPendingCount(self) -> int:
        """Tuples this spout task emitted with a message id whose trees are not yet acked,
        failed or timed out (0 with acking off: nothing is tracked).

        Raises:
            NotImplementedError: the kernel's collector cannot tell (a fake in a unit test).
        """
        return int(self._kernel("pending_count")())

    def _kernel(self, name: str) -> Callable[[], Any]:
        method = getattr(self._collector, name, None)
        if method is None:
            raise NotImplementedError(
                f"{self._where}: {type(self._collector).__name__} has no {name}"
            )
        return method

    def reportError(self, error: BaseException) -> None:
        """Report ``error``: logged at ERROR with its traceback in the task's log and
        published to the topology's exception log (Storm UI's errors)."""
        if self._errors is not None:
            self._errors(error)
        else:
            log.error("%s: reported error: %r", self._where, error, exc_info=error)
