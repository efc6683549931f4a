"""heronpy's ``task_hook``: ``ITaskHook`` and the ``*Info`` records it receives.

Task hooks are not built in this engine: ``context.add_task_hook(hook)`` raises
``NotImplementedError`` naming the hook, and ``topology.auto.task.hooks`` is refused by the
config registry, so a topology relying on a hook fails at start instead of running without it.
The interface is here so that modules defining hooks import unchanged.
"""

from __future__ import annotations

import abc
from collections import namedtuple
from typing import Any

__all__ = [
    "BoltAckInfo",
    "BoltExecuteInfo",
    "BoltFailInfo",
    "EmitInfo",
    "ITaskHook",
    "SpoutAckInfo",
    "SpoutFailInfo",
]


class ITaskHook(abc.ABC):  # noqa: B024 (heronpy's interface; every method is a hook)
    """Callbacks on a task's events (heronpy's interface)."""

    def prepare(self, conf: dict[str, Any], context: Any) -> None:  # noqa: B027
        """Called after the component's ``initialize``."""

    def clean_up(self) -> None:  # noqa: B027
        """Called before the component closes."""

    def emit(self, emit_info: EmitInfo) -> None:  # noqa: B027
        """Called on every emit."""

    def spout_ack(self, spout_ack_info: SpoutAckInfo) -> None:  # noqa: B027
        """Called when a spout tuple tree completes."""

    def spout_fail(self, spout_fail_info: SpoutFailInfo) -> None:  # noqa: B027
        """Called when a spout tuple tree fails."""

    def bolt_execute(self, bolt_execute_info: BoltExecuteInfo) -> None:  # noqa: B027
        """Called after a bolt processes a tuple."""

    def bolt_ack(self, bolt_ack_info: BoltAckInfo) -> None:  # noqa: B027
        """Called when a bolt acks a tuple."""

    def bolt_fail(self, bolt_fail_info: BoltFailInfo) -> None:  # noqa: B027
        """Called when a bolt fails a tuple."""


EmitInfo = namedtuple("EmitInfo", "values, stream_id, task_id, out_tasks")
SpoutAckInfo = namedtuple("SpoutAckInfo", "message_id, spout_task_id, complete_latency_ms")
SpoutFailInfo = namedtuple("SpoutFailInfo", "message_id, spout_task_id, fail_latency_ms")
BoltExecuteInfo = namedtuple(
    "BoltExecuteInfo", "heron_tuple, executing_task_id, execute_latency_ms"
)
BoltAckInfo = namedtuple("BoltAckInfo", "heron_tuple, acking_task_id, process_latency_ms")
BoltFailInfo = namedtuple("BoltFailInfo", "heron_tuple, failing_task_id, fail_latency_ms")
