"""What a running spout or bolt task knows about itself and its topology."""

from __future__ import annotations

import abc
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from heron_core.api._hooks import TaskHook
    from heron_core.api._spec import GlobalStreamId
    from heron_core.api._stream import Grouping

__all__ = ["TopologyContext"]


class TopologyContext(abc.ABC):
    """The context passed to ``initialize`` (heronpy's interface).

    The instance process implements it; every method is cheap and may be called from the
    task's thread at any time after construction.
    """

    @abc.abstractmethod
    def get_task_id(self) -> int:
        """This task's id, unique in the topology."""

    @abc.abstractmethod
    def get_component_id(self) -> str:
        """This task's component name."""

    @abc.abstractmethod
    def get_cluster_config(self) -> dict[str, Any]:
        """The effective config: topology config overlaid by the component config.

        It is the same dict object that ``initialize`` receives.
        """

    @abc.abstractmethod
    def get_topology_name(self) -> str:
        """The topology's name."""

    @abc.abstractmethod
    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        """The streams ``component_id`` subscribes to and their groupings; None for an unknown
        component."""

    def get_this_sources(self) -> dict[GlobalStreamId, Grouping] | None:
        """The streams this task's component subscribes to (``get_sources`` of itself)."""
        return self.get_sources(self.get_component_id())

    @abc.abstractmethod
    def get_component_tasks(self, component_id: str) -> list[int]:
        """The task ids of ``component_id``, ascending (empty for an unknown component)."""

    @abc.abstractmethod
    def get_topology_id(self) -> str:
        """The running topology's id (Storm's ``getStormId``)."""

    @abc.abstractmethod
    def get_component_index(self) -> int:
        """This task's index within its component, 0..parallelism-1."""

    @abc.abstractmethod
    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        """The fields ``component_id`` declares on ``stream`` (empty if it does not declare it)."""

    @abc.abstractmethod
    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        """``{stream: {consuming component: grouping}}`` of this task's component."""

    @abc.abstractmethod
    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        """Publish ``metric`` under ``name`` every ``time_bucket_in_sec`` seconds.

        ``metric`` is any object with ``get_value_and_reset()`` (see `heron_core.api.metrics`);
        the instance calls it on the task's thread, at the first metrics export once the bucket
        has passed (a bucket shorter than ``heron.metrics.export.interval.sec`` is rounded up
        to it), and once more when the task stops, so no value is lost. None is not
        published; a dict is published as ``name/key`` per key.

        Raises:
            ValueError: ``name`` is registered already, ``metric`` has no
                ``get_value_and_reset`` or the bucket is not positive.
        """

    def report_error(self, error: BaseException | str) -> None:
        """Report an error the task handled (Heron's and Storm's ``reportError``): an exception
        (its traceback is kept) or a stack trace text. The instance publishes it to the
        topology's exception log, merged with identical traces of the same interval; this
        default only logs it at ERROR.
        """
        where = (
            f"topology {self.get_topology_name()!r}, component {self.get_component_id()!r}, "
            f"task {self.get_task_id()}"
        )
        log_reported_error(logging.getLogger(__name__), where, error)

    def get_task_to_component(self) -> dict[int, str]:
        """Every task id of the topology and its component (Storm's ``getTaskToComponent``).

        Raises:
            NotImplementedError: unless the runtime overrides it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} cannot list the topology's tasks (get_task_to_component)"
        )

    def get_component_streams(self, component_id: str) -> list[str]:
        """The streams ``component_id`` declares, sorted (empty for an unknown component).

        Raises:
            NotImplementedError: unless the runtime overrides it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} cannot list the streams of {component_id!r} "
            "(get_component_streams)"
        )

    def get_container_tasks(self) -> list[int]:
        """The task ids of the container this task runs in, ascending, its own included
        (Storm's ``getThisWorkerTasks``: a container plays the part of a Storm worker).

        Raises:
            NotImplementedError: unless the runtime overrides it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} cannot list the tasks of its container (get_container_tasks)"
        )

    def add_task_hook(self, task_hook: TaskHook) -> None:
        """Register ``task_hook`` (a `heron_core.api.hooks.TaskHook`, heronpy's ``ITaskHook``)
        for this task: from now on it is called on the task's emits, acks, fails and
        executes; its ``prepare`` is called once ``initialize`` has returned.

        Call it from ``initialize`` (a Storm spout's ``open``, a bolt's ``prepare``).

        Raises:
            TypeError: ``task_hook`` is not a ``TaskHook``.
            HeronError: ``initialize`` has returned already (the runtime).
            NotImplementedError: unless the runtime overrides it.
        """
        raise NotImplementedError(
            f"task hooks are not supported by {type(self).__name__}; "
            f"cannot add {type(task_hook).__name__}"
        )

    def get_task_hooks(self) -> list[TaskHook]:
        """The hooks registered for this task, in registration order (auto hooks first)."""
        return []


def log_reported_error(logger: logging.Logger, where: str, error: BaseException | str) -> None:
    """Log an error a task reported: an exception as its repr with its traceback, a text as
    it is."""
    if isinstance(error, BaseException):
        logger.error("%s: reported error: %r", where, error, exc_info=error)
    else:
        logger.error("%s: reported error: %s", where, error)
