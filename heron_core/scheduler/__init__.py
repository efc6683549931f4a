"""Schedulers: who starts, watches and stops a topology's containers, behind `Scheduler`.

Built-ins are registered under short names in `BUILTINS` (``heron.class.scheduler``);
`create_scheduler` also accepts a ``package.module:Class`` path or a `Scheduler` instance.
"""

from __future__ import annotations

from heron_core.plugins import load_plugin
from heron_core.scheduler._local import EXECUTOR_GRACE_SECS, LocalScheduler
from heron_core.scheduler.base import Scheduler, TopologyRuntime

__all__ = [
    "BUILTINS",
    "EXECUTOR_GRACE_SECS",
    "LocalScheduler",
    "Scheduler",
    "TopologyRuntime",
    "create_scheduler",
]

BUILTINS: dict[str, str] = {
    "local": "heron_core.scheduler:LocalScheduler",
}
"""Short name -> ``package.module:Class`` of each built-in scheduler."""


def create_scheduler(spec: str | Scheduler) -> Scheduler:
    """The scheduler named by ``spec`` (``heron.class.scheduler``).

    Args:
        spec: a short name from `BUILTINS`, a ``package.module:Class`` path to a `Scheduler`
            subclass (built with no arguments), or a `Scheduler` instance, returned unchanged.

    Raises:
        ConfigurationError: an unknown short name (the message lists the known ones), a path
            that does not import, or a class that is not a `Scheduler`.

    >>> type(create_scheduler("local")).__name__
    'LocalScheduler'
    >>> create_scheduler("yarn")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: unknown scheduler 'yarn'; known: local, \
or a 'package.module:Class' path
    """
    return load_plugin("scheduler", spec, BUILTINS, Scheduler)
