"""Components of the multilang end-to-end topologies (copied into each topology's code
directory with the scripts, so instance processes import them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from heron_core.api import Bolt, Tuple
from storm_compat.multilang import ShellBolt, ShellSpout
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import OutputFieldsDeclarer
from storm_compat.topology.base import BaseRichBolt
from storm_compat.tuple import Fields
from storm_compat.tuple import Tuple as StormTuple


def _record_file(directory: str, component: str, task: int) -> Any:
    path = Path(directory) / f"{component}-{task}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("a", buffering=1, encoding="utf-8")


class AckingRecorder(Bolt):
    """Writes ``{"task", "component", "stream", "values"}`` per tuple to
    ``<directory>/<component>-<task>.jsonl`` and acks it."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.task = context.get_task_id()
        self.file = _record_file(self.directory, context.get_component_id(), self.task)

    def process(self, tup: Tuple) -> None:
        record = {"task": self.task, "component": tup.component, "stream": tup.stream}
        self.file.write(json.dumps({**record, "values": list(tup.values)}) + "\n")
        self.ack(tup)


class SentenceShellSpout(ShellSpout):
    """Storm-facade ShellSpout over the storm.py-style ``sentence_spout.py``."""

    def __init__(self) -> None:
        super().__init__(sys.executable, "sentence_spout.py")

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sentence"))


class SplitSentence(ShellBolt):
    """Storm-facade ShellBolt over the storm-starter style ``splitsentence.py``."""

    def __init__(self) -> None:
        super().__init__(sys.executable, "splitsentence.py")

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))


class StormRecorder(BaseRichBolt):
    """A Storm rich bolt that records what it receives (as AckingRecorder) and acks it."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.task = context.getThisTaskId()
        self.file = _record_file(self.directory, context.getThisComponentId(), self.task)

    def execute(self, input: StormTuple) -> None:
        record = {"task": self.task, "component": input.getSourceComponent()}
        self.file.write(json.dumps({**record, "values": input.getValues()}) + "\n")
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        pass
