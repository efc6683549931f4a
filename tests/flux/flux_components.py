"""Python classes the Flux test files name (copied into the topology's code directory)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from heron_core.api import Bolt, GlobalStreamId, Tuple
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import OutputFieldsDeclarer
from storm_compat.topology.base import BaseRichBolt
from storm_compat.tuple import Fields
from storm_compat.tuple import Tuple as StormTuple


class Fan(BaseRichBolt):
    """A Storm rich bolt: re-emits each word, anchored, on every stream set with
    ``withStreams``, and directly (stream ``direct``) to task ``[(len(word) + 1) % 2]`` of
    the component named by the ``target`` property; acks the input."""

    def __init__(self) -> None:
        self.streams: list[str] = []
        self.target = ""

    def withStreams(self, streams: list[str]) -> None:
        self.streams = list(streams)

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.targets = context.getComponentTasks(self.target)

    def execute(self, input: StormTuple) -> None:
        word = input.getString(0)
        for stream in self.streams:
            self.collector.emit(stream, input, [word])
        task = self.targets[(len(word) + 1) % len(self.targets)]
        self.collector.emitDirect(task, "direct", input, [word])
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        for stream in self.streams:
            declarer.declareStream(stream, Fields("word"))
        declarer.declareStream("direct", True, Fields("word"))


class ParityGrouping(CustomStreamGrouping):
    """Sends a word to target task ``[len(word) % 2]``."""

    def prepare(
        self, context: TopologyContext, stream: GlobalStreamId, targetTasks: list[int]
    ) -> None:
        self.targets = sorted(targetTasks)

    def chooseTasks(self, taskId: int, values: list[Any]) -> list[int]:
        return [self.targets[len(values[0]) % len(self.targets)]]


class FluxRecorder(Bolt):
    """A native bolt: writes ``{"task", "stream", "values"}`` per tuple to
    ``<directory>/<component>-<task>.jsonl`` and acks it."""

    def __init__(self, directory: Path) -> None:
        self.directory = str(directory)

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.task = context.get_task_id()
        path = Path(self.directory) / f"{context.get_component_id()}-{self.task}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = path.open("a", buffering=1, encoding="utf-8")

    def process(self, tup: Tuple) -> None:
        record = {"task": self.task, "stream": tup.stream, "values": list(tup.values)}
        self.file.write(json.dumps(record) + "\n")
        self.ack(tup)
