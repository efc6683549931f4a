"""Storm's ``TopologyContext``, over the kernel's native context."""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import Any

from heron_core.api import DEFAULT_STREAM, SYSTEM_COMPONENT, GlobalStreamId, Grouping
from heron_core.api import TopologyContext as NativeContext
from heron_core.config import setting
from storm_compat.hooks._hooks import ITaskHook, KernelTaskHook
from storm_compat.metric.api import CombinedMetric, ICombiner, IReducer, ReducedMetric
from storm_compat.tuple import Fields

__all__ = ["TopologyContext"]

SYSTEM_TASK_ID = -1
"""The task id of the system task that sends tick tuples (Storm's ``Constants.SYSTEM_TASK_ID``)."""

_shared: list[concurrent.futures.ThreadPoolExecutor] = []
_shared_lock = threading.Lock()


def shared_executor() -> concurrent.futures.ThreadPoolExecutor:
    """The process's shared thread pool (made on first use)."""
    with _shared_lock:
        if not _shared:
            _shared.append(
                concurrent.futures.ThreadPoolExecutor(thread_name_prefix="storm-shared-executor")
            )
        return _shared[0]


def shut_shared_executor() -> None:
    """Shut the shared thread pool down, if one was made: pending work is cancelled, running
    work is not waited for."""
    with _shared_lock:
        if _shared:
            _shared.pop().shutdown(wait=False, cancel_futures=True)


class TopologyContext:
    """What a running task knows about itself and its topology (given to ``open``/``prepare``).

    Storm's ``TopologyContext`` with what it inherits from ``WorkerTopologyContext`` and
    ``GeneralTopologyContext``. Every method is cheap and may be called from the task's
    thread at any time. A container plays the part of a Storm worker, and each task runs in
    a process of its own (an executor of one task).

    Attributes:
        native: the kernel's context it reads from.
    """

    def __init__(self, native: NativeContext) -> None:
        self.native = native
        self._metrics: dict[str, Any] = {}
        self._task_data: dict[str, Any] = {}

    def _where(self) -> str:
        return (
            f"topology {self.native.get_topology_name()!r}, component "
            f"{self.native.get_component_id()!r}, task {self.native.get_task_id()}"
        )

    # --- this task ---------------------------------------------------------------------------
    def getThisTaskId(self) -> int:
        """This task's id, unique in the topology."""
        return self.native.get_task_id()

    def getThisComponentId(self) -> str:
        """This task's component id."""
        return self.native.get_component_id()

    def getThisTaskIndex(self) -> int:
        """This task's 0-based index among its component's tasks (ascending task ids)."""
        return self.native.get_component_index()

    def getThisStreams(self) -> set[str]:
        """The streams this component declares."""
        return self.getComponentStreams(self.getThisComponentId())

    def getThisOutputFields(self, streamId: str = DEFAULT_STREAM) -> Fields:
        """The fields this component declares on ``streamId``.

        Raises:
            ValueError: the component does not declare ``streamId``.
        """
        return self.getComponentOutputFields(self.getThisComponentId(), streamId)

    def getThisOutputFieldsForStreams(self) -> dict[str, list[str]]:
        """``{stream: field names}`` of every stream this component declares."""
        me = self.getThisComponentId()
        return {s: self.getComponentOutputFields(me, s).toList() for s in self.getThisStreams()}

    def getThisSources(self) -> dict[GlobalStreamId, Grouping]:
        """The streams this component subscribes to, with their groupings (empty for spouts)."""
        return self.native.get_this_sources() or {}

    def getThisInputFields(self) -> dict[str, dict[str, list[str]]]:
        """``{source component: {stream: field names}}`` of every stream of every component
        this one subscribes to (Storm lists all the source's streams)."""
        found: dict[str, dict[str, list[str]]] = {}
        for source in {str(s.component_id) for s in self.getThisSources()}:
            found[source] = {
                stream: self.getComponentOutputFields(source, stream).toList()
                for stream in self.getComponentStreams(source)
            }
        return found

    def getThisTargets(self) -> dict[str, dict[str, Grouping]]:
        """``{stream: {subscribing component: grouping}}`` of this component's outputs."""
        return self.native.get_this_targets()

    def getThisWorkerTasks(self) -> list[int]:
        """The task ids of this task's container (Storm's worker), ascending, its own
        included."""
        return self.native.get_container_tasks()

    def getThisWorkerPort(self) -> int:
        """Raises NotImplementedError: instances talk to their stream manager over local
        sockets, and a container has no port of its own."""
        raise NotImplementedError(
            f"{self._where()}: getThisWorkerPort: a container has no worker port here "
            "(use getThisWorkerTasks or getThisTaskId to tell tasks apart)"
        )

    def getCodeDir(self) -> str:
        """The directory of the topology's code (every instance runs in it)."""
        return os.getcwd()

    def getPIDDir(self) -> str:
        """Raises NotImplementedError: subprocesses are ended with their instance's process
        group, not through PID files."""
        raise NotImplementedError(
            f"{self._where()}: getPIDDir: there is no PID directory; subprocesses of a task "
            "end with its process"
        )

    def getSharedExecutor(self) -> concurrent.futures.ThreadPoolExecutor:
        """A thread pool shared by the tasks of this process (Storm's worker-wide
        ``ExecutorService``), made on first use and shut down when the task closes (pending
        work cancelled). Work it runs must not call the collectors: they belong to the
        task's thread.
        """
        return shared_executor()

    def getResource(self, name: str) -> Any:
        """Raises NotImplementedError: worker hooks, which set worker resources, are not
        built."""
        raise NotImplementedError(
            f"{self._where()}: getResource({name!r}): worker hooks (IWorkerHook) are not "
            "built, so no worker resource is ever set"
        )

    def setTaskData(self, name: str, data: Any) -> None:
        """Keep ``data`` under ``name`` for this task."""
        self._task_data[name] = data

    def getTaskData(self, name: str) -> Any:
        """What `setTaskData` kept under ``name`` (None if nothing)."""
        return self._task_data.get(name)

    def setExecutorData(self, name: str, data: Any) -> None:
        """Keep ``data`` under ``name`` for this executor (a task runs alone in its
        executor here, so this is the task's data)."""
        self._task_data[name] = data

    def getExecutorData(self, name: str) -> Any:
        """What `setExecutorData` kept under ``name`` (None if nothing)."""
        return self._task_data.get(name)

    def addTaskHook(self, hook: ITaskHook) -> None:
        """Add ``hook`` to this task and call its ``prepare`` (Storm's order).

        Call it in ``open``/``prepare``.

        Raises:
            TypeError: ``hook`` is not a Storm ``ITaskHook``.
            HeronError: ``open``/``prepare`` has returned already.
        """
        if not isinstance(hook, ITaskHook):
            raise TypeError(
                f"{self._where()}: addTaskHook takes a storm_compat.hooks.ITaskHook "
                f"(extend BaseTaskHook), got {type(hook).__qualname__}"
            )
        self.native.add_task_hook(KernelTaskHook(hook, self.native))
        hook.prepare(self.getConf(), self)

    def getHooks(self) -> list[ITaskHook]:
        """The Storm hooks of this task, in the order they were added (auto hooks first)."""
        return [h.hook for h in self.native.get_task_hooks() if isinstance(h, KernelTaskHook)]

    def setSubscribedState(self, componentId: str, *args: Any) -> Any:
        """Raises NotImplementedError, as Storm does (state spouts were never built)."""
        raise NotImplementedError(
            f"{self._where()}: setSubscribedState({componentId!r}): state spouts are not "
            "built (Storm does not implement them either)"
        )

    def setAllSubscribedState(self, obj: Any) -> Any:
        """Raises NotImplementedError, as Storm does (state spouts were never built)."""
        raise NotImplementedError(
            f"{self._where()}: setAllSubscribedState: state spouts are not built (Storm does "
            "not implement them either)"
        )

    # --- the topology ------------------------------------------------------------------------
    def getStormId(self) -> str:
        """The running topology's id."""
        return self.native.get_topology_id()

    def getRawTopology(self) -> Any:
        """Raises NotImplementedError: the running topology is a Heron plan, not Storm's
        Thrift ``StormTopology``."""
        raise NotImplementedError(
            f"{self._where()}: getRawTopology: the running topology is a Heron plan, not a "
            "Thrift StormTopology; use getComponentIds, getSources, getTargets and "
            "getComponentOutputFields"
        )

    def getTaskToComponent(self) -> dict[int, str]:
        """Every task id of the topology and its component."""
        return self.native.get_task_to_component()

    def getComponentId(self, taskId: int) -> str | None:
        """The component of task ``taskId`` (``"__system"`` for -1, the system task that
        sends ticks; None for an unknown task)."""
        if taskId == SYSTEM_TASK_ID:
            return SYSTEM_COMPONENT
        return self.native.get_task_to_component().get(taskId)

    def getComponentIds(self) -> set[str]:
        """Every component of the topology."""
        return set(self.native.get_task_to_component().values())

    def getComponentStreams(self, componentId: str) -> set[str]:
        """The streams ``componentId`` declares.

        Raises:
            ValueError: no component is called ``componentId``.
        """
        self._known(componentId)
        return set(self.native.get_component_streams(componentId))

    def getComponentTasks(self, componentId: str) -> list[int]:
        """The task ids of ``componentId``, ascending (empty for an unknown component)."""
        return self.native.get_component_tasks(componentId)

    def getComponentOutputFields(self, componentId: Any, streamId: str = DEFAULT_STREAM) -> Fields:
        """The fields ``componentId`` declares on ``streamId`` (or of a ``GlobalStreamId``).

        Raises:
            ValueError: ``componentId`` does not declare ``streamId``.
        """
        if isinstance(componentId, GlobalStreamId):
            componentId, streamId = componentId.component_id, componentId.stream_id
        fields = self.native.get_output_fields(componentId, streamId)
        if not fields and streamId not in self.native.get_component_streams(componentId):
            raise ValueError(
                f"{self._where()}: no output fields defined for component:stream "
                f"{componentId}:{streamId}"
            )
        return Fields(fields)

    def getSources(self, componentId: str) -> dict[GlobalStreamId, Grouping]:
        """The streams ``componentId`` subscribes to, with their groupings.

        Raises:
            ValueError: no component is called ``componentId``.
        """
        sources = self.native.get_sources(componentId)
        if sources is None:
            self._known(componentId)
            return {}
        return sources

    def getTargets(self, componentId: str) -> dict[str, dict[str, Grouping]]:
        """``{stream: {subscribing component: grouping}}`` of ``componentId``'s outputs (only
        streams somebody subscribes to)."""
        targets: dict[str, dict[str, Grouping]] = {}
        for other in sorted(self.getComponentIds()):
            for source, grouping in self.getSources(other).items():
                if source.component_id == componentId:
                    targets.setdefault(source.stream_id, {})[other] = grouping
        return targets

    def maxTopologyMessageTimeout(self) -> int:
        """The message timeout (``topology.message.timeout.secs``) in seconds."""
        return int(setting(self.getConf(), "topology.message.timeout.secs"))

    def _known(self, componentId: str) -> None:
        if componentId not in self.getComponentIds():
            raise ValueError(
                f"{self._where()}: no component {componentId!r} in the topology (components: "
                f"{sorted(self.getComponentIds())})"
            )

    def getConf(self) -> dict[str, Any]:
        """The effective config (the dict ``open``/``prepare`` received)."""
        return self.native.get_cluster_config()

    def registerMetric(self, name: str, metric: Any, timeBucketSizeInSecs: int) -> Any:
        """Publish ``metric`` under ``name`` every ``timeBucketSizeInSecs`` seconds; the
        metric, which the task then updates.

        ``metric`` is an ``IMetric`` (any object with ``getValueAndReset()``), or an
        ``IReducer`` or ``ICombiner``, which is wrapped in a ``ReducedMetric`` or
        ``CombinedMetric`` (returned). Its value goes to the topology's metrics manager: None
        is skipped, a dict is published as ``name/key`` per key.

        Raises:
            ValueError: ``name`` is registered already, ``metric`` has no
                ``getValueAndReset``, or the bucket is not positive.

        >>> from storm_compat.metric.api import MeanReducer
        >>> from heron_core.api import TopologyContext as Native
        >>> class Recording(Native):  # a fake native context
        ...     get_task_id = get_component_id = get_cluster_config = None
        ...     get_topology_name = get_sources = get_component_tasks = None
        ...     get_topology_id = get_component_index = get_output_fields = None
        ...     get_this_targets = None
        ...     def register_metric(self, name, metric, bucket):
        ...         print(name, bucket, metric.metric_type)
        >>> context = TopologyContext(Recording())
        >>> latency = context.registerMetric("latency", MeanReducer(), 60)
        latency 60 AVG
        >>> latency.update(3.0); context.getRegisteredMetricByName("latency") is latency
        True
        """
        if isinstance(metric, IReducer):
            metric = ReducedMetric(metric)
        elif isinstance(metric, ICombiner):
            metric = CombinedMetric(metric)
        if not callable(getattr(metric, "getValueAndReset", None)):
            raise ValueError(
                f"task {self.getThisTaskId()} of {self.getThisComponentId()!r}: metric {name!r} "
                f"is a {type(metric).__name__}: expected an IMetric (with getValueAndReset()), "
                "an IReducer or an ICombiner"
            )
        self.native.register_metric(name, _KernelMetric(metric), timeBucketSizeInSecs)
        self._metrics[name] = metric
        return metric

    def getRegisteredMetricByName(self, name: str) -> Any:
        """The metric registered under ``name`` by this context (None if none)."""
        return self._metrics.get(name)


class _KernelMetric:
    """A Storm metric as the kernel reads it (``get_value_and_reset``, ``metric_type``)."""

    __slots__ = ("metric",)

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    @property
    def metric_type(self) -> str:
        return str(getattr(self.metric, "metric_type", "LAST"))

    def get_value_and_reset(self) -> Any:
        return self.metric.getValueAndReset()
