"""Task hooks (Storm's ``org.apache.storm.hooks``): extend `BaseTaskHook` and add it with
``context.addTaskHook(hook)`` or through ``topology.auto.task.hooks``; the records it gets
are in `storm_compat.hooks.info`.

>>> from storm_compat.hooks import BaseTaskHook, ITaskHook
>>> issubclass(BaseTaskHook, ITaskHook)
True
"""

from storm_compat.hooks._hooks import BaseTaskHook, ITaskHook

__all__ = ["BaseTaskHook", "ITaskHook"]
