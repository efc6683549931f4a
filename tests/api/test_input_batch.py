"""InputBatch: the inputs a bolt that overrides process_batch gets, with their Tuples on demand."""

from __future__ import annotations

import pytest

from heron_core.api import InputBatch, Tuple


class Marked(Tuple):
    __slots__ = ()


def test_with_acking_off_a_tuple_is_built_per_call_of_the_bolts_tuple_type() -> None:
    batch = InputBatch("split", "default", 3, [["a"], ["b"]], "stats", 1.5, Marked)
    one, again = batch.tuple(0), batch.tuple(0)
    assert one is not again and one == again and type(one) is Marked
    assert (one._origin, one._received) == ("stats", 1.5)
    assert not batch.tracked and len(batch) == 2


def test_with_acking_on_each_tuple_carries_its_trees_and_is_built_once() -> None:
    trees = [((1, 10, 5),), ((1, 11, 6), (2, 12, 7))]
    batch = InputBatch("split", "default", 3, [["a"], ["b"]], trees=trees)
    tuples = batch.tuples()
    assert [t._roots for t in tuples] == trees and all(t._ackval == 0 for t in tuples)
    assert batch.tuple(1) is tuples[1] and batch.tuples() is tuples and batch.tracked


def test_trees_that_do_not_match_the_values_are_an_error() -> None:
    batch = InputBatch("split", "default", 3, [["a"], ["b"]], trees=[()])
    with pytest.raises(ValueError, match="2 inputs from 'split' on 'default' came with 1 tuple"):
        batch.tuples()
