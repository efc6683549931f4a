"""``Context``: what a Generator or TransformOperator knows at run time (heronpy's module path)."""

from __future__ import annotations

import abc
from typing import Any

__all__ = ["Context"]


class Context(abc.ABC):
    """Given to ``Generator.setup`` and ``TransformOperator.setup``: the task, its config, its
    partition, and ``emit`` onto the stage's output."""

    @abc.abstractmethod
    def get_task_id(self) -> int:
        """This task's id."""

    @abc.abstractmethod
    def get_config(self) -> dict[str, Any]:
        """The effective config of this stage (topology config overlaid by the stage's)."""

    @abc.abstractmethod
    def get_stream_name(self) -> str:
        """The stream this stage reads (a source: the stream it writes)."""

    @abc.abstractmethod
    def get_num_partitions(self) -> int:
        """The number of partitions (tasks) of this stage."""

    @abc.abstractmethod
    def get_partition_index(self) -> int:
        """This task's partition, 0 to ``get_num_partitions() - 1``."""

    @abc.abstractmethod
    def get_state(self) -> Any:
        """The task's state (a ``HashMapState``) when the topology runs ``EFFECTIVELY_ONCE``:
        what the generator or operator puts in it is checkpointed and given back after a
        rollback (with a new ``setup``); None in the other modes."""

    @abc.abstractmethod
    def emit(self, values: Any) -> None:
        """Emit ``values`` as one element of this stage's output."""
