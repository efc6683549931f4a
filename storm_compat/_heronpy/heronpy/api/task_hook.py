"""heronpy's ``task_hook``: ``ITaskHook`` and the ``*Info`` records it receives.

They are the kernel's (`heron_core.api.hooks`): ``ITaskHook`` is ``TaskHook``, and the
records are named tuples with heronpy's fields. Register a hook with
``context.add_task_hook(hook)`` in ``initialize`` (its ``prepare`` is called once
``initialize`` returns), or name its class in ``topology.auto.task.hooks``.

>>> from heronpy.api.task_hook import EmitInfo, ITaskHook
>>> class Counter(ITaskHook):
...     def __init__(self):
...         self.emits = 0
...     def emit(self, emit_info):
...         self.emits += 1
>>> counter = Counter()
>>> counter.emit(EmitInfo(values=["a"], stream_id="default", task_id=1, out_tasks=[2]))
>>> counter.emits
1
"""

from heron_core.api.hooks import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    SpoutAckInfo,
    SpoutFailInfo,
)
from heron_core.api.hooks import TaskHook as ITaskHook

__all__ = [
    "BoltAckInfo",
    "BoltExecuteInfo",
    "BoltFailInfo",
    "EmitInfo",
    "ITaskHook",
    "SpoutAckInfo",
    "SpoutFailInfo",
]
