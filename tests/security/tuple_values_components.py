"""Components of tests/security/test_tuple_values.py, shipped as the topologies' code: a user
class emitted as a value, a spout that emits fixed rows once, a spout that keeps emitting
numbers, a bolt that records what it receives (``repr`` and class of each value), and a Storm
bolt that passes its input on."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heron_core.api import Bolt, Spout, Stream, Tuple
from storm_compat.topology import BasicOutputCollector, OutputFieldsDeclarer
from storm_compat.topology.base import BaseBasicBolt
from storm_compat.tuple import Fields, Values
from storm_compat.tuple import Tuple as StormTuple


@dataclass(frozen=True)
class Point:
    """A user class: tuple values may hold it only when it is registered."""

    x: int
    y: int


class RowsSpout(Spout):
    """Emits ``rows`` (each one value) once, one per ``next_tuple``."""

    outputs = [Stream(["value"])]

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.left = list(self.rows)

    def next_tuple(self) -> None:
        if self.left:
            self.emit([self.left.pop(0)])


class NumberSpout(Spout):
    """Emits 0, 1, 2, ... one every 5 ms, for as long as it runs."""

    outputs = [Stream(["value"])]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.n = 0
        self.next_at = 0.0

    def next_tuple(self) -> None:
        now = time.monotonic()
        if now >= self.next_at:
            self.next_at = now + 0.005
            self.emit([self.n])
            self.n += 1


class ReprSink(Bolt):
    """Writes, per tuple, a JSON line ``{"repr": repr(value), "class": module.qualname}`` to
    ``<directory>/<task>.jsonl``."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        path = Path(self.directory) / f"{context.get_task_id()}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = path.open("a", buffering=1, encoding="utf-8")

    def process(self, tup: Tuple) -> None:
        value = tup.values[0]
        kind = type(value)
        record = {"repr": repr(value), "class": f"{kind.__module__}.{kind.__qualname__}"}
        self.file.write(json.dumps(record) + "\n")


class Relay(BaseBasicBolt):
    """A Storm bolt that emits its input's first value again, as field ``value``."""

    def execute(self, input: StormTuple, collector: BasicOutputCollector) -> None:
        collector.emit(Values(input.getValue(0)))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("value"))


def records(directory: Path) -> list[dict[str, str]]:
    """Every complete line the sinks wrote under ``directory``."""
    found = []
    for path in sorted(directory.glob("*.jsonl")):
        found += [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]
    return found
