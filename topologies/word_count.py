"""Word count on the native API: sentence spout -> split bolt -> count bolt.

The split bolt's output is fields-grouped on the word, so each word is counted by exactly one
count task. Run it with ``heron run topologies/word_count.py --time 30``.

Config (topology or command line, ``--config-property key=value``):
    wordcount.sentences: how many sentences the spout emits before it goes quiet (default:
        no limit).
    wordcount.seed: seed of the sentence generator (default 42).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from heron_core.api import Bolt, Grouping, Spout, Topology, Tuple

VOCABULARY_SIZE = 10_000
WORDS_PER_SENTENCE = 10


def vocabulary(size: int = VOCABULARY_SIZE) -> list[str]:
    """``size`` distinct pronounceable words, the same on every call."""
    rng = random.Random(7)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fi"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def sentences(count: int, seed: int = 42) -> list[str]:
    """``count`` sentences of ten words drawn from :func:`vocabulary` with ``seed``."""
    words = vocabulary()
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, k=WORDS_PER_SENTENCE)) for _ in range(count)]


class SentenceSpout(Spout):
    """Emits sentences; each task emits its share (by component index) of a seeded corpus."""

    outputs = ["sentence"]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        limit = config.get("wordcount.sentences")
        seed = int(config.get("wordcount.seed", 42))
        tasks = context.get_component_tasks(context.get_component_id())
        index = tasks.index(context.get_task_id())
        corpus = sentences(int(limit) if limit else 100_000, seed)
        self.mine = corpus[index :: len(tasks)]
        self.repeat = limit is None
        self.position = 0

    def next_tuple(self) -> None:
        if self.position >= len(self.mine):
            if not self.repeat:
                return
            self.position = 0
        self.emit([self.mine[self.position]])
        self.position += 1


class SplitBolt(Bolt):
    """Splits each sentence into words (anchored to the sentence, which it then acks)."""

    outputs = ["word"]

    def process(self, tup: Tuple) -> None:
        emit = self.emit
        anchors = [tup]
        for word in tup.values[0].split():
            emit([word], anchors=anchors)
        self.ack(tup)


class CountBolt(Bolt):
    """Counts words and emits ``(word, count)`` for every occurrence; logs the top words on
    each tick."""

    outputs = ["word", "count"]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.counts: Counter[str] = Counter()

    def process(self, tup: Tuple) -> None:
        word = tup.values[0]
        counts = self.counts
        counts[word] += 1
        self.emit([word, counts[word]], anchors=[tup])
        self.ack(tup)

    def process_tick(self, tup: Tuple) -> None:
        top = ", ".join(f"{w}={n}" for w, n in self.counts.most_common(5))
        self.log(f"{len(self.counts)} distinct words; top: {top}")


class WordCount(Topology):
    config = {"topology.tick.tuple.freq.secs": 5.0}
    sentence = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(par=2, inputs={sentence: Grouping.SHUFFLE})
    count = CountBolt.spec(par=2, inputs={split: Grouping.fields("word")})
