"""Storm's hook info records (``org.apache.storm.hooks.info``): what a task hook is told."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from storm_compat.task import TopologyContext
    from storm_compat.tuple import Tuple

__all__ = [
    "BoltAckInfo",
    "BoltExecuteInfo",
    "BoltFailInfo",
    "EmitInfo",
    "SpoutAckInfo",
    "SpoutFailInfo",
]


class EmitInfo:
    """A tuple the task emitted: ``values``, ``stream``, the emitting ``taskId`` and the
    ``outTasks`` it was sent to.

    >>> EmitInfo(["a"], "default", 3, [5])
    EmitInfo(values=['a'], stream='default', taskId=3, outTasks=[5])
    """

    __slots__ = ("outTasks", "stream", "taskId", "values")

    def __init__(self, values: list[Any], stream: str, taskId: int, outTasks: list[int]) -> None:
        self.values = values
        self.stream = stream
        self.taskId = taskId
        self.outTasks = outTasks

    def applyOn(self, topologyContext: TopologyContext) -> None:
        """Call ``emit`` of every hook of ``topologyContext`` with this record."""
        for hook in topologyContext.getHooks():
            hook.emit(self)

    def __repr__(self) -> str:
        return (
            f"EmitInfo(values={self.values!r}, stream={self.stream!r}, taskId={self.taskId}, "
            f"outTasks={self.outTasks!r})"
        )


class SpoutAckInfo:
    """A spout tuple's tree completed: its ``messageId``, the ``spoutTaskId`` and the
    ``completeLatencyMs`` from the emit (0 when acking is off)."""

    __slots__ = ("completeLatencyMs", "messageId", "spoutTaskId")

    def __init__(self, messageId: Any, spoutTaskId: int, completeLatencyMs: int | None) -> None:
        self.messageId = messageId
        self.spoutTaskId = spoutTaskId
        self.completeLatencyMs = completeLatencyMs

    def applyOn(self, topologyContext: TopologyContext) -> None:
        """Call ``spoutAck`` of every hook of ``topologyContext`` with this record."""
        for hook in topologyContext.getHooks():
            hook.spoutAck(self)

    def __repr__(self) -> str:
        return (
            f"SpoutAckInfo(messageId={self.messageId!r}, spoutTaskId={self.spoutTaskId}, "
            f"completeLatencyMs={self.completeLatencyMs})"
        )


class SpoutFailInfo:
    """A spout tuple's tree failed or timed out: its ``messageId``, the ``spoutTaskId`` and
    ``failLatencyMs`` (None: not measured, Storm's "not sampled")."""

    __slots__ = ("failLatencyMs", "messageId", "spoutTaskId")

    def __init__(self, messageId: Any, spoutTaskId: int, failLatencyMs: int | None) -> None:
        self.messageId = messageId
        self.spoutTaskId = spoutTaskId
        self.failLatencyMs = failLatencyMs

    def applyOn(self, topologyContext: TopologyContext) -> None:
        """Call ``spoutFail`` of every hook of ``topologyContext`` with this record."""
        for hook in topologyContext.getHooks():
            hook.spoutFail(self)

    def __repr__(self) -> str:
        return (
            f"SpoutFailInfo(messageId={self.messageId!r}, spoutTaskId={self.spoutTaskId}, "
            f"failLatencyMs={self.failLatencyMs})"
        )


class BoltExecuteInfo:
    """A bolt's ``execute`` returned: the input ``tuple``, the ``executingTaskId`` and
    ``executeLatencyMs``."""

    __slots__ = ("executeLatencyMs", "executingTaskId", "tuple")

    def __init__(self, tuple: Tuple, executingTaskId: int, executeLatencyMs: int | None) -> None:
        self.tuple = tuple
        self.executingTaskId = executingTaskId
        self.executeLatencyMs = executeLatencyMs

    def applyOn(self, topologyContext: TopologyContext) -> None:
        """Call ``boltExecute`` of every hook of ``topologyContext`` with this record."""
        for hook in topologyContext.getHooks():
            hook.boltExecute(self)

    def __repr__(self) -> str:
        return (
            f"BoltExecuteInfo(tuple={self.tuple!r}, executingTaskId={self.executingTaskId}, "
            f"executeLatencyMs={self.executeLatencyMs})"
        )


class BoltAckInfo:
    """A bolt acked an input: the ``tuple``, the ``ackingTaskId`` and ``processLatencyMs``
    (from the input's arrival to the ack)."""

    __slots__ = ("ackingTaskId", "processLatencyMs", "tuple")

    def __init__(self, tuple: Tuple, ackingTaskId: int, processLatencyMs: int | None) -> None:
        self.tuple = tuple
        self.ackingTaskId = ackingTaskId
        self.processLatencyMs = processLatencyMs

    def applyOn(self, topologyContext: TopologyContext) -> None:
        """Call ``boltAck`` of every hook of ``topologyContext`` with this record."""
        for hook in topologyContext.getHooks():
            hook.boltAck(self)

    def __repr__(self) -> str:
        return (
            f"BoltAckInfo(tuple={self.tuple!r}, ackingTaskId={self.ackingTaskId}, "
            f"processLatencyMs={self.processLatencyMs})"
        )


class BoltFailInfo:
    """A bolt failed an input: the ``tuple``, the ``failingTaskId`` and ``failLatencyMs``
    (from the input's arrival to the fail)."""

    __slots__ = ("failLatencyMs", "failingTaskId", "tuple")

    def __init__(self, tuple: Tuple, failingTaskId: int, failLatencyMs: int | None) -> None:
        self.tuple = tuple
        self.failingTaskId = failingTaskId
        self.failLatencyMs = failLatencyMs

    def applyOn(self, topologyContext: TopologyContext) -> None:
        """Call ``boltFail`` of every hook of ``topologyContext`` with this record."""
        for hook in topologyContext.getHooks():
            hook.boltFail(self)

    def __repr__(self) -> str:
        return (
            f"BoltFailInfo(tuple={self.tuple!r}, failingTaskId={self.failingTaskId}, "
            f"failLatencyMs={self.failLatencyMs})"
        )
