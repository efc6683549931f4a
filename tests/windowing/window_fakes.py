"""A clock and a listener for unit tests of `heron_core.windowing`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from heron_core.api import Bolt, GlobalStreamId, Grouping, InputBatch, TopologyContext
from heron_core.api import Tuple as NativeTuple
from heron_core.windowing import Window, Windower, WindowSpec


class Clock:
    """Milliseconds that move only when a test sets ``now``."""

    def __init__(self, now: int = 0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


class Recorder:
    """Records every window and every expiry, in order."""

    def __init__(self) -> None:
        self.windows: list[Window[Any]] = []
        self.expired: list[Any] = []

    def on_activation(self, window: Window[Any]) -> None:
        self.windows.append(window)

    def on_expiry(self, items: list[Any]) -> None:
        self.expired.extend(items)

    def contents(self) -> list[list[Any]]:
        return [w.items for w in self.windows]


def windower(
    clock: Clock | None = None, streams: tuple[str, ...] = ("s",), **spec: Any
) -> tuple[Windower[Any], Recorder, Clock]:
    """A `Windower` of ``WindowSpec(**spec)`` with a fresh recorder and clock (at 0)."""
    clock = clock or Clock()
    recorder = Recorder()
    return Windower(WindowSpec(**spec), recorder, streams, clock), recorder, clock


# --- the kernel's side of a Storm windowed bolt (for tests of the facade) -------------------


class FakeContext(TopologyContext):
    """Task 3 of component ``"win"`` in topology ``"t"``, fed by ``sources`` whose streams
    have ``fields``."""

    def __init__(self, fields: dict[tuple[str, str], list[str]]) -> None:
        self.fields = fields

    def get_task_id(self) -> int:
        return 3

    def get_component_id(self) -> str:
        return "win"

    def get_cluster_config(self) -> dict[str, Any]:
        return {}

    def get_topology_name(self) -> str:
        return "t"

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        return {GlobalStreamId(c, s): Grouping.SHUFFLE for c, s in self.fields}

    def get_component_tasks(self, component_id: str) -> list[int]:
        return [3]

    def get_topology_id(self) -> str:
        return "t-1"

    def get_component_index(self) -> int:
        return 0

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        return tuple(self.fields.get((component_id, stream), ()))

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        return {}

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        raise NotImplementedError


class FakeCollector:
    """Records ``("emit", values, stream, anchor values)``, ``("ack", values)`` and
    ``("fail", values)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def emit(
        self,
        tup: Sequence[Any],
        stream: str,
        anchors: Iterable[NativeTuple] | None,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        anchored = None if anchors is None else [a.values for a in anchors]
        self.calls.append(("emit", list(tup), stream, anchored))
        return [5] if need_task_ids else None

    def ack(self, tup: NativeTuple) -> None:
        self.calls.append(("ack", tup.values))

    def fail(self, tup: NativeTuple) -> None:
        self.calls.append(("fail", tup.values))

    def take(self) -> list[tuple[Any, ...]]:
        """The calls since the last ``take``."""
        calls, self.calls = self.calls, []
        return calls


def delivered(bolt: Bolt, component: str, stream: str, values: list[Any]) -> Any:
    """An input as the runtime builds it (by its ``InputBatch``: only the kernel tuple's slots
    set)."""
    return InputBatch(component, stream, 1, [values], kind=bolt.tuple_type).tuple(0)


TICK = NativeTuple("__tick", "__system", "__tick", -1, [0.25])
