"""What task hooks report for a bolt's batch: shared by the tests of every front end whose bolts
take whole batches (the Storm facade's adapters, the streamparse adapter)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from heron_core.api import InputBatch
from heron_core.api.hooks import BoltExecuteInfo, TaskHook
from heron_core.instance._hooks import TaskHooks, hooked_process_batch


def execute_latencies(
    process_batch: Callable[[InputBatch], Any], batch: InputBatch, clock: list[float]
) -> list[tuple[Any, float]]:
    """Run ``process_batch(batch)`` as the instance does under a task hook, timed on
    ``clock[0]`` (seconds, advanced by the bolt): each reported input's values and execute
    latency (ms, rounded to 6 places), in the order the hook saw them."""
    seen: list[BoltExecuteInfo] = []

    class Hook(TaskHook):
        def bolt_execute(self, bolt_execute_info: BoltExecuteInfo) -> None:
            seen.append(bolt_execute_info)

    hooks = TaskHooks(4, "task 4", lambda: clock[0])
    hooks.add(Hook())
    hooked_process_batch(process_batch, hooks)(batch)
    return [(i.heron_tuple.values, round(i.execute_latency_ms, 6)) for i in seen]
