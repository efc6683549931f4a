"""The collector's input cursor (``heron_core.instance._anchoring.InputCursor``): the inputs of
a batch with acking on walked one at a time without a Tuple each. Whatever a bolt does with an
input (emits anchored to it, its Tuple built midway and named as an anchor, ack, fail, kept
and settled after later inputs, emits after it was settled, flushes in between), the cursor
must send and ack exactly what the Tuple path sends and acks: the same edges, runs, batches,
ack entries, failures and counts."""

from __future__ import annotations

import marshal
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_emit_many import collector

from heron_core.api import InputBatch, Tuple
from heron_core.instance._anchoring import InputCursor, InputStats
from heron_core.instance._bolt import BoltCollector


def _runs(shape: list[tuple[int, list[int]]], rng: random.Random) -> list[Any]:
    """Received runs: (copies, root keys) each; a run without keys is outside any tree."""
    items: list[Any] = []
    for count, keys in shape:
        anchors = tuple((1 + root % 2, root, rng.getrandbits(64) | 1) for root in sorted(keys))
        items.append(anchors if count == 1 else [count, anchors])
    return marshal.loads(marshal.dumps(items))


def _batch(runs: list[Any], count: int) -> InputBatch:
    values = [[f"w{i}"] for i in range(count)]
    return InputBatch("src", "default", 1, values, InputStats(), 5.0, trees=runs)


# what a bolt does with one input, in order: emits (on the fields stream, or to every task of
# the ALL stream), its Tuple named as an anchor, then how it is settled, then emits after that
ACTIONS = st.lists(st.sampled_from(["emit", "all", "anchor"]), max_size=4)
ENDINGS = st.sampled_from(["ack", "fail", "keep", "ack twice", "fail then ack"])


@settings(max_examples=200, deadline=None)
@given(
    shape=st.lists(
        st.tuples(st.integers(1, 4), st.lists(st.integers(1, 6), max_size=2, unique=True)),
        min_size=1,
        max_size=5,
    ),
    data=st.data(),
    seed=st.integers(0, 2**32),
)
def test_the_cursor_sends_and_acks_what_the_tuple_path_does(
    shape: list[tuple[int, list[int]]], data: st.DataObject, seed: int
) -> None:
    runs = _runs(shape, random.Random(seed))
    count = sum(copies for copies, _ in shape)
    script = [
        (data.draw(ACTIONS), data.draw(ENDINGS), data.draw(ACTIONS), data.draw(st.booleans()))
        for _ in range(count)
    ]
    settle_order = data.draw(st.permutations(range(count)))
    late_fails = data.draw(st.lists(st.booleans(), min_size=count, max_size=count))
    outcomes = []
    for walk in (False, True):
        bolt, wire = collector(True, seed=seed % 1000)
        warned: list[str] = []
        bolt._acker._warn = warned.append
        batch = _batch(runs, count)
        cursor = bolt.walk(batch) if walk else None
        assert (cursor is not None) == walk
        tuples = None if walk else batch.tuples()
        kept: dict[int, Tuple] = {}

        def emit(
            values: list[Any],
            stream: str,
            i: int,
            bolt: BoltCollector = bolt,
            cursor: InputCursor | None = cursor,
            tuples: list[Tuple] | None = tuples,
        ) -> None:
            if cursor is not None:
                bolt.emit_current(values, stream, None, False)
            else:
                assert tuples is not None
                bolt.emit(values, stream, [tuples[i]])

        for i, (before, ending, after, flush) in enumerate(script):
            if cursor is not None:
                cursor.next()
            for n, action in enumerate(before):
                if action == "anchor":  # the Tuple, named as an anchor with another value
                    tup = cursor.tuple() if cursor is not None else tuples[i]  # type: ignore[index]
                    bolt.emit([f"a{i}.{n}"], "default", [tup])
                elif action == "all":
                    emit([f"p{i}", n], "pairs", i)
                else:
                    emit([f"e{i}.{n}"], "default", i)
            if ending == "keep":
                kept[i] = cursor.tuple() if cursor is not None else tuples[i]  # type: ignore[index]
            else:
                for step in ending.split(" then ") if "then" in ending else [ending]:
                    verb = step.split()[0]
                    for _ in range(2 if step.endswith("twice") else 1):
                        if cursor is not None:
                            (cursor.ack if verb == "ack" else cursor.fail)()
                        else:
                            tup = tuples[i]  # type: ignore[index]
                            (bolt.ack if verb == "ack" else bolt.fail)(tup)
            for n, _ in enumerate(after):  # anchored to an input settled already (or kept)
                emit([f"z{i}.{n}"], "default", i)
            if flush:
                bolt._router.flush()
        for i in settle_order:
            if i in kept:
                (bolt.fail if late_fails[i] else bolt.ack)(kept[i])
        bolt._router.flush()
        entries = {
            task: (dict(e.acks), list(e.init_keys), list(e.fail_keys))
            for task, e in bolt._acker._acks._pending.items()
        }
        stats = batch._origin
        outcomes.append((wire.sent, entries, warned, stats.acked, stats.failed, stats.received_s))
    assert outcomes[1] == outcomes[0]


def test_each_input_is_settled_once_and_its_tuple_after_that_is_settled() -> None:
    bolt, _ = collector(True)
    warned: list[str] = []
    bolt._acker._warn = warned.append
    runs = _runs([(2, [7]), (1, [])], random.Random(1))
    batch = _batch(runs, 3)
    cursor = bolt.walk(batch)
    assert cursor is not None
    cursor.next()
    cursor.ack()
    cursor.ack()
    assert warned == ["acked or failed the same tuple twice; ignored"]
    assert cursor.tuple()._ackval is None  # built after its ack: settled
    cursor.next()
    tup = cursor.tuple()
    assert tup.values == ["w1"] and tup._roots == runs[0][1] and tup._ackval == 0
    assert cursor.tuple() is tup
    cursor.next()
    assert cursor.tree() is None  # outside any tree: its children are unanchored
    with pytest.raises(IndexError, match="past the last input"):
        cursor.next()
    # the batch's Tuples, built after the walk, count as settled
    assert all(tup._ackval is None for tup in batch.tuples())


def test_walk_is_for_batches_whose_inputs_need_no_tuple() -> None:
    bolt, _ = collector(True)
    runs = _runs([(2, [7])], random.Random(1))
    built = _batch(runs, 2)
    built.tuples()
    assert bolt.walk(built) is None  # its Tuples exist: they are the inputs
    bolt.ack = lambda tup: None  # a task hook reports each ack with its Tuple
    assert bolt.walk(_batch(runs, 2)) is None
    off, _ = collector(False)
    assert off.walk(InputBatch("src", "default", 1, [["w"]])) is None


def test_a_batch_without_trees_or_with_other_trees_is_refused() -> None:
    bolt, _ = collector(True)
    cursor = bolt._acker.cursor
    with pytest.raises(ValueError, match="without tuple trees"):
        cursor.start(InputBatch("src", "default", 1, [["w"]]))
    with pytest.raises(ValueError, match="2 inputs from 'src' on 'default' came with 3"):
        cursor.start(_batch([[3, ()]], 2))
