"""Spouts, bolts and groupings of the Storm conformance suite.

Instance processes import this module from the topology's code directory (a copy of
``compat_tests/``), so it imports nothing but the facade.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from heron_core.api import GlobalStreamId
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing import FixedTupleSpout
from storm_compat.topology import (
    BasicOutputCollector,
    FailedException,
    OutputFieldsDeclarer,
    ReportedFailedException,
)
from storm_compat.topology.base import BaseBasicBolt, BaseRichBolt
from storm_compat.tuple import Fields, Tuple, Values
from storm_compat.utils import TupleUtils


class TrackedSpout(FixedTupleSpout):
    """A FixedTupleSpout that appends ``{"event", "values"}`` JSON lines (open, emit, ack,
    fail) to ``<directory>/<component>-<task>.jsonl``; ``open`` records its context."""

    def __init__(self, tuples: list[list[Any]], fields: Fields, directory: str) -> None:
        super().__init__(tuples, fields)
        self.directory = directory

    def _record(self, event: str, values: Any) -> None:
        self._events.write(json.dumps({"event": event, "values": values}) + "\n")

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        super().open(conf, context, collector)
        name = f"{context.getThisComponentId()}-{context.getThisTaskId()}.jsonl"
        self._events: IO[str] = (Path(self.directory) / name).open("a", buffering=1)
        self._record("open", describe(context))

    def nextTuple(self) -> None:
        before = set(self.pending)
        super().nextTuple()
        for message_id in set(self.pending) - before:
            self._record("emit", self.pending[message_id].values)

    def ack(self, msgId: Any) -> None:
        self._settled("ack", msgId)
        super().ack(msgId)

    def fail(self, msgId: Any) -> None:
        self._settled("fail", msgId)
        super().fail(msgId)

    def _settled(self, event: str, message_id: Any) -> None:
        fixed = self.pending.get(message_id)  # ids no longer known are tolerated
        self._record(event, None if fixed is None else fixed.values)


def describe(context: TopologyContext) -> dict[str, Any]:
    """What a task's context says about itself and its topology."""
    me = context.getThisComponentId()
    return {
        "task": context.getThisTaskId(),
        "component": me,
        "index": context.getThisTaskIndex(),
        "tasks": context.getComponentTasks(me),
        "storm_id": context.getStormId(),
        "sources": sorted(
            [s.component_id, s.stream_id, g.kind.name] for s, g in context.getThisSources().items()
        ),
        "targets": {
            stream: sorted(consumers) for stream, consumers in context.getThisTargets().items()
        },
        "fields": context.getThisOutputFields().toList(),
    }


class Tagger(BaseRichBolt):
    """Emits ``(task, tasks, *input values)``: which task of its component got each input."""

    def __init__(self, fields: list[str]) -> None:
        self.fields = fields

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.task = context.getThisTaskId()
        self.tasks = context.getComponentTasks(context.getThisComponentId())

    def execute(self, input: Tuple) -> None:
        self.collector.emit(input, Values(self.task, self.tasks, *input.getValues()))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("task", "tasks", *self.fields))


class ModuloGrouping(CustomStreamGrouping):
    """Sends a tuple to target task number ``values[1] % len(targets)``."""

    def prepare(
        self, context: TopologyContext, stream: GlobalStreamId, targetTasks: list[int]
    ) -> None:
        self.targets = targetTasks

    def chooseTasks(self, taskId: int, values: list[Any]) -> list[int]:
        return [self.targets[values[1] % len(self.targets)]]


class Director(BaseRichBolt):
    """Emits each ``(word, n)`` directly, on stream "direct", to task number ``n % len`` of
    component ``target``."""

    def __init__(self, target: str) -> None:
        self.target = target

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.targets = context.getComponentTasks(self.target)

    def execute(self, input: Tuple) -> None:
        n = input.getIntegerByField("n")
        self.collector.emitDirect(
            self.targets[n % len(self.targets)], "direct", input, input.getValues()
        )
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declareStream("direct", True, Fields("word", "n"))


class Router(BaseRichBolt):
    """Routes ``(word, n)`` to stream "even" or "odd"; emits on "ids" ``(n, task ids the
    even/odd emit returned)``."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        n = input.getInteger(1)
        stream = "even" if n % 2 == 0 else "odd"
        ids = self.collector.emit(stream, input, Values(input.getString(0), n))
        self.collector.emit("ids", [input], Values(n, sorted(ids)))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declareStream("even", Fields("word", "n"))
        declarer.declareStream("odd", Fields("word", "n"))
        declarer.declareStream("ids", Fields("n", "task_ids"))


class Splitter(BaseRichBolt):
    """Emits ``w-1`` and ``w-2`` anchored to input ``w``, and ``w`` unanchored on "loose"."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        word = input.getString(0)
        for suffix in ("-1", "-2"):
            self.collector.emit(input, Values(word + suffix))
        self.collector.emit("loose", Values(word))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))
        declarer.declareStream("loose", Fields("word"))


class Pairer(BaseRichBolt):
    """Joins inputs starting with "pair" two by two: emits one tuple anchored to both."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.waiting: list[Tuple] = []

    def execute(self, input: Tuple) -> None:
        if not input.getString(0).startswith("pair"):
            self.collector.ack(input)
            return
        self.waiting.append(input)
        if len(self.waiting) == 2:
            words = sorted(t.getString(0) for t in self.waiting)
            self.collector.emit(self.waiting, Values("+".join(words)))
            for tup in self.waiting:
                self.collector.ack(tup)
            self.waiting = []

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))


class Judge(BaseRichBolt):
    """Fails words containing "bad"; acks the others twice (the second ack is ignored)."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        if "bad" in input.getString(0):
            self.collector.fail(input)
        else:
            self.collector.ack(input)
            self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""


class NeverAcks(BaseRichBolt):
    """Receives and forgets: never acks nor fails."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Keeps nothing."""

    def execute(self, input: Tuple) -> None:
        """Drops ``input``."""

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""


class Exclaimer(BaseBasicBolt):
    """Emits ``w!``; raises FailedException for "fail", ReportedFailedException for
    "report"."""

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        word = input.getString(0)
        if word == "fail":
            raise FailedException("failing " + word)
        if word == "report":
            raise ReportedFailedException(ValueError("reporting " + word))
        collector.emit(Values(word + "!"))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))


class Holder(BaseRichBolt):
    """On ticks (every second): words "hold" are never acked; "slow" ones get their timeout
    reset and are acked on the fifth tick after they arrived; others are acked at once."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.slow: list[list[Any]] = []

    def execute(self, input: Tuple) -> None:
        if TupleUtils.isTick(input):
            for held in self.slow:
                held[1] += 1
                self.collector.resetTimeout(held[0])
                if held[1] == 5:
                    self.collector.emit(held[0], Values(held[0].getString(0)))
                    self.collector.ack(held[0])
            self.slow = [held for held in self.slow if held[1] < 5]
            return
        word = input.getString(0)
        if word.startswith("slow"):
            self.slow.append([input, 0])
        elif not word.startswith("hold"):
            self.collector.emit(input, Values(word))
            self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        return {"topology.tick.tuple.freq.secs": 1}


class Ticker(BaseRichBolt):
    """Holds its inputs until it has seen ``ticks`` tick tuples, then emits
    ``(word, ticks seen, what the first tick looked like)`` anchored to each and acks them."""

    def __init__(self, ticks: int) -> None:
        self.ticks = ticks

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.seen = 0
        self.first_tick: dict[str, Any] = {}
        self.held: list[Tuple] = []

    def execute(self, input: Tuple) -> None:
        if TupleUtils.isTick(input):
            self.seen += 1
            self.first_tick = self.first_tick or {
                "component": input.getSourceComponent(),
                "stream": input.getSourceStreamId(),
                "task": input.getSourceTask(),
                "fields": input.getFields().toList(),
                "rate_secs": input.getValueByField("rate_secs"),
            }
            self.collector.ack(input)
        else:
            self.held.append(input)
        if self.seen >= self.ticks:
            for tup in self.held:
                self.collector.emit(tup, Values(tup.getString(0), self.seen, self.first_tick))
                self.collector.ack(tup)
            self.held = []

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "ticks", "tick"))


class Introspector(BaseRichBolt):
    """Emits ``(word, what its context says, config key "compat.setting", debug flag,
    parent pid)`` for each input."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.context = describe(context)
        self.conf = {
            "setting": topoConf.get("compat.setting"),
            "debug": topoConf.get("topology.debug"),
            "parent": os.getppid(),
        }

    def execute(self, input: Tuple) -> None:
        self.collector.emit(input, Values(input.getString(0), self.context, self.conf))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "context", "conf"))


class UndeclaredStreamBolt(BaseRichBolt):
    """Emits on stream "nope", which it does not declare."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        self.collector.emit("nope", input, Values("x"))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))


class WrongArityBolt(UndeclaredStreamBolt):
    """Emits two values on its one-field default stream."""

    def execute(self, input: Tuple) -> None:
        self.collector.emit(input, Values("x", "y"))


class OpenFailsSpout(FixedTupleSpout):
    """Raises in ``open``."""

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        raise ConnectionError("cannot reach the queue")
