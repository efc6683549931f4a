"""The benchmark's native components (shipped to the instances as topology code): the corpus
spout, optionally reliable, rate-limited and recording complete latencies, the identity bolt of
the overhead case, and the split bolt that stamps its first input (the cluster cases'
submit-to-first-tuple time); and `record_start`, which every front end's spout calls."""

from __future__ import annotations

import os
import time
from array import array
from pathlib import Path
from typing import Any

from word_count import CountBolt, SplitBolt, sentences

from heron_core.api import Bolt, InputBatch, Spout, State, StatefulComponent, Tuple


def record_start(directory: str, task: int) -> None:
    """Write the time (``time.time()``) of the spout task's first emit, which starts the
    clock of a case, to ``<directory>/start-<task>``."""
    record_time(Path(directory) / f"start-{task}")


def record_time(path: Path) -> None:
    """Write ``time.time()`` to ``path``, atomically (through a hidden partial file that no
    reader's pattern matches)."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(repr(time.time()))
    os.replace(partial, path)  # readers never see half a file


LATENCY_FILE_PREFIX = "latency-"
"""A reliable `CorpusSpout` writes ``<directory>/latency-<task>.bin`` when its last tree
completes."""


def read_latencies(directory: Path) -> list[tuple[float, array[float]]]:
    """(time of the last ack, complete latencies in s) of each spout task that wrote its file
    to ``directory`` so far."""
    recorded = []
    for path in directory.glob(f"{LATENCY_FILE_PREFIX}*.bin"):
        values = array("d")
        values.frombytes(path.read_bytes())
        recorded.append((values[0], values[1:]))
    return recorded


class CorpusSpout(Spout):
    """Emits its share of ``sentences(total, seed)`` once: one tuple per sentence, or with
    ``words`` one tuple per word. With ``reliable``, each tuple has its index as message id;
    with ``rate`` (tuples/s for the whole component), emits are paced. Calls `record_start`;
    when every tree of a reliable spout completed, writes the time of the last ack
    (``time.time()``) and the complete latencies (s) to ``<directory>/latency-<task>.bin``, as
    native doubles (`read_latencies`: a write of a few milliseconds, where JSON took 0.18 s of
    the spout's CPU for 200,000 trees, inside the CPU meter's window). With
    ``corpus`` (a file holding at least ``total`` sentences, one a line: ``sentences(total,
    seed)`` written out by the driver), the spout reads its sentences there instead of
    generating them, which takes it 0.6-1 s for 100,000
    sentences: the cluster cases time the start-up, which that would inflate."""

    outputs = ["sentence"]

    def __init__(
        self,
        total: int,
        reliable: bool,
        rate: float | None,
        directory: str,
        words: bool = False,
        corpus: str | None = None,
    ) -> None:
        self.total = total
        self.reliable = reliable
        self.rate = rate
        self.directory = directory
        self.words = words
        self.corpus = corpus

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        tasks = context.get_component_tasks(context.get_component_id())
        index = tasks.index(context.get_task_id())
        if self.corpus:
            everything = Path(self.corpus).read_text().splitlines()[: self.total]
        else:
            everything = sentences(self.total, 42)
        mine = everything[index :: len(tasks)]
        self.mine = [w for s in mine for w in s.split()] if self.words else mine
        self.task = context.get_task_id()
        self.interval = len(tasks) / self.rate if self.rate else 0.0
        self.position = 0
        self.started: dict[int, float] = {}
        self.latencies = array("d")
        self.next_at = 0.0

    def next_tuple(self) -> None:
        if self.position >= len(self.mine):
            return
        now = time.perf_counter()
        if self.interval:
            if now < self.next_at:
                return
            # the first emit starts the schedule (no burst to catch up with time 0); later,
            # up to 50 ms that the loop fell behind are caught up
            start = self.next_at or now
            self.next_at = max(start + self.interval, now - 0.05)
        i = self.position
        self.position += 1
        if not i:
            record_start(self.directory, self.task)
        if self.reliable:
            self.started[i] = now
            self.emit([self.mine[i]], tup_id=i)
        else:
            self.emit([self.mine[i]])

    def ack(self, tup_id: Any) -> None:
        start = self.started.pop(tup_id, None)
        if start is None:
            return
        self.latencies.append(time.perf_counter() - start)
        if len(self.latencies) == len(self.mine):
            path = Path(self.directory) / f"{LATENCY_FILE_PREFIX}{self.task}.bin"
            partial = path.with_suffix(".partial")
            done = time.time()  # the time of the last ack: the run's end, without polling
            with partial.open("wb") as out:
                array("d", [done]).tofile(out)
                self.latencies.tofile(out)
            os.replace(partial, path)  # readers never see half a file


class IdentityBolt(Bolt):
    """Re-emits each input unchanged, anchored to it, then acks it."""

    outputs = ["value"]

    def process(self, tup: Tuple) -> None:
        self.emit(tup.values, anchors=[tup])
        self.ack(tup)


class FirstTupleSplitBolt(SplitBolt):
    """The word count's `SplitBolt` that also writes the time (``time.time()``) of its first
    input to ``<directory>/first-<task>`` (`record_time`): once, then only a flag is tested
    per input."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.first_path: Path | None = Path(self.directory) / f"first-{context.get_task_id()}"

    def process(self, tup: Tuple) -> None:
        if self.first_path is not None:
            record_time(self.first_path)
            self.first_path = None
        super().process(tup)


class StatefulCorpusSpout(CorpusSpout, StatefulComponent):
    """`CorpusSpout` whose position is its checkpointed state (effectively once: a rollback
    rewinds it). In the other modes it is a plain `CorpusSpout`."""

    state: State | None = None

    def init_state(self, state: State) -> None:
        self.state = state

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        super().initialize(config, context)
        if self.state is not None:
            self.position = self.state.get("position", 0)

    def pre_save(self, checkpoint_id: str) -> None:
        assert self.state is not None
        self.state.put("position", self.position)


class StatefulCountBolt(CountBolt, StatefulComponent):
    """The word count's `CountBolt` whose counts are its checkpointed state (each checkpoint
    pickles the whole table)."""

    state: State | None = None

    def init_state(self, state: State) -> None:
        self.state = state

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        super().initialize(config, context)
        if self.state is not None:
            self.counts.update(self.state.get("counts", {}))

    def pre_save(self, checkpoint_id: str) -> None:
        assert self.state is not None
        self.state.put("counts", self.counts)


class BatchSplitBolt(Bolt):
    """The word count's split bolt written on ``Bolt.process_batch``, as a user who wants the
    throughput writes it (Bytewax's ``flat_map_batch`` is the same idea): each sentence's words
    go out in one ``emit_many``; with acking off it works on the inputs' values and counts them
    acked in ``batch.acked`` (no input Tuple is built); with acking on it settles the batch in
    one ``emit_and_ack`` (each sentence's words anchored to it, every input acked, still no
    Tuple), which ran 15-20% slower than this acking-off loop when used with acking off."""

    outputs = ["word"]

    def process_batch(self, batch: InputBatch) -> None:
        emit_many = self.emit_many
        if batch.tracked:
            self.emit_and_ack(
                batch, [[[word] for word in line.split()] for (line,) in batch.values]
            )
            return
        due = batch.due
        for values in batch.values:
            if due[0]:  # the flush interval passed: send what was emitted so far
                batch.serve()
            emit_many([[word] for word in values[0].split()])
        batch.acked += len(batch.values)


class BatchCountBolt(Bolt):
    """The word count's count bolt on ``Bolt.process_batch`` (see `BatchSplitBolt`): a plain
    dict of counts, and ``(word, count)`` emitted for every occurrence, as `CountBolt` does
    (with acking off, in one ``emit_many`` per batch, or per served part of one; with acking
    on, in one ``emit_and_ack``)."""

    outputs = ["word", "count"]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.counts: dict[str, int] = {}

    def process_batch(self, batch: InputBatch) -> None:
        counts = self.counts
        if batch.tracked:
            rows = []
            for (word,) in batch.values:
                n = counts[word] = counts.get(word, 0) + 1
                rows.append([[word, n]])
            self.emit_and_ack(batch, rows)
            return
        due = batch.due
        out: list[list[Any]] = []
        for (word,) in batch.values:
            if due[0]:  # send what was counted so far first
                self.emit_many(out)
                out = []
                batch.serve()
            n = counts[word] = counts.get(word, 0) + 1
            out.append([word, n])
        self.emit_many(out)
        batch.acked += len(batch.values)
