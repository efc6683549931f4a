"""A spout and a bolt that record what happens to them, for LocalCluster tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO, Any

from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import OutputFieldsDeclarer
from storm_compat.topology.base import BaseRichBolt, BaseRichSpout
from storm_compat.tuple import Fields, Tuple, Values
from storm_compat.utils import TupleUtils


class EventSpout(BaseRichSpout):
    """Emits a number every 50 ms; appends "emit", "activate" and "deactivate" lines to
    ``<directory>/spout.log``."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        self.collector = collector
        self.events: IO[str] = (Path(self.directory) / "spout.log").open("a", buffering=1)
        self.n = 0
        self.next_at = 0.0

    def nextTuple(self) -> None:
        now = time.monotonic()
        if now >= self.next_at:
            self.next_at = now + 0.05
            self.n += 1
            self.collector.emit(Values(self.n))
            self.events.write("emit\n")

    def activate(self) -> None:
        self.events.write("activate\n")

    def deactivate(self) -> None:
        self.events.write("deactivate\n")

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("n"))


class TickCountingBolt(BaseRichBolt):
    """Acks its inputs; appends a "tick" line to ``<directory>/bolt.log`` on every tick
    (every 0.2 s)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.events: IO[str] = (Path(self.directory) / "bolt.log").open("a", buffering=1)

    def execute(self, input: Tuple) -> None:
        if TupleUtils.isTick(input):
            self.events.write("tick\n")
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        return {"topology.tick.tuple.freq.secs": 0.2}


class ErrorReportingBolt(BaseRichBolt):
    """Acks its inputs; reports ``ValueError("bad input <n>")`` for the first one, through
    Storm's ``OutputCollector.reportError``."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.reported = False

    def execute(self, input: Tuple) -> None:
        if not self.reported:
            self.reported = True
            self.collector.reportError(ValueError(f"bad input {input.getValue(0)}"))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""
