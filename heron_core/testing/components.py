"""Spouts and bolts for tests of topologies run through the real process model.

``FixedSpout`` emits a fixed list of tuples once (each task its share); ``RecordingBolt`` appends
every tuple it receives, as one JSON line, to a file per task in a directory the test reads with
:func:`read_records` / :func:`wait_for_records`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from heron_core.api import Bolt, Spout, Stream, Tuple

__all__ = ["FixedSpout", "RecordingBolt", "read_records", "wait_for_records"]


class FixedSpout(Spout):
    """Emits ``tuples`` once on ``stream``, task ``i`` of ``n`` taking every ``n``-th tuple;
    then ``next_tuple`` emits nothing. Delivery: at most once."""

    def __init__(self, fields: list[str], tuples: list[list[Any]], stream: str = "default") -> None:
        self.outputs = [Stream(fields=fields, name=stream)]
        self.tuples = tuples
        self.stream = stream

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        tasks = context.get_component_tasks(context.get_component_id())
        index = tasks.index(context.get_task_id())
        self.mine = self.tuples[index :: len(tasks)]
        self.position = 0

    def next_tuple(self) -> None:
        if self.position < len(self.mine):
            self.emit(self.mine[self.position], stream=self.stream)
            self.position += 1


class RecordingBolt(Bolt):
    """Writes each received tuple as a JSON line ``{"task", "component", "stream", "source_task",
    "values"}`` to ``<directory>/<component>-<task>.jsonl``; emits nothing."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = str(directory)

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.task = context.get_task_id()
        path = Path(self.directory) / f"{context.get_component_id()}-{self.task}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = path.open("a", buffering=1, encoding="utf-8")

    def process(self, tup: Tuple) -> None:
        record = {
            "task": self.task,
            "component": tup.component,
            "stream": tup.stream,
            "source_task": tup.task,
            "values": list(tup.values),
        }
        self.file.write(json.dumps(record) + "\n")

    def process_tick(self, tup: Tuple) -> None:
        self.file.write(json.dumps({"task": self.task, "tick": time.time()}) + "\n")


def read_records(directory: str | Path) -> list[dict[str, Any]]:
    """Every complete JSON line written by RecordingBolts under ``directory``."""
    records: list[dict[str, Any]] = []
    for path in sorted(Path(directory).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.endswith("}"):
                records.append(json.loads(line))
    return records


def wait_for_records(
    directory: str | Path, count: int, timeout: float = 120.0, key: str = "values"
) -> list[dict[str, Any]]:
    """Wait until at least ``count`` records having ``key`` exist; return them.

    Raises:
        TimeoutError: with how many arrived, when ``timeout`` passes first.
    """
    deadline = time.monotonic() + timeout
    while True:
        records = [r for r in read_records(directory) if key in r]
        if len(records) >= count or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if len(records) < count:
        raise TimeoutError(f"{len(records)} of {count} records arrived in {timeout:.0f}s")
    return records
