"""pystorm/streamparse components for the adapter tests (importable by class path, also from
instance processes when this directory is the topology's code)."""

from __future__ import annotations

import threading
from typing import Any

from streamparse import BatchingBolt, Bolt, ReliableSpout, Spout, TicklessBatchingBolt


class Recording:
    """Calls made on the class (tests read them back), shared by the tests' components."""

    calls: list[tuple[Any, ...]] = []


class EchoBolt(Bolt):
    """Emits the first value and the values' type name; auto-acks and auto-anchors."""

    outputs = ["word", "kind"]

    def initialize(self, conf: dict[str, Any], ctx: dict[str, Any]) -> None:
        Recording.calls.append(("initialize", conf, ctx))

    def process(self, tup: Any) -> None:
        if tup.values[0] == "boom":
            raise ValueError("boom")
        self.emit([tup.values[0], type(tup.values).__name__])

    def process_tick(self, tup: Any) -> None:
        Recording.calls.append(("tick", tup))


class ManualBolt(Bolt):
    """auto_ack and auto_anchor off: acks by id string, anchors explicitly, emits unanchored
    with anchors=[], and reports through pystorm's side channels."""

    auto_ack = False
    auto_anchor = False
    auto_fail = False
    exit_on_exception = False
    outputs = ["word"]

    def process(self, tup: Any) -> None:
        if tup.values[0] == "boom":
            raise ValueError("boom")
        Recording.calls.append(("no ids", self.emit([tup.values[0]], anchors=[tup])))
        self.emit([tup.values[0]], anchors=[])
        Recording.calls.append(("ids", self.emit([tup.values[0]], need_task_ids=True)))
        self.log("a log line", level="warning")
        self.report_metric("seen", 1)
        self.ack(tup.id)


class OverridingBolt(Bolt):
    """Overrides emit and ack (so the adapter keeps pystorm's message path)."""

    outputs = ["word"]

    def emit(self, tup: Any, **kwargs: Any) -> Any:
        Recording.calls.append(("emit", tup))
        return super().emit(tup, **kwargs)

    def ack(self, tup: Any) -> None:
        Recording.calls.append(("ack", tup.id))
        super().ack(tup)

    def process(self, tup: Any) -> None:
        self.emit([tup.values[0].upper()])


class GroupBatchingBolt(BatchingBolt):
    """Counts each batch of equal first values."""

    outputs = ["word", "count"]

    def group_key(self, tup: Any) -> Any:
        return tup.values[0]

    def process_batch(self, key: Any, tups: list[Any]) -> None:
        if key == "boom":
            raise ValueError("boom")
        self.emit([key, len(tups)])


class TimedBatchingBolt(TicklessBatchingBolt):
    """Counts each batch; records the thread that processed it."""

    secs_between_batches = 0.05
    outputs = ["count"]

    def process_batch(self, key: Any, tups: list[Any]) -> None:
        Recording.calls.append(("batch", threading.current_thread().name, len(tups)))
        self.emit([len(tups)])


class CycleSpout(Spout):
    """Emits a, b, c, ... unreliably; records activate/deactivate."""

    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], ctx: dict[str, Any]) -> None:
        self.count = 0

    def next_tuple(self) -> None:
        self.count += 1
        if self.count == 99:
            raise RuntimeError("spout broke")
        self.emit([chr(ord("a") + self.count % 26)])

    def activate(self) -> None:
        Recording.calls.append(("activate",))

    def deactivate(self) -> None:
        Recording.calls.append(("deactivate",))


class NumberSpout(ReliableSpout):
    """Emits "n0", "n1", ... reliably (the message id is the word), ``limit`` of them."""

    outputs = ["word"]
    limit = 10
    max_fails = 2

    def initialize(self, conf: dict[str, Any], ctx: dict[str, Any]) -> None:
        self.sent = 0

    def next_tuple(self) -> None:
        if self.sent < self.limit:
            word = f"n{self.sent}"
            self.sent += 1
            self.emit([word], tup_id=word)

    def ack(self, tup_id: Any) -> None:
        self.logger.info("acked %s", tup_id)
        super().ack(tup_id)


class FailOnceBolt(Bolt):
    """Fails the first copy of each word (auto_fail: by raising) and acks the replay; prints
    each word to stdout (the multilang pipe when it runs as a subprocess)."""

    exit_on_exception = False
    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], ctx: dict[str, Any]) -> None:
        self.seen: set[str] = set()

    def process(self, tup: Any) -> None:
        word = tup.values[0]
        print(f"processing {word}", flush=True)
        if word not in self.seen:
            self.seen.add(word)
            raise ValueError(f"first sight of {word}")
        self.emit([word])


class DeferBolt(Bolt):
    """Keeps each input until the next one: then anchors to it (by id) and acks it."""

    auto_ack = False
    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], ctx: dict[str, Any]) -> None:
        self.previous: Any = None

    def process(self, tup: Any) -> None:
        if self.previous is not None:
            self.emit([tup.values[0]], anchors=[tup, self.previous.id])
            self.ack(self.previous)
        self.previous = tup


class CurrentBolt(Bolt):
    """Records ``_current_tups`` in ``process`` and ``process_tick``; for "both" it assigns
    ``_current_tups`` (as BatchingBolt does) to anchor its emit to the input and the one
    before, which it acks only after the next input."""

    auto_ack = False
    outputs = ["word"]
    _current_tups: list[Any]  # pystorm's, unannotated

    def initialize(self, conf: dict[str, Any], ctx: dict[str, Any]) -> None:
        self.previous: Any = None

    def process(self, tup: Any) -> None:
        Recording.calls.append(("current", list(self._current_tups)))
        if tup.values[0] == "both":
            self._current_tups = [tup, self.previous]
        self.emit([tup.values[0]])
        if self.previous is not None:
            self.ack(self.previous)
        self.previous = tup

    def process_tick(self, tup: Any) -> None:
        Recording.calls.append(("current", list(self._current_tups)))


class SelfAckBolt(Bolt):
    """Acks its input itself although auto_ack is on (pystorm then acks it a second time)."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        self.ack(tup)


class AckThenEmitBolt(Bolt):
    """Acks its input, then emits (pystorm still auto-anchors the emit to the acked input)."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        self.ack(tup)
        self.emit([tup.values[0]])


class RejectBolt(Bolt):
    """Fails its input itself (auto_ack is on: pystorm then acks it too)."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        self.fail(tup)


class FragileSpout(Spout):
    """Emits "x" reliably; raises on ack (exit_on_exception is left on)."""

    outputs = ["word"]

    def next_tuple(self) -> None:
        self.emit(["x"], tup_id="x")

    def ack(self, tup_id: Any) -> None:
        raise RuntimeError(f"cannot ack {tup_id}")


class LoopSpout(Spout):
    """Keeps a loop body of its own (``_run``): every command takes pystorm's message path."""

    outputs = ["word"]

    def _run(self) -> None:
        Recording.calls.append(("run",))
        super()._run()

    def next_tuple(self) -> None:
        self.emit(["y"])

    def ack(self, tup_id: Any) -> None:
        Recording.calls.append(("ack", tup_id))

    def fail(self, tup_id: Any) -> None:
        Recording.calls.append(("fail", tup_id))


class TimedBolt(Bolt):
    """Each input takes as many milliseconds of `clock` as its word has letters."""

    outputs = ["word"]
    clock = [100.0]

    def process(self, tup: Any) -> None:
        TimedBolt.clock[0] += 0.001 * len(tup.values[0])
