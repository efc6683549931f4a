"""The benchmark's spout: a share of the seeded corpus, optionally reliable and rate-limited,
recording the complete latency of every tree (shipped to instances as topology code)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from word_count import sentences

from heron_core.api import Spout


class CorpusSpout(Spout):
    """Emits its share of ``sentences(total, seed)`` once. With ``reliable``, each sentence has
    its index as message id; with ``rate`` (sentences/s for the whole component), emits are
    paced. When every tree of a reliable spout completed, writes the complete latencies (s) to
    ``<directory>/latency-<task>.json``."""

    outputs = ["sentence"]

    def __init__(self, total: int, reliable: bool, rate: float | None, directory: str) -> None:
        self.total = total
        self.reliable = reliable
        self.rate = rate
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        tasks = context.get_component_tasks(context.get_component_id())
        index = tasks.index(context.get_task_id())
        self.mine = sentences(self.total, 42)[index :: len(tasks)]
        self.task = context.get_task_id()
        self.interval = len(tasks) / self.rate if self.rate else 0.0
        self.position = 0
        self.started: dict[int, float] = {}
        self.latencies: list[float] = []
        self.next_at = 0.0

    def next_tuple(self) -> None:
        if self.position >= len(self.mine):
            return
        now = time.perf_counter()
        if self.interval:
            if now < self.next_at:
                return
            self.next_at = max(self.next_at + self.interval, now - 0.05)
        i = self.position
        self.position += 1
        if self.reliable:
            self.started[i] = now
            self.emit([self.mine[i]], tup_id=i)
        else:
            self.emit([self.mine[i]])

    def ack(self, tup_id: Any) -> None:
        start = self.started.pop(tup_id, None)
        if start is None:
            return
        self.latencies.append(time.perf_counter() - start)
        if len(self.latencies) == len(self.mine):
            path = Path(self.directory) / f"latency-{self.task}.json"
            partial = path.with_suffix(".partial")
            partial.write_text(json.dumps(self.latencies))
            os.replace(partial, path)  # readers never see half a file
