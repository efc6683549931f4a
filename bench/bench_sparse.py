"""The word count of bench/word_count.py as streamparse (pystorm) components, shipped to the
instances as topology code."""

from __future__ import annotations

from collections import Counter
from typing import Any

from streamparse import Bolt, Grouping, Spout, Topology
from word_count import sentences


class SentenceSpout(Spout):
    """Emits ``bench.sentences`` sentences of the seeded corpus once (unreliable)."""

    outputs = ["sentence"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.corpus = sentences(int(storm_conf["bench.sentences"]), 42)
        self.position = 0

    def next_tuple(self) -> None:
        if self.position < len(self.corpus):
            self.emit([self.corpus[self.position]])
            self.position += 1


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
