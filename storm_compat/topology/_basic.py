"""What basic bolts emit with, and the exceptions that fail their input."""

from __future__ import annotations

import sys
from types import MethodType
from typing import TYPE_CHECKING, Any

from heron_core.api import DEFAULT_STREAM
from heron_core.errors import HeronError
from storm_compat.task import OutputCollector
from storm_compat.tuple import Tuple
from storm_compat.tuple._overloads import UNSET, given

if TYPE_CHECKING:
    from heron_core.instance._bolt import InputAnchored

__all__ = ["BasicOutputCollector", "FailedException", "ReportedFailedException"]


class FailedException(RuntimeError):
    """Raised by a basic bolt's ``execute``: the input tuple is failed instead of acked.

    Built like Storm's: ``FailedException()``, ``(message)``, ``(message, cause)`` or
    ``(cause)``; a cause becomes ``__cause__``.

    >>> str(FailedException("bad record", ValueError("x")))
    'bad record'
    >>> FailedException(KeyError("k")).__cause__
    KeyError('k')
    """

    def __init__(
        self, message: str | BaseException | None = None, cause: BaseException | None = None
    ) -> None:
        if isinstance(message, BaseException):
            cause = message
        text = None if message is None else str(message)
        super().__init__(*(() if text is None else (text,)))
        self.__cause__ = cause


class ReportedFailedException(FailedException):
    """Like ``FailedException``, and the error is also reported (``reportError``)."""


class _Anchors:
    """The input being executed, where no kernel collector keeps it (see `BasicOutputCollector`):
    ``[input]``, ``[]`` for a tick, None before the first input."""

    __slots__ = ("anchors",)

    def __init__(self) -> None:
        self.anchors: list[Tuple] | None = None


class BasicOutputCollector:
    """What a basic bolt emits with: every emit is anchored to the tuple being executed.

    >>> class Printing:  # a fake kernel collector
    ...     def emit(self, values, stream, anchors, direct_task, need_task_ids):
    ...         print(stream, values, [a.values for a in anchors])
    ...         return [2]
    >>> from storm_compat.tuple import Fields
    >>> basic = BasicOutputCollector(OutputCollector(Printing()))
    >>> basic.setContext(Tuple.of(["a b"], Fields("sentence")))
    >>> basic.emit(["a"])
    default ['a'] [['a b']]
    [2]
    """

    def __init__(self, out: OutputCollector) -> None:
        self.out = out
        # The input being executed (its anchors) and, where ``out`` is a plain OutputCollector
        # without debug logging over an instance's collector (and a subclass has no ``emit`` of
        # its own), this object's ``emit``: the kernel's compiled emit anchored to the input
        # (heron_core.instance._bolt.InputAnchored), which hands every call but
        # ``emit(values)`` to the general path below.
        # The kernel's module is looked up, not imported: outside an instance it is not
        # loaded, and importing the facade should not load the instance's machinery.
        kernel = sys.modules.get("heron_core.instance._bolt")
        collector: Any = out._collector if type(out) is OutputCollector and not out._debug else None
        if kernel is not None and type(collector) is kernel.BoltCollector:
            general = MethodType(BasicOutputCollector.emit, self)  # not shadowed below
            self._input: _Anchors | InputAnchored = collector.input_anchored(general)
            if type(self).emit is BasicOutputCollector.emit:
                self.emit = self._input.emit  # type: ignore[method-assign]
        else:
            self._input = _Anchors()

    def setContext(self, inputTuple: Tuple) -> None:
        """Set the tuple being executed (done by the runtime before each ``execute``)."""
        self._input.anchors = [] if inputTuple.isTick() else [inputTuple]

    def _anchor(self) -> list[Tuple]:
        anchors = self._input.anchors
        if anchors is None:
            raise HeronError(
                "BasicOutputCollector used outside execute(): no input tuple to anchor"
            )
        return anchors

    def _stream_values(self, method: str, args: tuple[Any, ...]) -> tuple[str, Any]:
        if len(args) == 1:
            return DEFAULT_STREAM, args[0]
        if len(args) == 2 and isinstance(args[0], str):
            return args[0], args[1]
        raise TypeError(f"{method}([streamId,] values) got {len(args)} arguments: {args!r}")

    def emit(self, first: Any = UNSET, second: Any = UNSET, /, *more: Any) -> list[int]:
        """``emit([streamId,] values)``, anchored to the input: the receiving tasks' ids."""
        stream, values = self._stream_values("emit", given(first, second, *more))
        return self.out.emit(stream, self._anchor(), values)

    def emitDirect(self, taskId: int, *args: Any) -> None:
        """``emitDirect(taskId, [streamId,] values)`` on a direct stream, anchored to the input."""
        stream, values = self._stream_values("emitDirect", args)
        self.out.emitDirect(taskId, stream, self._anchor(), values)

    def resetTimeout(self, tuple: Tuple) -> None:
        """Restart the message timeout of ``tuple``'s trees."""
        self.out.resetTimeout(tuple)

    def reportError(self, error: BaseException) -> None:
        """Report ``error`` (logged at ERROR with its traceback)."""
        self.out.reportError(error)

    def getOutputter(self) -> OutputCollector:
        """The underlying ``OutputCollector``."""
        return self.out
