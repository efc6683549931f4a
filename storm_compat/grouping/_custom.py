"""``CustomStreamGrouping`` (Storm's ``org.apache.storm.grouping``)."""

from __future__ import annotations

import abc
from typing import Any

from heron_core.api import GlobalStreamId
from storm_compat.task import TopologyContext

__all__ = ["CustomStreamGrouping"]


class CustomStreamGrouping(abc.ABC):
    """A grouping the emitting task evaluates: it picks the receiving tasks of each tuple.

    It is pickled into the topology; every emitting task unpickles its own copy, calls
    ``prepare`` once, then ``chooseTasks`` per tuple on the task's thread (it must not block).
    """

    @abc.abstractmethod
    def prepare(
        self, context: TopologyContext, stream: GlobalStreamId, targetTasks: list[int]
    ) -> None:
        """Called once before any ``chooseTasks``.

        Args:
            context: the emitting task's context.
            stream: the grouped stream (the emitting component and the stream id).
            targetTasks: the subscribing component's task ids, ascending.
        """

    @abc.abstractmethod
    def chooseTasks(self, taskId: int, values: list[Any]) -> list[int]:
        """The ids (from ``targetTasks``) of the tasks receiving a tuple with ``values``.

        Args:
            taskId: the emitting task's id.
            values: the emitted values.
        """
