"""Runs: copies sent one after another to one task with the same anchors share one edge per
tree, sent as one anchors entry and acked into the trees once, when the run's last copy is
acked (``heron_core.instance._anchoring``). The trees must still complete exactly when every
copy in them was acked, whatever the order of emits, acks and flushes."""

from __future__ import annotations

import marshal
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_emit_many import collector

from heron_core.api import InputBatch, Tuple
from heron_core.api._tuple import count_runs
from heron_core.instance._acking import AckSender, InFlight
from heron_core.instance._anchoring import Acker, EdgeIds, Runs, SpoutTree, split_runs
from heron_core.proto import tuple_pb2


class Wire:
    def send(self, frames: Any) -> None:
        pass


def acker() -> tuple[Acker, AckSender]:
    acks = AckSender(Wire())  # type: ignore[arg-type]
    return Acker(acks, "here", lambda what: None), acks


def received(roots: Any) -> Tuple:
    tup = Tuple(None, "src", "default", 1, ["x"])
    tup._roots, tup._ackval = roots, 0
    return tup


def test_copies_with_the_same_anchor_form_one_run_until_another_comes_or_a_flush() -> None:
    bolt, _ = collector(True)
    a, b = received(((1, 10, 5),)), received(((1, 20, 6),))
    runs = Runs()
    for anchor in (a, a, a, b, a):
        runs.add(bolt._acker.anchored([anchor]))
    runs.add(None)
    runs.add(None)
    items = runs.take()
    assert [item[0] if type(item) is list else 1 for item in items] == [3, 1, 1, 2]
    assert [item[1] if type(item) is list else item for item in items][3] == ()
    assert [len(item[1] if type(item) is list else item) for item in items[:3]] == [1, 1, 1]
    # one edge per run went into each anchor's pending value: a got two, b one
    first, third = items[0][1][0][2], items[2][0][2]
    assert a._ackval == first ^ third and b._ackval == items[1][0][2]
    runs.add(bolt._acker.anchored([a]))  # after take: a new run, with a new edge
    [again] = runs.take()
    assert a._ackval == first ^ third ^ again[0][2]


def test_a_spout_s_copies_never_share_edges() -> None:
    acks = AckSender(Wire())  # type: ignore[arg-type]
    tree = SpoutTree(1, acks, InFlight(), EdgeIds(random.Random(2).getrandbits))
    runs = Runs()
    for _ in range(3):
        tree.start()
        runs.add(tree)
    items = runs.take()
    assert len(items) == 3 and len({item[0][1] for item in items}) == 3


def received_batch(runs: Any, count: int) -> list[Tuple]:
    """The Tuples of a received batch of ``count`` inputs whose trees are ``runs``."""
    batch = InputBatch("src", "default", 1, [["x"]] * count, trees=runs)
    return batch.tuples()


def test_the_inputs_of_a_received_run_share_its_anchors_and_its_count() -> None:
    one, two = ((1, 10, 5),), ((1, 20, 6), (2, 30, 7))
    runs = marshal.loads(marshal.dumps([one, [3, two], (), [2, ()]]))
    assert count_runs(runs) == 7
    tuples = received_batch(runs, 7)
    assert [tup._roots for tup in tuples] == [one, two, two, two, (), (), ()]
    shared = [tup._edgerun for tup in tuples]
    assert shared[0] is None and shared[4] is shared[5] is shared[6] is None
    assert shared[1] is shared[2] is shared[3] and shared[1].left == 3


@pytest.mark.parametrize(
    "runs",
    [
        ((),),  # not a list
        [[1, ((1, 2, 3),)]],  # a run of one copy is sent bare
        [[2, [(1, 2, 3)]]],  # anchors are a tuple
        [[2, ((1, 2, 3),), 4]],
        [["2", ()]],
        [7],
    ],
)
def test_malformed_runs_are_refused(runs: Any) -> None:
    with pytest.raises(ValueError):
        count_runs(runs)


def test_a_batch_whose_runs_hold_another_number_of_inputs_is_refused() -> None:
    with pytest.raises(ValueError, match="2 inputs from 'src' on 'default' came with 3"):
        received_batch([[3, ()]], 2)


def test_a_run_s_edge_reaches_its_trees_when_its_last_copy_is_acked() -> None:
    ack, acks = acker()
    anchors = ((1, 10, 0xE0), (7, 11, 0xE0))
    copies = received_batch([[3, anchors]], 3)
    copies[1]._ackval = 0x0C  # this one anchored children
    ack.ack(copies[0])
    assert acks.acks_of(1) == {} and acks.acks_of(7) == {}
    ack.ack(copies[1])  # its children's edges go at once
    assert acks.acks_of(1) == {10: 0x0C} and acks.acks_of(7) == {11: 0x0C}
    ack.ack(copies[2])  # the last: the run's edge
    assert acks.acks_of(1) == {10: 0x0C ^ 0xE0} and acks.acks_of(7) == {11: 0x0C ^ 0xE0}


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 5), st.lists(st.integers(1, 2**64 - 1), max_size=3)),
        max_size=6,
    ),
    st.integers(0, 2**32),
)
def test_split_runs_gives_each_copy_edges_that_xor_to_the_run_s(
    shape: list[tuple[int, list[int]]], seed: int
) -> None:
    items: list[Any] = []
    for count, values in shape:
        anchors = tuple((1, root, value) for root, value in enumerate(values))
        items.append(anchors if count == 1 else [count, anchors])
    copies = split_runs(items)
    assert len(copies) == sum(count for count, _ in shape)
    assert count_runs(copies) == len(copies)  # every copy is a run of one now
    at = 0
    for count, values in shape:
        for root, value in enumerate(values):
            xor = 0
            for copy in copies[at : at + count]:
                assert [tree[:2] for tree in copy] == [(1, r) for r in range(len(values))]
                xor ^= copy[root][2]
            assert xor == value
        at += count


def _drain(acks: AckSender, trees: dict[Any, int]) -> None:
    """XOR the ack entries (and inits) ``acks`` holds into ``trees``, as the tracker would."""
    for entries in acks._pending.values():
        assert not entries.fail_keys
        for key, value in entries.acks.items():
            trees[key] ^= value
        entries.acks.clear()


@settings(max_examples=150, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.integers(1, 4), st.lists(st.integers(1, 4), min_size=1, max_size=2)),
        min_size=1,
        max_size=5,
    ),
    whole=st.booleans(),
    data=st.data(),
)
def test_trees_complete_exactly_when_every_copy_in_them_was_acked(
    runs: list[tuple[int, list[int]]], whole: bool, data: st.DataObject
) -> None:
    """A bolt gets a batch of received runs (inputs sharing anchors), emits children anchored
    to each input (through its Tuple, acks interleaved with later inputs' emits and flushes,
    or in one ``emit_and_ack``); the next bolt acks every copy it got in a random order. After
    every step, each tree's XOR is 0 exactly when nothing of it is left unacked."""
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    trees: dict[Any, int] = {}
    items: list[Any] = []
    outstanding: Counter[Any] = Counter()
    for count, keys in runs:
        anchors = tuple((1, root, rng.getrandbits(64) | 1) for root in sorted(set(keys)))
        for _, root, edge in anchors:  # the sender's init: the run's edge, once
            trees[root] = trees.get(root, 0) ^ edge
            outstanding[root] += count
        items.append(anchors if count == 1 else [count, anchors])
    total = sum(count for count, _ in runs)
    batch = InputBatch(
        "src", "default", 1, [["x"]] * total, trees=marshal.loads(marshal.dumps(items))
    )
    roots = [
        tup._roots for tup in InputBatch("src", "default", 1, [["x"]] * total, trees=items).tuples()
    ]
    outputs = [
        [[w] for w in data.draw(st.lists(st.sampled_from("abcd"), max_size=3))]
        for _ in range(total)
    ]
    bolt, wire = collector(True, seed=rng.randrange(1000))
    acks = bolt._acker._acks

    def check() -> None:
        _drain(acks, trees)
        for root, value in trees.items():
            assert (value == 0) == (outstanding[root] == 0), (root, value, outstanding)

    def settle(index: int) -> None:
        for _, root, _ in roots[index]:
            outstanding[root] -= 1

    if whole:
        bolt.emit_and_ack(batch, outputs)
        for i in range(total):
            for _, root, _ in roots[i]:
                outstanding[root] += len(outputs[i])  # the children, still to be acked
            settle(i)
    else:
        tuples = batch.tuples()
        unacked: list[int] = []
        for i in range(total):
            bolt.emit_many(outputs[i], "default", [tuples[i]])
            for _, root, _ in roots[i]:
                outstanding[root] += len(outputs[i])
            unacked.append(i)
            while unacked and data.draw(st.booleans()):
                done = unacked.pop(rng.randrange(len(unacked)))
                bolt.ack(tuples[done])
                settle(done)
                check()
            if data.draw(st.booleans()):
                bolt._router.flush()
        for done in unacked:
            bolt.ack(tuples[done])
            settle(done)
            check()
    bolt._router.flush()
    check()
    downstream, down_acks = acker()
    copies: list[Tuple] = []
    for _, payload in wire.sent:
        sent = tuple_pb2.TupleBatch.FromString(payload)
        got = InputBatch(
            "bolt", sent.stream, 2, marshal.loads(sent.values), trees=marshal.loads(sent.roots)
        )
        copies.extend(got.tuples())
    assert len(copies) == sum(len(rows) for rows in outputs)
    rng.shuffle(copies)
    for tup in copies:
        downstream.ack(tup)
        for _, root, _ in tup._roots:
            outstanding[root] -= 1
        _drain(down_acks, trees)
        check()
    assert all(value == 0 for value in trees.values())
