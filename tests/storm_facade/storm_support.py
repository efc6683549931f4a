"""Fakes of the kernel's side (context, collectors) for unit tests of the Storm facade."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heron_core.api import Bolt, GlobalStreamId, Grouping, InputBatch, TopologyContext
from heron_core.api import Tuple as NativeTuple
from heron_core.api.hooks import TaskHook


def delivered(
    bolt: Bolt, id: Any, component: str, stream: str, task: int, values: list[Any]
) -> Any:
    """An input for ``bolt`` as the runtime builds it (by its ``InputBatch``): an instance of
    ``bolt.tuple_type`` with only the kernel tuple's slots set (no ``__init__`` of the type's),
    with ``id``."""
    tup = InputBatch(component, stream, task, [values], kind=bolt.tuple_type).tuple(0)
    tup.id = id
    return tup


class FakeContext(TopologyContext):
    """Task ``task`` (index ``index``) of ``component`` in topology "t" (id "t-1")."""

    def __init__(
        self,
        component: str = "bolt",
        task: int = 3,
        index: int = 0,
        tasks: Mapping[str, list[int]] | None = None,
        fields: Mapping[tuple[str, str], Sequence[str]] | None = None,
        sources: dict[GlobalStreamId, Grouping] | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.component = component
        self.task = task
        self.index = index
        self.tasks = dict(tasks or {component: [task]})
        self.fields = dict(fields or {})
        self.sources = sources
        self.config = config or {}
        self.hooks: list[TaskHook] = []

    def get_task_id(self) -> int:
        return self.task

    def get_component_id(self) -> str:
        return self.component

    def get_cluster_config(self) -> dict[str, Any]:
        return self.config

    def get_topology_name(self) -> str:
        return "t"

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        return self.sources if component_id == self.component else None

    def get_component_tasks(self, component_id: str) -> list[int]:
        return list(self.tasks.get(component_id, []))

    def get_topology_id(self) -> str:
        return "t-1"

    def get_component_index(self) -> int:
        return self.index

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        return tuple(self.fields.get((component_id, stream), ()))

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        return {"default": {"sink": Grouping.SHUFFLE}}

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        raise NotImplementedError

    def get_task_to_component(self) -> dict[int, str]:
        return {task: name for name, tasks in self.tasks.items() for task in tasks}

    def get_component_streams(self, component_id: str) -> list[str]:
        return sorted(stream for name, stream in self.fields if name == component_id)

    def get_container_tasks(self) -> list[int]:
        return [self.task]

    def add_task_hook(self, task_hook: TaskHook) -> None:
        self.hooks.append(task_hook)

    def get_task_hooks(self) -> list[TaskHook]:
        return list(self.hooks)


class FakeBoltCollector:
    """Records the native calls: ``("emit", values, stream, anchor values, direct, need)``,
    ``("ack", values)``, ``("fail", values)``, ``("reset", values)``."""

    def __init__(self, task_ids: list[int] | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.task_ids = task_ids if task_ids is not None else [5]

    def emit(
        self,
        tup: Sequence[Any],
        stream: str,
        anchors: Iterable[NativeTuple] | None,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        anchored = None if anchors is None else [a.values for a in anchors]
        self.calls.append(("emit", list(tup), stream, anchored, direct_task, need_task_ids))
        return self.task_ids if need_task_ids else None

    def ack(self, tup: NativeTuple) -> None:
        self.calls.append(("ack", tup.values))

    def fail(self, tup: NativeTuple) -> None:
        self.calls.append(("fail", tup.values))


class ResettingBoltCollector(FakeBoltCollector):
    """A collector of a kernel with at-least-once acking (it can reset timeouts)."""

    def reset_timeout(self, tup: NativeTuple) -> None:
        self.calls.append(("reset", tup.values))


class FakeSpoutCollector:
    """Records ``(values, tup_id, stream, direct_task, need_task_ids)`` of every emit."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def emit(
        self,
        tup: Sequence[Any],
        tup_id: Any,
        stream: str,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        self.calls.append((list(tup), tup_id, stream, direct_task, need_task_ids))
        return [2, 4] if need_task_ids else None


class FlushingSpoutCollector(FakeSpoutCollector):
    """A spout collector that can flush (recorded as ``("flush",)``) and count pending
    trees (``pending``)."""

    pending = 3

    def flush(self) -> None:
        self.calls.append(("flush",))

    def pending_count(self) -> int:
        return self.pending
