"""``Bolt.emit_and_ack``: a batch's outputs, each input's rows anchored to it, and every input
acked, in one call that builds no Tuple per input. It must send what the loop of ``emit_many``
(anchored to each input's Tuple) and ``ack`` sends, to the same tasks with the same anchors,
and leave the same ack entries and counts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_emit_many import STREAMS, Middle, collector, decoded_batches

from heron_core.api import InputBatch
from heron_core.errors import EmitTypeError, HeronError, UserCodeError
from heron_core.instance._anchoring import InputStats
from heron_core.instance._bolt import BoltCollector


def batch_of(
    trees: list[list[int]], acking: bool, grouped: bool = False, **extra: Any
) -> InputBatch:
    """A batch from task 1 of ``src``, one input per entry of ``trees`` (the root keys of the
    input's trees, each of spout task 1 or 7 by parity; none: outside any tree); ``grouped``:
    consecutive inputs of the same trees came as one run (sharing their anchors)."""
    roots: list[Any] = []
    for keys in trees:
        anchors = tuple((1 + 6 * (root % 2), root, 1000 + root) for root in keys)
        last = roots[-1] if roots else None
        if grouped and last is not None and (last[1] if type(last) is list else last) == anchors:
            roots[-1] = [last[0] + 1, anchors] if type(last) is list else [2, last]
        else:
            roots.append(anchors)
    return InputBatch(
        "src",
        "default",
        1,
        [[f"line {i}"] for i in range(len(trees))],
        InputStats(),
        2.5,
        trees=roots if acking else None,
        **extra,
    )


def ack_entries(bolt: BoltCollector) -> dict[int, dict[Any, Any]]:
    pending = bolt._acker._acks._pending
    return {task: dict(entries.acks) for task, entries in pending.items() if entries.acks}


def settled(batch: InputBatch) -> tuple[int, int, float]:
    """Acks, fails and summed receipt times of the batch's inputs, counted in its stream's
    stats or in the batch (which the runtime adds to them after ``process_batch``)."""
    stats = batch._origin
    counted = batch.acked + batch.failed
    return (
        stats.acked + batch.acked,
        stats.failed + batch.failed,
        stats.received_s + counted * batch._received,
    )


words = st.lists(st.text(max_size=3), max_size=4)


@settings(max_examples=80, deadline=None)
@given(
    trees=st.lists(st.lists(st.integers(1, 6), max_size=3, unique=True), max_size=6),
    stream=st.sampled_from(sorted(STREAMS)),
    acking=st.booleans(),
    grouped=st.booleans(),
    data=st.data(),
)
def test_it_sends_and_acks_what_emit_many_and_ack_per_tuple_do(
    trees: list[list[int]], stream: str, acking: bool, grouped: bool, data: st.DataObject
) -> None:
    outputs = [[[word] * STREAMS[stream] for word in data.draw(words)] for _ in range(len(trees))]
    fast, fast_wire = collector(acking)
    loop, loop_wire = collector(acking)
    fast_batch = batch_of(trees, acking, grouped)
    loop_batch = batch_of(trees, acking, grouped)
    fast.emit_and_ack(fast_batch, outputs, stream)
    for tup, rows in zip(loop_batch.tuples(), outputs, strict=True):
        loop.emit_many(rows, stream, [tup])
        loop.ack(tup)
    fast._router.flush()
    loop._router.flush()
    assert decoded_batches(fast_wire.sent) == decoded_batches(loop_wire.sent)
    assert ack_entries(fast) == ack_entries(loop)
    if acking:
        assert ack_entries(fast) or not any(trees)
    assert settled(fast_batch) == settled(loop_batch)
    assert fast._router.emit_counts() == loop._router.emit_counts()


def test_with_acking_off_the_rows_go_out_and_the_inputs_count_acked_without_tuples() -> None:
    bolt, wire = collector(False)
    batch = batch_of([[], [], []], acking=False)
    bolt.emit_and_ack(batch, [[["a"], ["b"]], [], (["c"],)])
    bolt._router.flush()
    assert sorted(row[0] for sent in decoded_batches(wire.sent) for row in sent[2]) == [
        "a",
        "b",
        "c",
    ]
    assert batch.acked == 3 and batch._tuples is None


@pytest.mark.parametrize("acking", [False, True], ids=["acking-off", "acking-on"])
def test_it_serves_between_two_inputs_once_due_after_sending_what_came_before(
    acking: bool,
) -> None:
    bolt, wire = collector(acking)
    due = [False]
    served: list[int] = []

    def serve() -> None:
        bolt._router.flush()  # what the runtime's serve does first
        served.append(sum(len(sent[2]) for sent in decoded_batches(wire.sent)))
        due[0] = False

    due[0] = True  # due from the start: served once, after the first input
    batch = batch_of([[1], [2], [3]], acking, due=due, serve=serve)
    bolt.emit_and_ack(batch, [[["a"]], [["b"], ["c"]], [["d"]]])
    assert served == [1]
    bolt._router.flush()
    assert sum(len(sent[2]) for sent in decoded_batches(wire.sent)) == 4


def test_tuples_built_after_it_are_settled_and_their_acks_are_ignored() -> None:
    warnings: list[str] = []
    bolt, _ = collector(True)
    bolt._acker._warn = warnings.append
    batch = batch_of([[1], [2]], acking=True)
    bolt.emit_and_ack(batch, [[["a"]], []])
    before = ack_entries(bolt)
    for tup in batch.tuples():
        bolt.ack(tup)
    assert ack_entries(bolt) == before
    assert len(warnings) == 2 and "twice" in warnings[0]


def test_tuples_built_before_it_are_the_ones_acked() -> None:
    bolt, _ = collector(True)
    batch = batch_of([[1], [2]], acking=True)
    tuples = batch.tuples()
    bolt.emit_and_ack(batch, [[["a"]], [["b"]]])
    assert [tup._ackval for tup in tuples] == [None, None]
    assert batch._origin.acked == 2


@pytest.mark.parametrize("acking", [False, True], ids=["acking-off", "acking-on"])
def test_a_hooked_ack_sees_every_input(acking: bool) -> None:
    bolt, _ = collector(acking)
    seen: list[Any] = []
    plain = bolt.ack

    def hooked(tup: Any) -> None:
        plain(tup)
        seen.append(tup.values[0])

    bolt.ack = hooked
    batch = batch_of([[1], [], [2]], acking)
    bolt.emit_and_ack(batch, [[], [["x"]], []])
    assert seen == ["line 0", "line 1", "line 2"]
    assert batch._origin.acked == 3


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        ([[["a"]]], "emit_and_ack got 1 lists of rows for a batch of 2 inputs from 'src' on"),
        (7, "emit_and_ack needs a list with the rows of each input of the batch, got int"),
        ("ab", "got str"),
    ],
)
def test_outputs_that_do_not_match_the_batch_are_a_clear_error(outputs: Any, message: str) -> None:
    bolt, _ = collector(True)
    batch = batch_of([[1], [2]], acking=True)
    with pytest.raises(UserCodeError) as raised:
        bolt.emit_and_ack(batch, outputs)
    assert "topology 't', component 'bolt', task 2" in str(raised.value)
    assert message in str(raised.value)
    assert not ack_entries(bolt) and not batch._settled  # nothing acked: it may be retried


@pytest.mark.parametrize("acking", [False, True], ids=["acking-off", "acking-on"])
def test_an_undeclared_stream_or_a_bad_row_is_the_emits_error(acking: bool) -> None:
    bolt, _ = collector(acking)
    batch = batch_of([[1], [2]], acking)
    with pytest.raises(UserCodeError, match="emitted on stream 'nope'"):
        bolt.emit_and_ack(batch, [[], []], "nope")
    assert not batch._settled and not ack_entries(bolt)  # nothing acked: it may be retried
    with pytest.raises(EmitTypeError, match=r"needs a list \(or an iterable\) of rows"):
        bolt.emit_and_ack(batch, [[["a"]], "b"])
    with pytest.raises(EmitTypeError, match="needs a list or tuple of values, got str"):
        bolt.emit_and_ack(batch_of([[1]], acking), [[["a"], "b"]])


def test_outputs_may_be_any_iterable_of_lists_of_rows() -> None:
    bolt, _ = collector(False)
    batch = batch_of([[], []], acking=False)
    bolt.emit_and_ack(batch, (rows for rows in [[["a"]], [["b"]]]))
    assert batch.acked == 2


def test_a_batch_is_settled_once() -> None:
    bolt, _ = collector(True)
    batch = batch_of([[1]], acking=True)
    bolt.emit_and_ack(batch, [[]])
    with pytest.raises(UserCodeError, match="emit_and_ack called twice for one batch from 'src'"):
        bolt.emit_and_ack(batch, [[]])


def test_a_bolt_outside_a_topology_cannot_emit_and_ack() -> None:
    with pytest.raises(HeronError, match="emit_and_ack called outside a running topology"):
        Middle().emit_and_ack(batch_of([[]], acking=False), [[]])


def test_on_a_stream_nobody_subscribes_to_a_bad_row_raises_before_anything_is_acked() -> None:
    bolt, _ = collector(True)
    batch = batch_of([[1], [2]], acking=True)
    with pytest.raises(EmitTypeError, match="needs a list or tuple of values, got str"):
        bolt.emit_and_ack(batch, [[["a"]], ["b"]], "unheard")
    assert not ack_entries(bolt) and not batch._settled  # nothing acked: it may be retried
    assert bolt._router.emit_counts()["unheard"] == 0
    bolt.emit_and_ack(batch, [[["a"], ("b",)], iter([["c"]])], "unheard")
    assert set(ack_entries(bolt)) == {1, 7} and batch._origin.acked == 2
    assert bolt._router.emit_counts()["unheard"] == 3


def test_task_hooks_see_each_row_on_a_stream_nobody_subscribes_to() -> None:
    bolt, _ = collector(True)
    reported: list[Any] = []
    bolt.hook_emits(lambda values, stream, tasks: reported.append((values, stream, tasks)))
    bolt.emit_and_ack(batch_of([[1], [2]], acking=True), [[["a"]], [["b"]]], "unheard")
    assert reported == [(["a"], "unheard", []), (["b"], "unheard", [])]
