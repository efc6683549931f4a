"""Fakes for driving the multilang hosts in-process: a topology context and collectors."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heron_core.api import GlobalStreamId, Grouping, TopologyContext
from heron_core.errors import UserCodeError

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def script(name: str, *args: str) -> list[str]:
    """The argv running ``scripts/<name>`` with this interpreter (which has pystorm)."""
    return [sys.executable, str(SCRIPTS / name), *args]


class FakeContext(TopologyContext):
    """Task 3 of bolt "probe", fed by "words" (tasks 1, 2) and feeding "sink" (tasks 5, 6)."""

    def __init__(self, component: str = "probe", sources: bool = True) -> None:
        self.component = component
        self.sources = sources
        self.metrics: dict[str, Any] = {}
        self.buckets: dict[str, Any] = {}
        self.errors: list[BaseException | str] = []

    def get_task_id(self) -> int:
        return 3

    def get_component_id(self) -> str:
        return self.component

    def get_cluster_config(self) -> dict[str, Any]:
        return {}

    def get_topology_name(self) -> str:
        return "probe-topology"

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        if component_id != self.component or not self.sources:
            return None
        return {GlobalStreamId("words", "default"): Grouping.fields("word")}

    def get_component_tasks(self, component_id: str) -> list[int]:
        return {"words": [1, 2], self.component: [3], "sink": [5, 6]}.get(component_id, [])

    def get_topology_id(self) -> str:
        return "probe-topology-1"

    def get_component_index(self) -> int:
        return 0

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        fields = {("words", "default"): ("word",), (self.component, "default"): ("a", "b")}
        return fields.get((component_id, stream), ())

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        return {"default": {"sink": Grouping.GLOBAL}, "direct": {}}

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        self.metrics[name] = metric
        self.buckets[name] = time_bucket_in_sec

    def report_error(self, error: BaseException | str) -> None:
        super().report_error(error)
        self.errors.append(error)


class BoltRecorder:
    """A bolt collector over any tuple objects: records emits, acks and fails."""

    def __init__(self) -> None:
        self.emits: list[tuple[Sequence[Any], str, list[Any], int | None, bool]] = []
        self.acked: list[Any] = []
        self.failed: list[Any] = []

    def emit(
        self,
        tup: Sequence[Any],
        stream: str,
        anchors: Any,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        self.emits.append((tup, stream, list(anchors or ()), direct_task, need_task_ids))
        return [5, 6] if need_task_ids else None

    def ack(self, tup: Any) -> None:
        self.acked.append(tup)

    def fail(self, tup: Any) -> None:
        self.failed.append(tup)


class SpoutRecorder:
    """A spout collector: records emits as (values, msg id, stream, direct task, need ids)."""

    def __init__(self) -> None:
        self.emits: list[tuple[Sequence[Any], Any, str, int | None, bool]] = []

    def emit(
        self,
        tup: Sequence[Any],
        tup_id: Any,
        stream: str,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        self.emits.append((tup, tup_id, stream, direct_task, need_task_ids))
        return [5] if need_task_ids else None


class IdleFailures:
    """An idle-failure handler that keeps the errors."""

    def __init__(self) -> None:
        self.errors: list[UserCodeError] = []

    def __call__(self, error: UserCodeError) -> None:
        self.errors.append(error)
