"""Task hooks: user code called on a task's emits, acks, fails and executes (heronpy's
``ITaskHook`` and its ``*Info`` records)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from heron_core.api._context import TopologyContext
    from heron_core.api._tuple import Tuple

__all__ = [
    "BoltAckInfo",
    "BoltExecuteInfo",
    "BoltFailInfo",
    "EmitInfo",
    "SpoutAckInfo",
    "SpoutFailInfo",
    "TaskHook",
]


class EmitInfo(NamedTuple):
    """One emit: its values, stream, the emitting task and the tasks it was sent to (empty
    when nobody subscribes)."""

    values: Any
    stream_id: str
    task_id: int
    out_tasks: list[int]


class SpoutAckInfo(NamedTuple):
    """A spout tuple's tree completed: its message id, the spout task, and the milliseconds
    from the emit to the completion (0 when acking is off: it is acked at once)."""

    message_id: Any
    spout_task_id: int
    complete_latency_ms: float


class SpoutFailInfo(NamedTuple):
    """A spout tuple's tree failed or timed out: its message id, the spout task, and the
    milliseconds from the emit to the failure: None, not measured (Storm's "not sampled")."""

    message_id: Any
    spout_task_id: int
    fail_latency_ms: float | None


class BoltExecuteInfo(NamedTuple):
    """A bolt processed an input (tick tuples included): the tuple, the bolt task and the
    milliseconds ``process`` took (for a bolt that takes whole batches, each input's own time
    when ``process_batch`` takes them one by one through ``batch.each``, as the Storm facade's
    bolts do, else the batch's time shared evenly by its inputs)."""

    heron_tuple: Tuple
    executing_task_id: int
    execute_latency_ms: float


class BoltAckInfo(NamedTuple):
    """A bolt acked an input: the tuple, the bolt task and the milliseconds from the input's
    arrival to the ack."""

    heron_tuple: Tuple
    acking_task_id: int
    process_latency_ms: float


class BoltFailInfo(NamedTuple):
    """A bolt failed an input: the tuple, the bolt task and the milliseconds from the
    input's arrival to the fail."""

    heron_tuple: Tuple
    failing_task_id: int
    fail_latency_ms: float


class TaskHook:
    """Callbacks on one task's events (heronpy's ``ITaskHook``); override the ones you need.

    Register a hook with ``context.add_task_hook(hook)`` in ``initialize``, or name its class
    in ``topology.auto.task.hooks`` (``package.module:Class``, built with no arguments in
    every task). Contract: every callback runs on the task's thread, synchronously, in
    registration order, and must not block; ``prepare`` is called once after the
    component's ``initialize`` and before any other callback; ``clean_up`` just before the
    component's ``close`` (orderly shutdown only). An exception from a hook is an exception
    of the task's user code (the task's process exits and is restarted).

    A task without hooks pays nothing for them: the instance installs the hooked paths only
    when the first hook is added.

    >>> class Counting(TaskHook):
    ...     emitted = 0
    ...     def emit(self, emit_info):
    ...         self.emitted += len(emit_info.out_tasks)
    >>> hook = Counting()
    >>> hook.emit(EmitInfo(["a"], "default", 3, [5, 6])); hook.emitted
    2
    """

    def prepare(self, conf: dict[str, Any], context: TopologyContext) -> None:
        """Called once, after the component's ``initialize``, with its config and context."""

    def clean_up(self) -> None:
        """Called just before the component's ``close`` (orderly shutdown only)."""

    def emit(self, emit_info: EmitInfo) -> None:
        """Called after every emit of the task (the tuple is batched by then)."""

    def spout_ack(self, spout_ack_info: SpoutAckInfo) -> None:
        """Called after the spout's ``ack`` for a completed tree."""

    def spout_fail(self, spout_fail_info: SpoutFailInfo) -> None:
        """Called after the spout's ``fail`` for a failed or timed-out tree."""

    def bolt_execute(self, bolt_execute_info: BoltExecuteInfo) -> None:
        """Called after the bolt processed an input."""

    def bolt_ack(self, bolt_ack_info: BoltAckInfo) -> None:
        """Called after the bolt acked an input."""

    def bolt_fail(self, bolt_fail_info: BoltFailInfo) -> None:
        """Called after the bolt failed an input."""
