"""Acking an input: its edge XOR its children's edges goes to each of its trees, whatever
container its trees come in (the one-tree tuple has a typed fast path when compiled)."""

from __future__ import annotations

from typing import Any

import pytest

from heron_core.api import Tuple
from heron_core.instance._acking import AckSender
from heron_core.instance._anchoring import Acker


class Wire:
    def send(self, frames: Any) -> None:
        pass


def acked_entries(roots: Any, pending: int) -> dict[int, dict[int, int]]:
    acks = AckSender(Wire())  # type: ignore[arg-type]
    acker = Acker(acks, "here", lambda what: None)
    tup = Tuple(None, "split", "default", 3, ["a"])
    tup._roots, tup._ackval = roots, pending
    acker.ack(tup)
    assert tup._ackval is None
    return {task: dict(acks.acks_of(task)) for task in (1, 2)}


ONE = (1, 1 << 63 | 5, 1 << 62 | 9)
OTHER = (2, 77, 1 << 64 - 1)


@pytest.mark.parametrize(
    ("roots", "expected"),
    [
        ((ONE,), {1: {ONE[1]: ONE[2] ^ 0xF0}, 2: {}}),
        ([ONE], {1: {ONE[1]: ONE[2] ^ 0xF0}, 2: {}}),
        (([*ONE],), {1: {ONE[1]: ONE[2] ^ 0xF0}, 2: {}}),
        ((ONE, OTHER), {1: {ONE[1]: ONE[2] ^ 0xF0}, 2: {OTHER[1]: OTHER[2] ^ 0xF0}}),
        ((), {1: {}, 2: {}}),
    ],
)
def test_every_tree_gets_the_edge_xor_the_pending_value(roots: Any, expected: Any) -> None:
    assert acked_entries(roots, 0xF0) == expected


def test_acks_of_the_same_tree_between_two_flushes_are_xored_into_one_entry() -> None:
    acks = AckSender(Wire())  # type: ignore[arg-type]
    acker = Acker(acks, "here", lambda what: None)
    for pending in (3, 5):
        tup = Tuple(None, "split", "default", 3, ["a"])
        tup._roots, tup._ackval = (ONE,), pending
        acker.ack(tup)
    assert acks.acks_of(1) == {ONE[1]: ONE[2] ^ 3 ^ ONE[2] ^ 5}
