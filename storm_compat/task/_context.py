"""Storm's ``TopologyContext``, over the kernel's native context."""

from __future__ import annotations

from typing import Any

from heron_core.api import DEFAULT_STREAM, GlobalStreamId, Grouping
from heron_core.api import TopologyContext as NativeContext
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
