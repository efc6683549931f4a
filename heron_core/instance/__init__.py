"""The Heron Instance daemon: one process per spout or bolt task.

Run as ``python -m heron_core.instance``.
"""

from heron_core.instance._runtime import InstanceArgs, InstanceRuntime

__all__ = ["InstanceArgs", "InstanceRuntime"]
