"""Components of the effectively-once tests: a spout that replays from the offset in its
checkpointed state, a stateless relay and a bolt whose counts are its checkpointed state."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from heron_core.api import Bolt, Spout, State, StatefulComponent, Tuple

WORDS = ("apple", "banana", "cherry", "damson", "elder", "fig", "grape")


def word(task_index: int, offset: int) -> str:
    """The word spout task ``task_index`` emits at ``offset``."""
    return WORDS[(offset * (task_index + 1) + task_index) % len(WORDS)]


def expected_counts(offsets: dict[int, int]) -> Counter[str]:
    """The counts of every word the spout tasks (task index -> offset) emitted."""
    counts: Counter[str] = Counter()
    for index, offset in offsets.items():
        for i in range(offset):
            counts[word(index, i)] += 1
    return counts


class OffsetSpout(Spout, StatefulComponent):
    """Emits ``limit`` words; task index i emits ``paces[i][0]`` per call, then sleeps
    ``paces[i][1]`` s (tasks that answer a checkpoint at different times make the stream
    managers align markers). Its state is its offset: it rewinds to it after a rollback."""

    outputs = ("word",)

    def __init__(self, limit: int, paces: tuple[tuple[int, float], ...]) -> None:
        self.limit = limit
        self.paces = paces

    def init_state(self, state: State) -> None:
        self.state = state

    def initialize(self, config: Any, context: Any) -> None:
        self.index = context.get_task_id() - min(context.get_component_tasks("words"))
        self.burst, self.pause = self.paces[self.index % len(self.paces)]
        self.offset = self.state.get("offset", 0)

    def pre_save(self, checkpoint_id: str) -> None:
        self.state.put("offset", self.offset)
        self.state.put("index", self.index)

    def next_tuple(self) -> None:
        if self.offset >= self.limit:
            time.sleep(0.01)
            return
        for _ in range(min(self.burst, self.limit - self.offset)):
            self.emit([word(self.index, self.offset)])
            self.offset += 1
        time.sleep(self.pause)


class Relay(Bolt):
    """Stateless: passes each word on."""

    outputs = ("word",)

    def process(self, tup: Tuple) -> None:
        self.emit([tup.values[0]])


class CountBolt(Bolt, StatefulComponent):
    """Counts words into its state."""

    outputs = ()

    def init_state(self, state: State) -> None:
        self.counts = state

    def process(self, tup: Tuple) -> None:
        key = tup.values[0]
        self.counts[key] = self.counts.get(key, 0) + 1
