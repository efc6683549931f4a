"""The received tuple behaves the same compiled (a mypyc C class) and plain."""

from __future__ import annotations

from typing import Any

from heron_core.api import InputBatch, Tuple


def test_a_tuple_and_a_batch_take_any_field_values_as_the_plain_classes_do() -> None:
    tup = Tuple(1, 2, 3, "4", (5,))
    tup.task = None
    tup.component = b"c"
    assert tup == Tuple(1, b"c", 3, None, (5,))
    batch = InputBatch(1, 2, "3", [[4]])
    assert [t.values for t in batch.tuples()] == [[4]]


def test_python_subclasses_add_slots_and_are_built_without_init() -> None:
    class Timed(Tuple):
        __slots__ = ("at",)

    tup: Any = Tuple.__new__(Timed)
    tup.values, tup.at = ["w"], 1.5
    assert isinstance(tup, Tuple) and (tup.values, tup.at) == (["w"], 1.5)
    built = InputBatch("src", "default", 3, [["a"]], kind=Timed).tuples()
    assert type(built[0]) is Timed and built[0].values == ["a"]
