"""The in-process streamparse bolt with acking on walks a batch's inputs with the collector's
cursor (no native Tuple per input unless it is needed). Through the real kernel collector,
every pystorm idiom (auto-anchoring and auto-ack, explicit anchors and acks by Tuple or id,
inputs kept past their turn, ``_current_tups`` assigned, acks before emits, fails, exceptions
with and without auto-fail) must send and ack exactly what the path through each input's
Tuple does."""

from __future__ import annotations

import logging
import pickle
import random
from typing import Any

import pytest
import sparse_components
from instance_support import Wire, physical_plan
from sparse_components import Recording
from sparse_support import FakeContext

from heron_core.api import (
    Bolt,
    GlobalStreamId,
    Grouping,
    InputBatch,
    Spout,
    Stream,
    TopologyBuilder,
)
from heron_core.instance._acking import AckSender
from heron_core.instance._anchoring import Acker, EdgeIds, InputStats
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._router import Router
from storm_compat.streamparse import PystormBoltAdapter

COMPONENTS = ("words", "echo", "sink")


class Words(Spout):
    outputs = [Stream(["word"])]


class Sink(Bolt):
    pass


class Echo(Bolt):
    outputs = [Stream(["word", "kind"])]


class Word(Bolt):
    outputs = [Stream(["word"])]


def _collector(fields: list[str], seed: int) -> tuple[BoltCollector, Wire, Acker, list[str]]:
    """The real collector of task 2, ``echo`` (declaring ``fields``), in words -> echo ->
    sink (2 tasks, shuffle), with seeded edges and shuffles; the acker warns into the list."""
    echo = Echo if len(fields) == 2 else Word
    b = TopologyBuilder("t")
    words = b.add_spout("words", Words, par=1)
    middle = b.add_bolt("echo", echo, par=1, inputs={words: Grouping.SHUFFLE})
    b.add_bolt("sink", Sink, par=2, inputs={middle: Grouping.SHUFFLE})
    wire = Wire()
    router = Router(
        physical_plan(b.build()), "echo", 2, 1, wire, 4, lambda *a: None,
        rng=random.Random(seed), acking=True,
    )  # fmt: skip
    warned: list[str] = []
    acker = Acker(AckSender(wire), "echo", warned.append, EdgeIds(random.Random(seed).getrandbits))  # type: ignore[arg-type]
    return BoltCollector(router, acker), wire, acker, warned


def _run(cls: str, walk: bool, batches: list[tuple[list[Any], list[Any]]]) -> Any:
    component = getattr(sparse_components, cls)
    collector, wire, acker, warned = _collector(list(component.outputs), 7)
    if not walk:  # an ack a task hook would see: each input then goes through its Tuple
        plain = collector.ack
        collector.ack = lambda tup: plain(tup)
    adapter = pickle.loads(pickle.dumps(PystormBoltAdapter(f"sparse_components.{cls}", COMPONENTS)))
    adapter._collector = collector
    context = FakeContext(
        "echo",
        2,
        tasks={"words": [1], "echo": [2], "sink": [3, 4]},
        fields={("words", "default"): ("word",), ("echo", "default"): tuple(component.outputs)},
        sources={GlobalStreamId("words", "default"): Grouping.SHUFFLE},
        targets={"default": {"sink": Grouping.SHUFFLE}},
    )
    adapter.initialize({"topology.name": "t", "topology.reliability.mode": "ATLEAST_ONCE"}, context)
    Recording.calls.clear()
    stats = InputStats()
    for values, trees in batches:
        batch = InputBatch("words", "default", 1, values, stats, 2.5, trees=trees)
        adapter.process_batch(batch)
        assert (batch._tuples is None) == walk  # walked: no Tuple built for the whole batch
    collector._router.flush()
    entries = {task: (dict(e.acks), list(e.fail_keys)) for task, e in acker._acks._pending.items()}
    return (
        wire.batches,
        entries,
        warned,
        dict(adapter._warned),
        sorted(adapter._pending),
        repr(Recording.calls),
        (stats.acked, stats.failed, stats.received_s),
    )


def _batches(words: list[str]) -> list[tuple[list[Any], list[Any]]]:
    """Two batches of ``words``: a run of three inputs of one tree, inputs of their own trees
    (one of two trees), one outside any tree."""
    rng = random.Random(3)

    def anchors(*roots: int) -> Any:
        return tuple((1, root, rng.getrandbits(64) | 1) for root in roots)

    trees = [[3, anchors(11)], anchors(12, 13), (), anchors(14)]
    assert len(words) == 6
    return [([[w] for w in words], list(trees)), ([[w] for w in reversed(words)], list(trees))]


@pytest.mark.parametrize(
    ("cls", "words"),
    [
        ("EchoBolt", ["a", "b", "a", "c", "d", "e"]),
        ("ManualBolt", ["a", "boom", "a", "c", "boom", "e"]),
        ("FailOnceBolt", ["a", "b", "a", "c", "b", "e"]),
        ("DeferBolt", ["a", "b", "a", "c", "d", "e"]),
        ("CurrentBolt", ["a", "both", "a", "c", "both", "e"]),
        ("SelfAckBolt", ["a", "b", "a", "c", "d", "e"]),
        ("AckThenEmitBolt", ["a", "b", "a", "c", "d", "e"]),
        ("RejectBolt", ["a", "b", "a", "c", "d", "e"]),
    ],
)
def test_walking_a_batch_sends_and_acks_what_each_input_s_tuple_does(
    cls: str, words: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.CRITICAL)  # the components' own error logs
    through_tuples = _run(cls, False, _batches(words))
    walked = _run(cls, True, _batches(words))
    assert walked == through_tuples
    sent, entries = walked[0], walked[1]
    assert sent or cls in ("SelfAckBolt", "RejectBolt")
    assert entries  # something was acked or failed
