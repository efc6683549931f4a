"""Storm's ``TopologyContext``, over the kernel's native context."""

from __future__ import annotations

from typing import Any

from heron_core.api import DEFAULT_STREAM, GlobalStreamId, Grouping
from heron_core.api import TopologyContext as NativeContext
from storm_compat.metric.api import CombinedMetric, ICombiner, IReducer, ReducedMetric
from storm_compat.tuple import Fields

__all__ = ["TopologyContext"]


class TopologyContext:
    """What a running task knows about itself and its topology (given to ``open``/``prepare``).

    Every method is cheap and may be called from the task's thread at any time.

    Attributes:
        native: the kernel's context it reads from.
    """

    def __init__(self, native: NativeContext) -> None:
        self.native = native
        self._metrics: dict[str, Any] = {}

    def getThisTaskId(self) -> int:
        """This task's id, unique in the topology."""
        return self.native.get_task_id()

    def getThisComponentId(self) -> str:
        """This task's component id."""
        return self.native.get_component_id()

    def getThisTaskIndex(self) -> int:
        """This task's 0-based index among its component's tasks."""
        return self.native.get_component_index()

    def getComponentTasks(self, componentId: str) -> list[int]:
        """The task ids of ``componentId``, ascending (empty for an unknown component)."""
        return self.native.get_component_tasks(componentId)

    def getComponentOutputFields(self, componentId: str, streamId: str = DEFAULT_STREAM) -> Fields:
        """The fields ``componentId`` declares on ``streamId`` (empty if it does not)."""
        return Fields(self.native.get_output_fields(componentId, streamId))

    def getThisOutputFields(self, streamId: str = DEFAULT_STREAM) -> Fields:
        """The fields this component declares on ``streamId``."""
        return self.getComponentOutputFields(self.getThisComponentId(), streamId)

    def getThisSources(self) -> dict[GlobalStreamId, Grouping]:
        """The streams this component subscribes to, with their groupings (empty for spouts)."""
        return self.native.get_this_sources() or {}

    def getThisTargets(self) -> dict[str, dict[str, Grouping]]:
        """``{stream: {subscribing component: grouping}}`` of this component's outputs."""
        return self.native.get_this_targets()

    def getStormId(self) -> str:
        """The running topology's id."""
        return self.native.get_topology_id()

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
