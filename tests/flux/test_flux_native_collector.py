"""A native bolt named in a Flux file runs as a Storm bolt: its collector calls become the Storm
collector's."""

from __future__ import annotations

from typing import Any

import pytest

from heron_core.api import Bolt, InputBatch, Tuple
from heron_core.errors import UserCodeError
from storm_compat.flux._native import _BoltCollector


class Words(Bolt):
    outputs = ["word"]

    def process(self, tup: Tuple) -> None:
        self.emit_many([[word] for word in tup.values[0].split()], anchors=[tup])
        self.ack(tup)


class StormOut:
    """Records what a Storm ``OutputCollector`` is asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def emit(self, stream: str, anchors: list[Any], values: list[Any]) -> list[int]:
        self.calls.append(("emit", stream, [a.native for a in anchors], values))
        return [4]

    def ack(self, tup: Any) -> None:
        self.calls.append(("ack", tup.native))


def test_emit_many_is_one_storm_emit_per_row_with_the_same_anchors() -> None:
    out = StormOut()
    bolt = Words()
    bolt._collector = _BoltCollector(out)  # type: ignore[arg-type]
    line = Tuple(None, "lines", "default", 3, ["to be"])
    bolt.process(line)
    assert out.calls == [
        ("emit", "default", [line], ["to"]),
        ("emit", "default", [line], ["be"]),
        ("ack", line),
    ]


class BatchWords(Bolt):
    outputs = ["word"]

    def process_batch(self, batch: InputBatch) -> None:
        self.emit_and_ack(batch, [[[word] for word in line.split()] for (line,) in batch.values])


def test_emit_and_ack_is_each_inputs_storm_emits_then_its_ack() -> None:
    out = StormOut()
    bolt = BatchWords()
    bolt._collector = _BoltCollector(out)  # type: ignore[arg-type]
    batch = InputBatch("lines", "default", 3, [["to be"], ["or"]])
    bolt.process_batch(batch)
    first, second = batch.tuples()
    assert out.calls == [
        ("emit", "default", [first], ["to"]),
        ("emit", "default", [first], ["be"]),
        ("ack", first),
        ("emit", "default", [second], ["or"]),
        ("ack", second),
    ]
    with pytest.raises(UserCodeError, match="got 1 lists of rows for a batch of 2 inputs"):
        bolt.emit_and_ack(batch, [[]])
