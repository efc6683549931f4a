"""Storm's starter RollingTopWords, on the Storm facade.

Words are counted over a sliding window by tick-driven ``RollingCountBolt``s (fields grouped
on the word), ranked per counter partition by ``IntermediateRankingsBolt``s, and the partial
rankings merged by one ``TotalRankingsBolt`` (global grouping), which emits the top N words
on every tick.

Unlike storm-starter (whose bolts ack their inputs at once and emit unanchored on ticks),
each bolt here anchors what it emits on a tick to the inputs received since the previous
tick and acks those inputs then: a word's tuple tree completes only once its count has
reached the total ranking, so rankings are processed at least once and
``Testing.completeTopology`` can wait for them.

    python topologies/rolling_top_words.py        # 60 s on a LocalCluster
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from storm_compat import Config, LocalCluster, StormTopology
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing import TestWordSpout
from storm_compat.topology import OutputFieldsDeclarer, TopologyBuilder
from storm_compat.topology.base import BaseRichBolt
from storm_compat.tuple import Fields, Tuple, Values
from storm_compat.utils import TupleUtils

# --- tools (storm-starter's org.apache.storm.starter.tools) ------------------------------------


class SlotBasedCounter:
    """Counts per object in ``numSlots`` slots."""

    def __init__(self, numSlots: int) -> None:
        if numSlots <= 0:
            raise ValueError(f"number of slots must be greater than zero, got {numSlots}")
        self.num_slots = numSlots
        self.counts: dict[Any, list[int]] = {}

    def incrementCount(self, obj: Any, slot: int) -> None:
        self.counts.setdefault(obj, [0] * self.num_slots)[slot] += 1

    def getCounts(self) -> dict[Any, int]:
        """Each object's total over all slots."""
        return {obj: sum(slots) for obj, slots in self.counts.items()}

    def wipeSlot(self, slot: int) -> None:
        for slots in self.counts.values():
            slots[slot] = 0

    def wipeZeros(self) -> None:
        """Forget objects whose every slot is zero."""
        self.counts = {obj: slots for obj, slots in self.counts.items() if any(slots)}


class SlidingWindowCounter:
    """Counts over the last ``windowLengthInSlots`` slots; each ``getCountsThenAdvanceWindow``
    moves the window by one slot."""

    def __init__(self, windowLengthInSlots: int) -> None:
        if windowLengthInSlots < 2:
            raise ValueError(
                f"window length in slots must be at least two, got {windowLengthInSlots}"
            )
        self.window_length = windowLengthInSlots
        self.counter = SlotBasedCounter(windowLengthInSlots)
        self.head = 0
        self.tail = 1

    def incrementCount(self, obj: Any) -> None:
        self.counter.incrementCount(obj, self.head)

    def getCountsThenAdvanceWindow(self) -> dict[Any, int]:
        counts = self.counter.getCounts()
        self.counter.wipeZeros()
        self.counter.wipeSlot(self.tail)
        self.head, self.tail = self.tail, (self.tail + 1) % self.window_length
        return counts


class NthLastModifiedTimeTracker:
    """Remembers the times of the last ``numTimesToTrack`` modifications."""

    def __init__(self, numTimesToTrack: int) -> None:
        self.times: deque[float] = deque([time.monotonic()], maxlen=numTimesToTrack)

    def markAsModified(self) -> None:
        self.times.append(time.monotonic())

    def secondsSinceOldestModification(self) -> int:
        return int(time.monotonic() - self.times[0])


@dataclass(frozen=True)
class RankableObjectWithFields:
    """An object, its count, and any other fields of the tuple it came from."""

    obj: Any
    count: int
    fields: tuple[Any, ...] = ()

    @classmethod
    def from_tuple(cls, input: Tuple) -> RankableObjectWithFields:
        values = input.getValues()
        return cls(values[0], int(values[1]), tuple(values[2:]))


class Rankings:
    """The ``maxSize`` highest counts, highest first (ties by object, for a stable order)."""

    def __init__(self, maxSize: int = 10, items: Iterable[RankableObjectWithFields] = ()) -> None:
        if maxSize < 1:
            raise ValueError(f"topN must be >= 1, got {maxSize}")
        self.max_size = maxSize
        self.items: list[RankableObjectWithFields] = list(items)

    def updateWith(self, other: Rankings | RankableObjectWithFields) -> None:
        updates = other.items if isinstance(other, Rankings) else [other]
        for rankable in updates:
            self.items = [r for r in self.items if r.obj != rankable.obj] + [rankable]
        self.items.sort(key=lambda r: (-r.count, str(r.obj)))
        del self.items[self.max_size :]

    def pruneZeroCounts(self) -> None:
        self.items = [r for r in self.items if r.count != 0]

    def getRankings(self) -> list[RankableObjectWithFields]:
        return list(self.items)

    def copy(self) -> Rankings:
        return Rankings(self.max_size, self.items)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rankings):
            return NotImplemented
        return (self.max_size, self.items) == (other.max_size, other.items)

    def __repr__(self) -> str:
        return f"Rankings({[(r.obj, r.count) for r in self.items]})"


# --- bolts --------------------------------------------------------------------------------------


class RollingCountBolt(BaseRichBolt):
    """Counts objects (field 0) over a sliding window of ``windowLengthInSeconds``; every
    ``emitFrequencyInSeconds`` (a tick) emits ``(obj, count, actualWindowLengthInSeconds)``
    for every object in the window, each anchored to that object's inputs since the last
    tick, which it then acks."""

    def __init__(self, windowLengthInSeconds: int = 300, emitFrequencyInSeconds: int = 60) -> None:
        self.window_length = windowLengthInSeconds
        self.emit_frequency = emitFrequencyInSeconds

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        slots = self.window_length // self.emit_frequency
        self.collector = collector
        self.counter = SlidingWindowCounter(slots)
        self.tracker = NthLastModifiedTimeTracker(slots)
        self.pending: dict[Any, list[Tuple]] = {}

    def execute(self, input: Tuple) -> None:
        if TupleUtils.isTick(input):
            self.emitCurrentWindowCounts()
            return
        obj = input.getValue(0)
        self.counter.incrementCount(obj)
        self.pending.setdefault(obj, []).append(input)

    def emitCurrentWindowCounts(self) -> None:
        counts = self.counter.getCountsThenAdvanceWindow()
        actual_window = self.tracker.secondsSinceOldestModification()
        self.tracker.markAsModified()
        for obj, count in counts.items():
            anchors = self.pending.pop(obj, [])
            self.collector.emit(anchors, Values(obj, count, actual_window))
            for tup in anchors:
                self.collector.ack(tup)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("obj", "count", "actualWindowLengthInSeconds"))

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        return {Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS: self.emit_frequency}


class AbstractRankerBolt(BaseRichBolt):
    """Keeps the top ``topN`` rankings; on every tick (``emitFrequencyInSeconds``) emits a
    copy, anchored to the inputs since the last tick, which it then acks."""

    def __init__(self, topN: int = 10, emitFrequencyInSeconds: int = 2) -> None:
        self.top_n = topN
        self.emit_frequency = emitFrequencyInSeconds

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.rankings = Rankings(self.top_n)
        self.pending: list[Tuple] = []

    def execute(self, input: Tuple) -> None:
        if TupleUtils.isTick(input):
            self.collector.emit(self.pending, Values(self.rankings.copy()))
            for tup in self.pending:
                self.collector.ack(tup)
            self.pending = []
            return
        self.updateRankingsWithTuple(input)
        self.pending.append(input)

    def updateRankingsWithTuple(self, tuple: Tuple) -> None:
        raise NotImplementedError

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("rankings"))

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """Ticks, and the classes of the rankings it emits: tuple values of other than builtin
        types must be registered (as with Storm 2's Kryo); a component's registrations hold
        for the whole topology."""
        conf = Config({Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS: self.emit_frequency})
        conf.registerSerialization(Rankings)
        conf.registerSerialization(RankableObjectWithFields)
        return conf


class IntermediateRankingsBolt(AbstractRankerBolt):
    """Ranks the ``(obj, count, ...)`` tuples of its partition."""

    def updateRankingsWithTuple(self, tuple: Tuple) -> None:
        self.rankings.updateWith(RankableObjectWithFields.from_tuple(tuple))


class TotalRankingsBolt(AbstractRankerBolt):
    """Merges the partial rankings of the intermediate rankers."""

    def updateRankingsWithTuple(self, tuple: Tuple) -> None:
        self.rankings.updateWith(tuple.getValue(0))
        self.rankings.pruneZeroCounts()


def build_topology(
    top_n: int = 5,
    window_secs: int = 9,
    emit_secs: int = 3,
    rank_emit_secs: int = 2,
    generators: int = 5,
    counters: int = 4,
    rankers: int = 4,
) -> StormTopology:
    """wordGenerator -> counter -> intermediateRanker -> finalRanker (the starter's layout and
    defaults)."""
    builder = TopologyBuilder()
    builder.setSpout("wordGenerator", TestWordSpout(), generators)
    builder.setBolt("counter", RollingCountBolt(window_secs, emit_secs), counters).fieldsGrouping(
        "wordGenerator", Fields("word")
    )
    builder.setBolt(
        "intermediateRanker", IntermediateRankingsBolt(top_n, rank_emit_secs), rankers
    ).fieldsGrouping("counter", Fields("obj"))
    builder.setBolt("finalRanker", TotalRankingsBolt(top_n, rank_emit_secs)).globalGrouping(
        "intermediateRanker"
    )
    return builder.createTopology()


topology = build_topology()


def main(args: list[str]) -> None:
    seconds = float(args[0]) if args else 60.0
    conf = Config()
    conf.setDebug(True)
    with LocalCluster() as cluster:
        cluster.submitTopology("slidingWindowCounts", conf, topology)
        time.sleep(seconds)
        cluster.killTopology("slidingWindowCounts")


if __name__ == "__main__":
    main(sys.argv[1:])
