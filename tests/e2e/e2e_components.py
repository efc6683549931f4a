"""Spouts and bolts for the end-to-end tests (imported by the instance processes, which get this
directory as the topology's code)."""

from __future__ import annotations

import gc
import json
import random
import time
from collections import deque
from pathlib import Path
from typing import Any

from heron_core.api import Bolt, InputBatch, Spout, Stream, Tuple


class _Log:
    """Append-only JSON lines in ``<directory>/<name>-<task>.jsonl``, flushed per line."""

    def open_log(self, directory: str, name: str, task: int) -> None:
        path = Path(directory) / f"{name}-{task}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = path.open("a", buffering=1, encoding="utf-8")

    def write(self, **record: Any) -> None:
        self._log_file.write(json.dumps(record) + "\n")


def read_log(directory: Path, name: str) -> list[dict[str, Any]]:
    """Every record the components named ``name`` wrote under ``directory``."""
    out: list[dict[str, Any]] = []
    for path in sorted(directory.glob(f"{name}-*.jsonl")):
        out.extend(json.loads(line) for line in path.read_text().splitlines() if line.endswith("}"))
    return out


class NumberSpout(Spout, _Log):
    """Emits the numbers 0..count-1 (task i of n: every n-th) with the number as message id and
    replays what fails. Logs every ack and fail, and the largest number of its own pending
    message ids it ever saw when next_tuple was called."""

    outputs = ["n"]

    def __init__(self, count: int, directory: str) -> None:
        self.count = count
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        tasks = context.get_component_tasks(context.get_component_id())
        self.next = tasks.index(context.get_task_id())
        self.step = len(tasks)
        self.pending: set[int] = set()
        self.replay: deque[int] = deque()
        self.max_pending = 0
        self.open_log(self.directory, "spout", context.get_task_id())

    def next_tuple(self) -> None:
        self.max_pending = max(self.max_pending, len(self.pending))
        if self.replay:
            n = self.replay.popleft()
        elif self.next < self.count:
            n = self.next
            self.next += self.step
        else:
            return
        self.pending.add(n)
        self.emit([n], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        self.pending.discard(tup_id)
        self.write(ack=tup_id, max_pending=self.max_pending)

    def fail(self, tup_id: Any) -> None:
        self.pending.discard(tup_id)
        self.replay.append(tup_id)
        self.write(fail=tup_id, max_pending=self.max_pending)


class FlakyBolt(Bolt):
    """Fails about ``rate`` of its tuples at random; emits the others anchored, then acks."""

    outputs = ["n"]

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.rng = random.Random(context.get_task_id())

    def process(self, tup: Tuple) -> None:
        if self.rng.random() < self.rate:
            self.fail(tup)
            return
        self.emit(tup.values, anchors=[tup])
        self.ack(tup)


class SleepyBolt(Bolt):
    """The first time it sees a number in ``slow``, sleeps ``seconds`` before acking it."""

    outputs = ["n"]

    def __init__(self, slow: list[int], seconds: float) -> None:
        self.slow = set(slow)
        self.seconds = seconds

    def process(self, tup: Tuple) -> None:
        n = tup.values[0]
        if n in self.slow:
            self.slow.discard(n)
            time.sleep(self.seconds)
        self.emit([n], anchors=[tup])
        self.ack(tup)


class GatedBolt(Bolt):
    """Passes numbers below ``gate`` on at once (anchored, then acked); a number at or above it
    waits in ``process`` until the file ``release`` exists, so a test can act while the stream
    is held mid-way, whatever the machine's speed."""

    outputs = ["n"]

    def __init__(self, gate: int, release: str) -> None:
        self.gate = gate
        self.release = Path(release)

    def process(self, tup: Tuple) -> None:
        n = tup.values[0]
        while n >= self.gate and not self.release.exists():
            time.sleep(0.01)
        self.emit([n], anchors=[tup])
        self.ack(tup)


class AckingSink(Bolt, _Log):
    """Logs every number it receives, then acks it."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.open_log(self.directory, "sink", context.get_task_id())

    def process(self, tup: Tuple) -> None:
        self.write(n=tup.values[0])
        self.ack(tup)


class BatchBolt(Bolt, _Log):
    """Takes whole batches: emits each number and acks it, but acks those ending in 1 at the
    next batch or tick, through their Tuples. With acking off it fails the multiples of 10,
    counts the acks it does at once in the batch instead of building those Tuples, and emits
    the batch's numbers in one ``emit_many``; with acking on it anchors each emit (an
    ``emit_many`` of one row) to its input. Logs each call; with ``count_anyway`` it counts in
    the batch even with acking on (an error)."""

    outputs = ["n"]

    def __init__(self, directory: str, count_anyway: bool = False) -> None:
        self.directory = directory
        self.count_anyway = count_anyway

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.open_log(self.directory, "batch", context.get_task_id())
        self.held: list[Tuple] = []

    def process_batch(self, batch: InputBatch) -> None:
        self.write(call="batch", size=len(batch), source=batch.component, tracked=batch.tracked)
        self.process_tick(None)
        if batch.tracked and not self.count_anyway:
            for tup in batch.tuples():
                self.emit_many([tup.values], anchors=[tup])
                if tup.values[0] % 10 == 1:
                    self.held.append(tup)
                else:
                    self.ack(tup)
            return
        out = []
        for index, (n,) in enumerate(batch.values):
            if n % 10 == 0:
                self.fail(batch.tuple(index))
                continue
            out.append([n])
            if n % 10 == 1:
                self.held.append(batch.tuple(index))
            else:
                batch.acked += 1
        self.emit_many(out)

    def process_tick(self, tup: Any) -> None:
        for held in self.held:
            self.ack(held)
        self.held.clear()

    def process(self, tup: Tuple) -> None:
        self.write(call="process")


class EmitAndAckBolt(Bolt, _Log):
    """Takes whole batches and settles each with one ``emit_and_ack``: each number n goes out
    as [n] and [n + count] (two children anchored to it), except multiples of 7, which have
    none. Logs each call."""

    outputs = ["n"]

    def __init__(self, directory: str, count: int) -> None:
        self.directory = directory
        self.count = count

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.open_log(self.directory, "batch", context.get_task_id())

    def process_batch(self, batch: InputBatch) -> None:
        self.write(call="batch", size=len(batch), source=batch.component, tracked=batch.tracked)
        outputs = [[] if n % 7 == 0 else [[n], [n + self.count]] for (n,) in batch.values]
        self.emit_and_ack(batch, outputs)

    def process(self, tup: Tuple) -> None:
        self.write(call="process")


class FastSpout(Spout):
    """Emits ``count`` numbers, each with ``payload`` bytes of text, as fast as it is allowed
    to (no message ids)."""

    outputs = ["n", "payload"]

    def __init__(self, count: int, payload: int = 0) -> None:
        self.count = count
        self.payload = payload

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.n = 0

    def next_tuple(self) -> None:
        if self.n < self.count:
            self.emit([self.n, str(self.n).ljust(self.payload, "x")])  # distinct objects
            self.n += 1


class SlowThenFastBolt(Bolt, _Log):
    """Spends ``cost`` seconds on each tuple for the first ``slow_for`` seconds after its first
    tuple, then none; logs how many tuples it got and the distinct count, every second."""

    def __init__(self, cost: float, slow_for: float, directory: str) -> None:
        self.cost = cost
        self.slow_for = slow_for
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.open_log(self.directory, "slow", context.get_task_id())
        self.start: float | None = None
        self.seen: set[int] = set()
        self.received = 0
        self.last_log = 0.0

    def process(self, tup: Tuple) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start = now
        if now - self.start < self.slow_for:
            end = now + self.cost
            while time.monotonic() < end:
                pass
        self.received += 1
        self.seen.add(tup.values[0])
        if now - self.last_log > 1.0:
            self.last_log = now
            self.write(received=self.received, distinct=len(self.seen))

    def process_tick(self, tup: Tuple) -> None:
        self.write(received=self.received, distinct=len(self.seen))


class DirectSpout(Spout):
    """Emits ``count`` tuples on a direct stream, each to the task its index picks, with that
    task in the values."""

    outputs = [Stream(["n", "target"], direct=True)]

    def __init__(self, count: int, consumer: str) -> None:
        self.count = count
        self.consumer = consumer

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.targets = context.get_component_tasks(self.consumer)
        self.n = 0

    def next_tuple(self) -> None:
        if self.n < self.count:
            target = self.targets[self.n % len(self.targets)]
            self.emit([self.n, target], direct_task=target)
            self.n += 1


class CrashOnceBolt(Bolt):
    """Raises ``ValueError("boom")`` on its first tuple ever (a marker file remembers it across
    restarts); afterwards passes tuples on."""

    outputs = ["n", "payload"]

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def process(self, tup: Tuple) -> None:
        marker = Path(self.marker)
        if not marker.exists():
            marker.write_text("crashed")
            raise ValueError("boom")
        self.emit(tup.values)


class NoStreamSpout(Spout):
    """Emits the words w0..w<count-1> once, unreliably, passing ``stream=None`` (pystorm's way of
    naming the default stream)."""

    outputs = ["word"]

    def __init__(self, count: int) -> None:
        self.count = count

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.next = 0

    def next_tuple(self) -> None:
        if self.next < self.count:
            self.emit([f"w{self.next}"], stream=None)
            self.next += 1


class NoStreamRelay(Bolt):
    """Emits each input's values anchored to it with ``stream=None``, then acks it."""

    outputs = ["value"]

    def process(self, tup: Tuple) -> None:
        self.emit(tup.values, stream=None, anchors=[tup])
        self.ack(tup)


class FirstTuple(Tuple):
    """A Tuple subclass, as a bolt's ``tuple_type``: adds ``first`` (the first value)."""

    __slots__ = ()

    @property
    def first(self) -> Any:
        return self.values[0]


class TypedSink(Bolt, _Log):
    """Receives its inputs as `FirstTuple`; logs, per input, the class it got, ``first`` and the
    instance's garbage-collector settings, then acks it."""

    tuple_type = FirstTuple

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.open_log(self.directory, "typed", context.get_task_id())

    def process(self, tup: Tuple) -> None:
        self.write(
            kind=type(tup).__name__,
            first=tup.first,  # type: ignore[attr-defined]
            values=tup.values,
            threshold=gc.get_threshold()[0],
            frozen=gc.get_freeze_count(),
        )
        self.ack(tup)


class PacedSpout(Spout, _Log):
    """Emits 0, 1, 2, ... (below ``limit`` if given) with the number as message id, sleeping
    ``pause`` seconds in every next_tuple call (Storm's everyday idiom), and replays what
    fails. Logs every ack and fail,
    and its activate() and deactivate() calls."""

    outputs = ["n"]

    def __init__(self, directory: str, pause: float = 0.005, limit: int | None = None) -> None:
        self.directory = directory
        self.pause = pause
        self.limit = limit

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.next = 0
        self.replay: deque[int] = deque()
        self.open_log(self.directory, "paced", context.get_task_id())

    def next_tuple(self) -> None:
        time.sleep(self.pause)
        if self.replay:
            n = self.replay.popleft()
        elif self.limit is None or self.next < self.limit:
            n = self.next
            self.next += 1
        else:
            return
        self.emit([n], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        self.write(ack=tup_id, at=time.time())

    def fail(self, tup_id: Any) -> None:
        self.replay.append(tup_id)
        self.write(fail=tup_id, at=time.time())

    def activate(self) -> None:
        self.write(event="activate", at=time.time())

    def deactivate(self) -> None:
        self.write(event="deactivate", at=time.time())


class ResumingSpout(Spout, _Log):
    """Emits 0, 1, 2, ... below ``limit`` with the number as message id, sleeping ``pause``
    seconds in every next_tuple call, and replays what fails. Unlike `PacedSpout` it keeps
    its position across restarts (``<directory>/next-<task>``) and does not emit again what
    it emitted before a restart: a tuple in flight when its process dies is lost, as with a
    source that commits on emit. Logs every ack."""

    outputs = ["n"]

    def __init__(self, directory: str, limit: int, pause: float = 0.004) -> None:
        self.directory = directory
        self.limit = limit
        self.pause = pause

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.open_log(self.directory, "resuming", context.get_task_id())
        self.position = Path(self.directory) / f"next-{context.get_task_id()}"
        self.next = int(self.position.read_text()) if self.position.exists() else 0
        self.replay: deque[int] = deque()

    def next_tuple(self) -> None:
        time.sleep(self.pause)
        if self.replay:
            n = self.replay.popleft()
        elif self.next < self.limit:
            n = self.next
            self.next += 1
            self.position.write_text(str(self.next))
        else:
            return
        self.emit([n], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        self.write(ack=tup_id)

    def fail(self, tup_id: Any) -> None:
        self.replay.append(tup_id)


class KeyBolt(Bolt):
    """Emits ``[n, n % keys]`` anchored to its input, then acks it."""

    outputs = ["n", "key"]

    def __init__(self, keys: int) -> None:
        self.keys = keys

    def process(self, tup: Tuple) -> None:
        n = tup.values[0]
        self.emit([n, n % self.keys], anchors=[tup])
        self.ack(tup)


class KeyedSink(Bolt, _Log):
    """Logs every ``(n, key)`` it receives with its task id and the time, then acks it."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.task = context.get_task_id()
        self.open_log(self.directory, "keyed", self.task)

    def process(self, tup: Tuple) -> None:
        self.write(n=tup.values[0], key=tup.values[1], task=self.task, at=time.time())
        self.ack(tup)
