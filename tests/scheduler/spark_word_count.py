"""A bounded, reliable word count for the Spark scheduler's tests (submitted as a topology file,
so the Spark executors get this file through the container package).

The spout emits sentence ``i`` of a seeded corpus with message id ``i`` (replaying what fails)
and logs every ack; the split bolt emits ``(sentence, position, word)`` anchored to the
sentence; the count bolt logs every word it counts. Config (``--config-property``):
``sparktest.out`` (the directory of the logs), ``sparktest.sentences`` (corpus size),
``sparktest.pause`` (seconds the spout sleeps per sentence).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

from heron_core.api import Bolt, Grouping, Spout, Topology, Tuple

WORDS = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "kiwi", "lime"]


def corpus(count: int, seed: int = 7) -> list[str]:
    """``count`` sentences of five words from `WORDS`, the same on every call."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=5)) for _ in range(count)]


def expected_counts(count: int) -> Counter[str]:
    """How often each word occurs in ``corpus(count)``."""
    return Counter(word for sentence in corpus(count) for word in sentence.split())


def read_log(directory: Path, prefix: str) -> list[dict[str, Any]]:
    """Every complete JSON line of the ``<prefix>-*.jsonl`` files under ``directory``."""
    records: list[dict[str, Any]] = []
    for path in sorted(directory.glob(f"{prefix}-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.endswith("}"):
                records.append(json.loads(line))
    return records


class _Log:
    def open_log(self, config: dict[str, Any], prefix: str, task: int) -> None:
        directory = Path(str(config["sparktest.out"]))
        directory.mkdir(parents=True, exist_ok=True)
        self._log = (directory / f"{prefix}-{task}.jsonl").open("a", buffering=1)

    def write(self, **record: Any) -> None:
        self._log.write(json.dumps(record) + "\n")


class SentenceSpout(Spout, _Log):
    outputs = ["sid", "sentence"]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.sentences = corpus(int(config.get("sparktest.sentences", 200)))
        self.pause = float(config.get("sparktest.pause", 0.0))
        tasks = context.get_component_tasks(context.get_component_id())
        self.next = tasks.index(context.get_task_id())
        self.step = len(tasks)
        self.replay: deque[int] = deque()
        self.open_log(config, "spout", context.get_task_id())
        self.write(started=time.time())

    def next_tuple(self) -> None:
        if self.replay:
            sid = self.replay.popleft()
        elif self.next < len(self.sentences):
            sid = self.next
            self.next += self.step
        else:
            return
        if self.pause:
            time.sleep(self.pause)
        self.emit([sid, self.sentences[sid]], tup_id=sid)

    def ack(self, tup_id: Any) -> None:
        self.write(ack=tup_id)

    def fail(self, tup_id: Any) -> None:
        self.replay.append(tup_id)
        self.write(fail=tup_id)

    def activate(self) -> None:
        self.write(event="activate")

    def deactivate(self) -> None:
        self.write(event="deactivate")


class SplitBolt(Bolt):
    outputs = ["sid", "position", "word"]

    def process(self, tup: Tuple) -> None:
        sid, sentence = tup.values
        for position, word in enumerate(sentence.split()):
            self.emit([sid, position, word], anchors=[tup])
        self.ack(tup)


class CountBolt(Bolt, _Log):
    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.open_log(config, "count", context.get_task_id())

    def process(self, tup: Tuple) -> None:
        sid, position, word = tup.values
        self.write(sid=sid, position=position, word=word, at=time.time())
        self.ack(tup)


class SparkWordCount(Topology):
    config = {"topology.reliability.mode": "ATLEAST_ONCE", "topology.max.spout.pending": 50}
    sentences = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(par=2, inputs={sentences: Grouping.SHUFFLE})
    count = CountBolt.spec(par=2, inputs={split: Grouping.fields("word")})
