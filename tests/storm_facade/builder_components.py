"""Spouts and bolts for the builder's unit tests (importable by class path)."""

from __future__ import annotations

from typing import Any

from heron_core.api import GlobalStreamId
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import BasicOutputCollector, OutputFieldsDeclarer
from storm_compat.topology.base import BaseBasicBolt, BaseRichBolt, BaseRichSpout
from storm_compat.tuple import Fields, Tuple


class Sentences(BaseRichSpout):
    """Declares "default" (sentence), "lengths" (sentence, length) and direct "pings" (n)."""

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        self.collector = collector

    def nextTuple(self) -> None:
        self.collector.emit(["a b"])

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sentence"))
        declarer.declareStream("lengths", Fields("sentence", "length"))
        declarer.declareStream("pings", True, Fields("n"))


class Split(BaseBasicBolt):
    """Declares "default" (word); asks for ticks every 2 s in its component config."""

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        for word in input.getString(0).split():
            collector.emit([word])

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(["word"])

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        return {"topology.tick.tuple.freq.secs": 2}


class Sink(BaseRichBolt):
    """Acks everything; declares nothing."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""


class FirstTask(CustomStreamGrouping):
    """Sends every tuple to the first target task."""

    def prepare(
        self, context: TopologyContext, stream: GlobalStreamId, targetTasks: list[int]
    ) -> None:
        self.targets = targetTasks

    def chooseTasks(self, taskId: int, values: list[Any]) -> list[int]:
        return self.targets[:1]


class Unpicklable(BaseRichBolt):
    """Holds a lambda, which cannot be pickled."""

    def __init__(self) -> None:
        self.fn = lambda: None

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Nothing to prepare."""

    def execute(self, input: Tuple) -> None:
        """Drops the input."""

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""
