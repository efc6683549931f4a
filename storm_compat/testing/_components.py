"""Test spouts and bolts (Storm's ``org.apache.storm.testing``)."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from heron_core.api import DEFAULT_STREAM
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import TopologyContext
from storm_compat.topology import BasicOutputCollector, OutputFieldsDeclarer
from storm_compat.topology.base import BaseBasicBolt, BaseRichSpout
from storm_compat.tuple import Fields, Tuple, Values

__all__ = ["FixedTuple", "FixedTupleSpout", "TestWordCounter", "TestWordSpout"]


@dataclass(frozen=True)
class FixedTuple:
    """A tuple's values and the stream it is (or was) emitted on.

    >>> FixedTuple(["storm"])
    FixedTuple(values=['storm'], stream='default')
    """

    values: list[Any]
    stream: str = field(default=DEFAULT_STREAM)


class FixedTupleSpout(BaseRichSpout):
    """Emits a fixed list of tuples once, each with a fresh message id; task ``i`` of ``n``
    takes every ``n``-th tuple. ``Testing.completeTopology`` waits until every tuple is acked
    or failed (it is not replayed). While running, ``pending`` maps the message ids not yet
    acked or failed to their tuples.

    Args:
        tuples: value lists (emitted on ``"default"``) or ``FixedTuple`` objects.
        fields: the fields of the default stream; None declares nothing (a mocked spout keeps
            the declarations of the spout it replaces).

    >>> spout = FixedTupleSpout([["a"], FixedTuple(["b"], "other")], Fields("word"))
    >>> [t.stream for t in spout.getSourceTuples()]
    ['default', 'other']
    """

    def __init__(
        self, tuples: Iterable[Sequence[Any] | FixedTuple], fields: Fields | None = None
    ) -> None:
        self._tuples = [t if isinstance(t, FixedTuple) else FixedTuple(list(t)) for t in tuples]
        self._fields = fields
        self._report_dir: str | None = None  # set by Testing.completeTopology

    def getSourceTuples(self) -> list[FixedTuple]:
        """The tuples of every task."""
        return list(self._tuples)

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        tasks = context.getComponentTasks(context.getThisComponentId())
        self._collector = collector
        self._serve = self._tuples[tasks.index(context.getThisTaskId()) :: len(tasks)]
        self._next = 0
        self.pending: dict[str, FixedTuple] = {}
        """The tuples emitted and not yet acked or failed, by message id."""
        self._report: IO[str] | None = None
        if self._report_dir is not None:
            name = f"done-{context.getThisComponentId()}-{context.getThisTaskId()}"
            self._report = (Path(self._report_dir) / name).open("a", buffering=1)

    def close(self) -> None:
        if self._report is not None:
            self._report.close()

    def nextTuple(self) -> None:
        if self._next < len(self._serve):
            fixed = self._serve[self._next]
            self._next += 1
            message_id = uuid.uuid4().hex
            self.pending[message_id] = fixed
            self._collector.emit(fixed.stream, fixed.values, message_id)

    def ack(self, msgId: Any) -> None:
        self.pending.pop(msgId, None)
        if self._report is not None:
            self._report.write("ack\n")

    def fail(self, msgId: Any) -> None:
        self.pending.pop(msgId, None)
        if self._report is not None:
            self._report.write("fail\n")

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        if self._fields is not None:
            declarer.declare(self._fields)


class TestWordSpout(BaseRichSpout):
    """Emits a random word from a fixed list every 100 ms, unreliably, on field ``word``.

    Args:
        isDistributed: False caps the spout to one task (``topology.max.task.parallelism``).
    """

    __test__ = False  # not a pytest test class
    WORDS = ("nathan", "mike", "jackson", "golda", "bertels")

    def __init__(self, isDistributed: bool = True) -> None:
        self._is_distributed = isDistributed

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        self._collector = collector
        self._rand = random.Random()
        self._next_at = 0.0

    def nextTuple(self) -> None:
        now = time.monotonic()
        if now >= self._next_at:
            self._next_at = now + 0.1
            self._collector.emit(Values(self._rand.choice(self.WORDS)))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        return None if self._is_distributed else {"topology.max.task.parallelism": 1}


class TestWordCounter(BaseBasicBolt):
    """Counts the words of field 0 and emits ``(word, count)`` for each one received."""

    __test__ = False  # not a pytest test class

    def prepare(self, topoConf: dict[str, Any], context: TopologyContext) -> None:
        self._counts: dict[str, int] = {}

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        word = input.getValue(0)
        count = self._counts.get(word, 0) + 1
        self._counts[word] = count
        collector.emit(Values(word, count))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "count"))
