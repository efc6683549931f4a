"""The XOR tree tracker against a simple model: random trees, random delivery orders, fails and
timeouts."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from heron_core.proto import tuple_pb2
from heron_core.stmgr._trees import TreeTracker


def tree_messages(rng: random.Random, task: int, root: int, size: int) -> list[tuple_pb2.AckBatch]:
    """The init and ack entries of one tree of ``size`` tuples, built as the instances do:
    the spout XORs its first edges; each tuple's ack carries its edge XOR its children's. An
    odd root is an emit to one task: its one first tuple has the root as edge, and no init
    is sent (the tracker starts the tree at its key)."""
    edges = [rng.getrandbits(64) or 1 for _ in range(size)]
    parent = [None] + [rng.randrange(i) for i in range(1, size)]  # tuple 0 is a spout child
    if root & 1:
        first = [0]
        edges[0] = root
    else:
        first = [i for i in range(size) if parent[i] is None or rng.random() < 0.2]
    children: dict[int, list[int]] = {i: [] for i in range(size)}
    for i in range(1, size):
        if i not in first:
            children[parent[i]].append(i)  # type: ignore[index]
    init = 0
    for i in first:
        init ^= edges[i]
    messages = []
    if not root & 1:
        messages.append(tuple_pb2.AckBatch(spout_task=task, init_keys=[root], init_values=[init]))
    for i in range(size):
        value = edges[i]
        for c in children[i]:
            value ^= edges[c]
        messages.append(tuple_pb2.AckBatch(spout_task=task, ack_keys=[root], ack_values=[value]))
    return messages


@settings(max_examples=200)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=8),
    st.integers(0, 2**32),
    st.data(),
)
def test_a_tree_completes_exactly_when_every_entry_arrived(
    sizes: list[int], seed: int, data: st.DataObject
) -> None:
    rng = random.Random(seed)
    tracker = TreeTracker()
    pending: dict[int, int] = {}
    stream: list[tuple[int, tuple_pb2.AckBatch]] = []
    for n, size in enumerate(sizes):
        root = rng.getrandbits(64) or 1
        messages = tree_messages(rng, task=1 + n % 2, root=root, size=size)
        pending[root] = len(messages)
        stream.extend((root, m) for m in messages)
    rng.shuffle(stream)
    cut = data.draw(st.integers(0, len(stream)))
    completed: list[int] = []
    for root, message in stream[:cut]:
        tracker.apply(message)
        pending[root] -= 1
        for out in tracker.take_outcomes().values():
            completed.extend(out.acked)
    expected = sorted(r for r, left in pending.items() if left == 0)
    assert sorted(completed) == expected  # each complete tree reported once, no early report
    assert len(tracker) == len({r for r, _ in stream[:cut]} - set(expected))


@given(st.integers(0, 2**32), st.integers(2, 10))
def test_a_fail_reports_the_tree_once_and_forgets_it(seed: int, size: int) -> None:
    rng = random.Random(seed)
    tracker = TreeTracker()
    messages = tree_messages(rng, task=3, root=78, size=size)
    tracker.apply(messages[0])
    tracker.apply(tuple_pb2.AckBatch(spout_task=3, fail_keys=[78]))
    out = tracker.take_outcomes()
    assert out[3].failed == [78] and not out[3].acked
    assert len(tracker) == 0


@given(st.integers(2, 6))
def test_trees_not_completed_are_dropped_after_nbuckets_rotations(nbuckets: int) -> None:
    tracker = TreeTracker(nbuckets)
    tracker.apply(tuple_pb2.AckBatch(spout_task=1, init_keys=[6], init_values=[9]))
    for _ in range(nbuckets - 1):
        assert tracker.rotate() == 0
    assert len(tracker) == 1
    assert tracker.rotate() == 1 and len(tracker) == 0


def test_reset_moves_a_tree_to_the_newest_bucket() -> None:
    tracker = TreeTracker(3)
    tracker.apply(tuple_pb2.AckBatch(spout_task=1, init_keys=[6], init_values=[9]))
    tracker.rotate()
    tracker.rotate()
    tracker.apply(tuple_pb2.AckBatch(spout_task=1, reset_keys=[6]))
    assert tracker.take_outcomes()[1].reset == [6]
    tracker.rotate()
    tracker.rotate()
    assert len(tracker) == 1
    tracker.apply(tuple_pb2.AckBatch(spout_task=1, ack_keys=[6], ack_values=[9]))
    assert tracker.take_outcomes()[1].acked == [6]


def test_an_odd_root_starts_at_its_key_whichever_entry_comes_first() -> None:
    tracker = TreeTracker(3)
    tracker.apply(tuple_pb2.AckBatch(spout_task=1, ack_keys=[5], ack_values=[5 ^ 12]))
    assert not tracker.take_outcomes() and len(tracker) == 1  # its children (12) are out
    tracker.apply(tuple_pb2.AckBatch(spout_task=1, ack_keys=[5], ack_values=[12]))
    assert tracker.take_outcomes()[1].acked == [5] and len(tracker) == 0
    tracker.apply(tuple_pb2.AckBatch(spout_task=1, ack_keys=[7], ack_values=[7]))
    assert tracker.take_outcomes()[1].acked == [7]  # its one tuple, acked without children
