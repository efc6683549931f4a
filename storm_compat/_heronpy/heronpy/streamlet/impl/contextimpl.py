"""``ContextImpl``: the `Context` of a running stage, over the task's topology context."""

from __future__ import annotations

from typing import Any, Protocol

from heron_core.api import TopologyContext
from heronpy.streamlet.context import Context
from heronpy.streamlet.impl.streamletboltbase import OUTPUT_STREAM

__all__ = ["ContextImpl"]


class _Emitter(Protocol):
    def emit_element(self, value: Any) -> None: ...


class ContextImpl(Context):
    """The `Context` a Generator or TransformOperator gets in ``setup``.

    Args:
        top_context: the task's topology context.
        state: the state the instance gave the stage's ``init_state`` (``EFFECTIVELY_ONCE``),
            or None.
        emitter: the stage's spout or bolt, whose ``emit_element`` emits one element.
    """

    def __init__(self, top_context: TopologyContext, state: Any, emitter: _Emitter) -> None:
        self._top_context = top_context
        self._state = state
        self._emitter = emitter

    def get_task_id(self) -> int:
        return self._top_context.get_task_id()

    def get_config(self) -> dict[str, Any]:
        return self._top_context.get_cluster_config()

    def get_stream_name(self) -> str:
        sources = self._top_context.get_this_sources()
        if not sources:  # a source stage: the stream it writes
            return OUTPUT_STREAM
        return next(iter(sources)).stream_id

    def get_num_partitions(self) -> int:
        context = self._top_context
        return len(context.get_component_tasks(context.get_component_id()))

    def get_partition_index(self) -> int:
        context = self._top_context
        tasks = sorted(context.get_component_tasks(context.get_component_id()))
        return tasks.index(context.get_task_id())

    def get_state(self) -> Any:
        return self._state

    def emit(self, values: Any) -> None:
        self._emitter.emit_element(values)
