"""Storm's task hooks (``org.apache.storm.hooks``) and how the kernel runs them.

The kernel has one hook mechanism (`heron_core.api.hooks.TaskHook`); a Storm hook runs
inside a `KernelTaskHook`, which turns the kernel's records into Storm's (camelCase fields,
Storm tuples, whole milliseconds).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any

from heron_core.api import TICK_STREAM
from heron_core.api import TopologyContext as NativeContext
from heron_core.api import Tuple as NativeTuple
from heron_core.api import hooks as native
from storm_compat.hooks._info import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    SpoutAckInfo,
    SpoutFailInfo,
)
from storm_compat.tuple import Fields, Tuple

if TYPE_CHECKING:
    from storm_compat.task import TopologyContext

__all__ = ["BaseTaskHook", "ITaskHook", "KernelTaskHook"]

_TICK_FIELDS = Fields("rate_secs")


class ITaskHook(abc.ABC):
    """Callbacks on one task's events (Storm's ``ITaskHook``; extend `BaseTaskHook`).

    Register one with ``context.addTaskHook(hook)`` in ``open``/``prepare``, or name its
    class (``package.module.Class``) in ``topology.auto.task.hooks``. Contract, as in Storm:
    ``prepare`` is called when the hook is added (an auto hook: before the spout's ``open``
    or the bolt's ``prepare``); then every callback runs on the task's thread, synchronously,
    and must not block; ``cleanup`` before the component's ``close``/``cleanup`` at orderly
    shutdown. ``emit`` is called for every emit, ``spoutAck``/``spoutFail`` after the spout's
    ``ack``/``fail``, ``boltExecute`` after each ``execute`` (tick tuples included),
    ``boltAck``/``boltFail`` after each ``ack``/``fail`` of an input.
    """

    @abc.abstractmethod
    def prepare(self, conf: dict[str, Any], context: TopologyContext) -> None:
        """Called once, when the hook is added to the task."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Called before the component's ``close``/``cleanup`` (orderly shutdown only)."""

    @abc.abstractmethod
    def emit(self, info: EmitInfo) -> None:
        """The task emitted a tuple."""

    @abc.abstractmethod
    def spoutAck(self, info: SpoutAckInfo) -> None:
        """A tree of this spout task completed."""

    @abc.abstractmethod
    def spoutFail(self, info: SpoutFailInfo) -> None:
        """A tree of this spout task failed or timed out."""

    @abc.abstractmethod
    def boltExecute(self, info: BoltExecuteInfo) -> None:
        """This bolt task's ``execute`` returned."""

    @abc.abstractmethod
    def boltAck(self, info: BoltAckInfo) -> None:
        """This bolt task acked an input."""

    @abc.abstractmethod
    def boltFail(self, info: BoltFailInfo) -> None:
        """This bolt task failed an input."""

    def to_task_hook(self, context: NativeContext) -> native.TaskHook:
        """The kernel's hook that runs this one in the task of ``context``, prepared now (how
        ``topology.auto.task.hooks`` adds a Storm hook: before ``open``/``prepare``, as
        Storm does)."""
        from storm_compat.task import TopologyContext  # the task package imports this one

        self.prepare(context.get_cluster_config(), TopologyContext(context))
        return KernelTaskHook(self, context)


class BaseTaskHook(ITaskHook):
    """A task hook whose callbacks do nothing: override the ones you need (Storm's
    ``BaseTaskHook``).

    >>> class Emits(BaseTaskHook):
    ...     def __init__(self):
    ...         self.streams = []
    ...     def emit(self, info):
    ...         self.streams.append(info.stream)
    >>> hook = Emits()
    >>> hook.emit(EmitInfo(["a"], "words", 1, [2])); hook.streams
    ['words']
    """

    def prepare(self, conf: dict[str, Any], context: TopologyContext) -> None:
        """Nothing to prepare unless overridden."""

    def cleanup(self) -> None:
        """Nothing to clean up unless overridden."""

    def emit(self, info: EmitInfo) -> None:
        """Ignores emits unless overridden."""

    def spoutAck(self, info: SpoutAckInfo) -> None:
        """Ignores spout acks unless overridden."""

    def spoutFail(self, info: SpoutFailInfo) -> None:
        """Ignores spout fails unless overridden."""

    def boltExecute(self, info: BoltExecuteInfo) -> None:
        """Ignores executes unless overridden."""

    def boltAck(self, info: BoltAckInfo) -> None:
        """Ignores bolt acks unless overridden."""

    def boltFail(self, info: BoltFailInfo) -> None:
        """Ignores bolt fails unless overridden."""


def _ms(latency: float | None) -> int | None:
    """Whole milliseconds, as Storm reports latencies (None stays None)."""
    return None if latency is None else round(latency)


class KernelTaskHook(native.TaskHook):
    """Runs the Storm hook ``hook`` as a kernel hook of the task of ``context``: each
    kernel record is turned into Storm's. ``prepare`` does nothing: a Storm hook is
    prepared when it is added (`TopologyContext.addTaskHook`, `ITaskHook.to_task_hook`).

    Attributes:
        hook: the Storm hook.
    """

    def __init__(self, hook: ITaskHook, context: NativeContext) -> None:
        self.hook = hook
        self._context = context

    def _storm_tuple(self, tup: NativeTuple) -> Tuple:
        """``tup`` as a Storm tuple (a tick reaches hooks as the kernel's tuple)."""
        if isinstance(tup, Tuple):
            return tup
        if tup.stream == TICK_STREAM:
            return Tuple(tup, _TICK_FIELDS)
        return Tuple(tup, Fields(self._context.get_output_fields(tup.component, tup.stream)))

    def prepare(self, conf: dict[str, Any], context: NativeContext) -> None:
        """The Storm hook was prepared when it was added (Storm's order)."""

    def clean_up(self) -> None:
        self.hook.cleanup()

    def emit(self, emit_info: native.EmitInfo) -> None:
        values, stream, task, out = emit_info
        self.hook.emit(EmitInfo(list(values), stream, task, list(out)))

    def spout_ack(self, spout_ack_info: native.SpoutAckInfo) -> None:
        message_id, task, latency = spout_ack_info
        self.hook.spoutAck(SpoutAckInfo(message_id, task, _ms(latency)))

    def spout_fail(self, spout_fail_info: native.SpoutFailInfo) -> None:
        message_id, task, latency = spout_fail_info
        self.hook.spoutFail(SpoutFailInfo(message_id, task, _ms(latency)))

    def bolt_execute(self, bolt_execute_info: native.BoltExecuteInfo) -> None:
        tup, task, latency = bolt_execute_info
        self.hook.boltExecute(BoltExecuteInfo(self._storm_tuple(tup), task, _ms(latency)))

    def bolt_ack(self, bolt_ack_info: native.BoltAckInfo) -> None:
        tup, task, latency = bolt_ack_info
        self.hook.boltAck(BoltAckInfo(self._storm_tuple(tup), task, _ms(latency)))

    def bolt_fail(self, bolt_fail_info: native.BoltFailInfo) -> None:
        tup, task, latency = bolt_fail_info
        self.hook.boltFail(BoltFailInfo(self._storm_tuple(tup), task, _ms(latency)))
