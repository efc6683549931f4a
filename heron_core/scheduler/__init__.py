"""Schedulers: who starts, watches and stops a topology's containers, behind `Scheduler`.

Built-ins are registered under short names in `BUILTINS` (``heron.class.scheduler``):
``local`` (one executor process per container on this host) and ``spark`` (one long-running
Spark task per container, through PySpark). `create_scheduler` also accepts a
``package.module:Class`` path or a `Scheduler` instance. ``python -m heron_core.scheduler`` is
the per-topology scheduler service that ``heron submit`` starts.
"""

from __future__ import annotations

from heron_core.plugins import load_plugin
from heron_core.scheduler._local import LocalScheduler
from heron_core.scheduler._package import SHIPPED, build_package, unpack_package
from heron_core.scheduler._requests import (
    RequestAnswer,
    RestartRequest,
    UpdateRequest,
    read_answer,
    write_request,
)
from heron_core.scheduler._spark import SparkScheduler
from heron_core.scheduler._update import apply_update
from heron_core.scheduler.base import Scheduler, TopologyRuntime

__all__ = [
    "BUILTINS",
    "SHIPPED",
    "LocalScheduler",
    "RequestAnswer",
    "RestartRequest",
    "Scheduler",
    "SparkScheduler",
    "TopologyRuntime",
    "UpdateRequest",
    "apply_update",
    "build_package",
    "create_scheduler",
    "read_answer",
    "unpack_package",
    "write_request",
]

BUILTINS: dict[str, str] = {
    "local": "heron_core.scheduler:LocalScheduler",
    "spark": "heron_core.scheduler:SparkScheduler",
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
    heron_core.errors.ConfigurationError: unknown scheduler 'yarn'; known: local, spark, \
or a 'package.module:Class' path
    """
    return load_plugin("scheduler", spec, BUILTINS, Scheduler)
