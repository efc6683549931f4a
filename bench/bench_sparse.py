"""The benchmark's word count as streamparse (pystorm) components, shipped to the instances as
topology code; they run in-process or as multilang subprocesses."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench_components import record_start
from streamparse import Bolt, Grouping, Spout, Topology
from word_count import sentences

from heron_core.plan import LogicalPlan
from storm_compat.streamparse import topology_class_plan


class SentenceSpout(Spout):
    """Emits ``bench.sentences`` sentences of the seeded corpus once; with ``bench.reliable``,
    each with its index as tuple id. Calls `record_start` with ``bench.directory``."""

    outputs = ["sentence"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.corpus = sentences(int(storm_conf["bench.sentences"]), 42)
        self.reliable = bool(storm_conf["bench.reliable"])
        self.directory = str(storm_conf["bench.directory"])
        self.task = int(context["taskid"])
        self.position = 0

    def next_tuple(self) -> None:
        i = self.position
        if i < len(self.corpus):
            self.position += 1
            if not i:
                record_start(self.directory, self.task)
            self.emit([self.corpus[i]], tup_id=i if self.reliable else None)


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup: Any) -> None:
        for word in tup.values[0].split():
            self.emit([word])


class CountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.counts: Counter[str] = Counter()

    def process(self, tup: Any) -> None:
        word = tup.values[0]
        self.counts[word] += 1
        self.emit([word, self.counts[word]])


class SparseWordCount(Topology):
    sentence = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(par=1, inputs={sentence: Grouping.SHUFFLE})
    count = CountBolt.spec(par=1, inputs={split: Grouping.fields("word")})


def sparse_plan(total: int, acking: bool, multilang: bool, directory: str) -> LogicalPlan:
    """The plan of `SparseWordCount` for ``total`` sentences, its components in-process or as
    multilang subprocesses (acking is set by the run's config)."""
    config = {"bench.sentences": total, "bench.reliable": acking, "bench.directory": directory}
    return topology_class_plan(SparseWordCount, "sparse-bench", config, multilang=multilang)
