"""Task hooks, as heronpy's ``heronpy.api.task_hook``: subclass `TaskHook` and register it
with ``context.add_task_hook(hook)`` in ``initialize`` or through ``topology.auto.task.hooks``.

>>> from heron_core.api.hooks import EmitInfo, TaskHook
>>> class Printing(TaskHook):
...     def emit(self, emit_info):
...         print(emit_info.stream_id, emit_info.values, emit_info.out_tasks)
>>> Printing().emit(EmitInfo(["storm"], "default", 1, [4]))
default ['storm'] [4]
"""

from heron_core.api._hooks import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    SpoutAckInfo,
    SpoutFailInfo,
    TaskHook,
)

__all__ = [
    "BoltAckInfo",
    "BoltExecuteInfo",
    "BoltFailInfo",
    "EmitInfo",
    "SpoutAckInfo",
    "SpoutFailInfo",
    "TaskHook",
]
