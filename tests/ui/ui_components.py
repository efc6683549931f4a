"""Spouts and bolts of the UI tests (shipped as the topology's code to the instance processes)."""

from __future__ import annotations

import time
from typing import Any

from heron_core.api import Bolt, Grouping, Spout, Topology, Tuple
from heron_core.api.metrics import CountMetric

FAIL_EVERY = 400
"""A `FlakyBolt` process raises at its FAIL_EVERY-th tuple (then is restarted)."""


class WordSpout(Spout):
    """Emits words forever, sleeping a little between them (as user spouts do)."""

    outputs = ["word"]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.words = ["apple", "banana", "cherry", "damson", "elder"]
        self.n = 0

    def next_tuple(self) -> None:
        time.sleep(0.005)
        self.emit([self.words[self.n % len(self.words)]])
        self.n += 1


class FlakyBolt(Bolt):
    """Passes words on, counts them in the user metric ``flaky-words``, and raises ValueError
    at the FAIL_EVERY-th tuple of each process life."""

    outputs = ["word"]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.seen = 0
        self.words = CountMetric()
        context.register_metric("flaky-words", self.words, 1)
        self.log("flaky bolt ready to process words")

    def process(self, tup: Tuple) -> None:
        self.seen += 1
        self.words.incr()
        if self.seen == FAIL_EVERY:
            raise ValueError(f"flaky bolt gives up at tuple {self.seen}")
        self.emit([tup.values[0]])


class TallyBolt(Bolt):
    """Counts words; emits nothing."""

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.counts: dict[str, int] = {}

    def process(self, tup: Tuple) -> None:
        word = tup.values[0]
        self.counts[word] = self.counts.get(word, 0) + 1


class QuietWords(Topology):
    """Words into a tally, in one container: what the UI tests submit with ``heron submit``
    (``ui_components.py:QuietWords``) to restart and kill it from the UI."""

    config = {"topology.stmgrs": 1}
    words = WordSpout.spec(par=1)
    tally = TallyBolt.spec(par=1, inputs={words: Grouping.fields("word")})
