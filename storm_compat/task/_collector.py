"""Storm's ``OutputCollector``: how a rich bolt emits, acks and fails.

The argument lists follow Storm's Java overloads, told apart by type: a ``str`` first is the
stream id, a ``Tuple`` or a collection of them is the anchor(s), the last argument is the
values.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM, BoltCollector
from heron_core.api import Tuple as NativeTuple
from heron_core.errors import HeronError
from storm_compat.tuple import Tuple
from storm_compat.tuple._overloads import UNSET, given

__all__ = ["OutputCollector"]

log = logging.getLogger("storm_compat.task")


def _anchors(value: object, where: str) -> list[NativeTuple]:
    """The tuples of ``value`` (one Tuple or a collection), ticks left out."""
    if isinstance(value, Tuple):
        return [] if value.isTick() else [value]
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(
            f"{where}: anchors must be a Tuple or a collection of Tuples, got {value!r}"
        )
    kept: list[NativeTuple] = []
    for item in value:
        if not isinstance(item, Tuple):
            raise TypeError(f"{where}: anchors must be Tuples received by this bolt, got {item!r}")
        if not item.isTick():
            kept.append(item)
    return kept


def parse_bolt_emit(
    method: str, args: Sequence[Any], where: str
) -> tuple[str, list[NativeTuple] | None, Sequence[Any]]:
    """``(stream, anchors, values)`` from ``emit([streamId,] [anchor(s),] values)`` arguments."""
    values: Sequence[Any] = args[-1] if args else ()
    if len(args) == 1:
        return DEFAULT_STREAM, None, values
    if len(args) == 2:
        if isinstance(args[0], str):
            return args[0], None, values
        return DEFAULT_STREAM, _anchors(args[0], where), values
    if len(args) == 3 and isinstance(args[0], str):
        return args[0], _anchors(args[1], where), values
    raise TypeError(
        f"{where}: {method}([streamId,] [anchor or anchors,] values) got {len(args)} "
        f"arguments: {args!r}"
    )


class OutputCollector:
    """What a rich bolt emits, acks and fails with (given to ``prepare``).

    Nothing is anchored or acked for you: pass the input as anchor and ``ack`` every input.
    Acking or failing a tuple a second time is ignored with a warning, as Heron does.

    Args:
        collector: the kernel's collector of the running bolt (in a unit test, a fake with
            ``emit``, ``ack`` and ``fail``).
        where: names the topology, component and task in messages.
        debug: log every emit, ack and fail (``topology.debug``).
        errors: where `reportError` sends an error (the native context's ``report_error``,
            which logs and publishes it); None only logs it.

    >>> class Printing:  # a fake kernel collector
    ...     def emit(self, values, stream, anchors, direct_task, need_task_ids):
    ...         print("emit", stream, values, len(anchors or ()))
    ...         return [7]
    ...     def ack(self, tup):
    ...         print("ack", tup.values)
    ...     def fail(self, tup):
    ...         print("fail", tup.values)
    >>> from storm_compat.tuple import Fields, Values
    >>> collector = OutputCollector(Printing())
    >>> tup = Tuple.of(["storm"], Fields("word"))
    >>> collector.emit(tup, Values("storm!"))
    emit default ['storm!'] 1
    [7]
    >>> collector.ack(tup)
    ack ['storm']
    """

    def __init__(
        self,
        collector: BoltCollector,
        where: str = "bolt",
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
        """``emit([streamId,] [anchor or anchors,] values)``: the ids of the receiving tasks."""
        if second is UNSET:  # emit(values), the common overloads straight to the kernel
            if first is not UNSET and not self._debug:
                return self._collector.emit(first, DEFAULT_STREAM, None, None, True) or []
        elif third is UNSET and type(first) is Tuple and not self._debug:  # emit(anchor, values)
            if first.stream == TICK_STREAM and first.component == SYSTEM_COMPONENT:
                return self._collector.emit(second, DEFAULT_STREAM, [], None, True) or []
            return self._collector.emit(second, DEFAULT_STREAM, [first], None, True) or []
        stream, anchors, values = parse_bolt_emit(
            "emit", given(first, second, third, *more), self._where
        )
        if self._debug:
            log.info("%s: Emitting: %s %r", self._where, stream, values)
        return self._collector.emit(values, stream, anchors, None, True) or []

    def emitDirect(self, taskId: int, *args: Any) -> None:
        """``emitDirect(taskId, [streamId,] [anchor or anchors,] values)`` on a direct stream."""
        stream, anchors, values = parse_bolt_emit("emitDirect", args, self._where)
        if self._debug:
            log.info("%s: Emitting direct: %d; %s %r", self._where, taskId, stream, values)
        self._collector.emit(values, stream, anchors, taskId, False)

    def _settle(self, tup: Tuple, verb: str) -> bool:
        if not isinstance(tup, Tuple):
            raise TypeError(f"{self._where}: {verb} takes a Tuple this bolt received, got {tup!r}")
        if tup._done:
            log.warning(
                "%s: %s of a tuple already acked or failed, ignored (as Heron does): %r",
                self._where,
                verb,
                tup,
            )
            return False
        tup._done = True
        if self._debug:
            log.info("%s: BOLT %s TUPLE: %r", self._where, verb, tup)
        return not tup.isTick()

    def ack(self, input: Tuple) -> None:
        """Mark ``input`` processed (its tuple trees may complete)."""
        if type(input) is Tuple and not input._done and not self._debug:
            input._done = True
            if input.stream != TICK_STREAM or input.component != SYSTEM_COMPONENT:
                self._collector.ack(input)
            return
        if self._settle(input, "ack"):
            self._collector.ack(input)

    def fail(self, input: Tuple) -> None:
        """Fail the tuple trees ``input`` belongs to (their spouts' ``fail`` is called)."""
        if self._settle(input, "fail"):
            self._collector.fail(input)

    def resetTimeout(self, input: Tuple) -> None:
        """Restart the message timeout of the tuple trees ``input`` belongs to.

        Raises:
            HeronError: the kernel's collector cannot reset timeouts.
        """
        reset = getattr(self._collector, "reset_timeout", None)
        if reset is None:
            raise HeronError(
                f"{self._where}: resetTimeout needs at-least-once acking in the kernel "
                f"({type(self._collector).__name__} has no reset_timeout)"
            )
        reset(input)

    def flush(self) -> None:
        """Send what this bolt emitted and acked so far now, instead of at the next flush
        interval (``heron.instance.batch.flush.interval.ms``).

        Raises:
            NotImplementedError: the kernel's collector cannot flush (a fake in a unit test).
        """
        flush = getattr(self._collector, "flush", None)
        if flush is None:
            raise NotImplementedError(
                f"{self._where}: flush: {type(self._collector).__name__} has no flush"
            )
        flush()

    def reportError(self, error: BaseException) -> None:
        """Report ``error``: logged at ERROR with its traceback in the task's log and
        published to the topology's exception log (Storm UI's errors)."""
        if self._errors is not None:
            self._errors(error)
        else:
            log.error("%s: reported error: %r", self._where, error, exc_info=error)
