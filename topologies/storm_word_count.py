"""Storm's starter WordCountTopology, on the Storm facade.

Random sentences are split into words (shuffle grouping), and the words counted by a bolt
fields-grouped on the word, so each word is counted by exactly one task, which emits
``(word, count)`` for every occurrence.

    python topologies/storm_word_count.py        # 10 s on a LocalCluster
    python topologies/storm_word_count.py NAME   # StormSubmitter: submit as NAME
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from storm_compat import Config, LocalCluster, StormSubmitter, StormTopology
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import TopologyContext
from storm_compat.topology import BasicOutputCollector, OutputFieldsDeclarer, TopologyBuilder
from storm_compat.topology.base import BaseBasicBolt, BaseRichSpout
from storm_compat.tuple import Fields, Tuple, Values

SENTENCES = (
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
)


class RandomSentenceSpout(BaseRichSpout):
    """Emits one of `SENTENCES` at random every 100 ms, unreliably."""

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        self.collector = collector
        self.rand = random.Random()
        self.next_at = 0.0

    def nextTuple(self) -> None:
        now = time.monotonic()
        if now >= self.next_at:
            self.next_at = now + 0.1
            self.collector.emit(Values(self.rand.choice(SENTENCES)))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sentence"))


class SplitSentence(BaseBasicBolt):
    """Emits every word of the sentence (anchored to it, which is acked after)."""

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        for word in input.getString(0).split():
            collector.emit(Values(word))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))


class WordCount(BaseBasicBolt):
    """Counts words and emits ``(word, count)`` for each one received."""

    def prepare(self, topoConf: dict[str, Any], context: TopologyContext) -> None:
        self.counts: dict[str, int] = {}

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        word = input.getString(0)
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        collector.emit(Values(word, count))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "count"))


def build_topology(spouts: int = 5, splits: int = 8, counts: int = 12) -> StormTopology:
    """spout -> split -> count, with the given parallelism hints (the starter's by default)."""
    builder = TopologyBuilder()
    builder.setSpout("spout", RandomSentenceSpout(), spouts)
    builder.setBolt("split", SplitSentence(), splits).shuffleGrouping("spout")
    builder.setBolt("count", WordCount(), counts).fieldsGrouping("split", Fields("word"))
    return builder.createTopology()


topology = build_topology()


def main(args: list[str]) -> None:
    conf = Config()
    conf.setDebug(True)
    if args:
        conf.setNumWorkers(3)
        StormSubmitter.submitTopology(args[0], conf, topology)
        return
    conf.setMaxTaskParallelism(3)
    with LocalCluster() as cluster:
        cluster.submitTopology("word-count", conf, topology)
        time.sleep(10)
        cluster.killTopology("word-count")


if __name__ == "__main__":
    main(sys.argv[1:])
