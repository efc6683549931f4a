"""A spout's tree: an emit that goes to exactly one task roots an odd key, gives its copy the
root key as edge and sends no init (the tracker starts an odd tree at its key); any other
emit roots an even key and sends the XOR of its copies' edges as init. Either way the tree
completes in the stream manager's tracker once every copy is acked."""

from __future__ import annotations

from typing import Any

import pytest
from instance_support import physical_plan
from test_router_paths import GROUPINGS, Sink, Src, build

from heron_core.api import TopologyBuilder
from heron_core.proto import tuple_pb2
from heron_core.stmgr._trees import TreeTracker


def emitted(consumers: list[tuple[str, int]]) -> tuple[list[Any], list[Any]]:
    """The anchors of every copy of one reliable emit of a spout whose default stream goes to
    ``consumers`` (grouping, parallelism), and the acking batches the spout sent for it."""
    b = TopologyBuilder("trees")
    src = b.add_spout("src", Src, par=1)
    for i, (grouping, par) in enumerate(consumers):
        b.add_bolt(f"sink{i}", Sink, par=par, inputs={src: GROUPINGS[grouping]()})
    plan = physical_plan(b.build(), containers=2)
    router, wire, collector, acks = build(plan, "src", 1, True, True, 3)
    collector.emit(["k", 1], "id-1")
    router.flush()
    acks.flush()
    copies = [anchors for batch in wire.batches for anchors in batch[3]]
    sent = [tuple_pb2.AckBatch.FromString(frames[2]) for frames in wire.frames]
    return copies, sent


def completes(copies: list[Any], sent: list[Any]) -> bool:
    """Whether the tracker reports the tree acked once each copy is acked (no children)."""
    tracker = TreeTracker()
    for batch in sent:
        tracker.apply(batch)
    for ((task, root, edge),) in copies:
        assert not tracker.take_outcomes()  # not before its last copy is acked
        tracker.apply(tuple_pb2.AckBatch(spout_task=task, ack_keys=[root], ack_values=[edge]))
    return [root for root in tracker.take_outcomes()[1].acked] == [copies[0][0][1]]


@pytest.mark.parametrize("grouping", ["shuffle", "fields", "lowest", "local", "partial"])
def test_an_emit_to_one_task_roots_an_odd_key_with_no_init(grouping: str) -> None:
    copies, sent = emitted([(grouping, 3)])
    [((task, root, edge),)] = copies
    assert task == 1 and root & 1 and edge == root
    assert sent == []  # no init
    assert completes(copies, sent)


@pytest.mark.parametrize(
    "consumers",
    [[("all", 3)], [("custom", 4)], [("shuffle", 2), ("fields", 2)]],
    ids=["all", "custom", "two-consumers"],
)
def test_an_emit_that_may_reach_several_tasks_sends_its_init(consumers: Any) -> None:
    copies, sent = emitted(consumers)
    roots = {anchors[0][1] for anchors in copies}
    assert len(copies) >= 2 and len(roots) == 1 and not roots.pop() & 1
    [init] = sent
    value = 0
    for ((_, _, edge),) in copies:
        value ^= edge
    assert list(init.init_values) == [value]
    assert completes(copies, sent)
