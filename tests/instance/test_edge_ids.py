"""Edge and root ids: random 64-bit, never 0, drawn from the generator a pool at a time."""

from __future__ import annotations

import random

from heron_core.instance._anchoring import EdgeIds


def test_ids_are_the_generators_64_bit_words_drawn_512_per_call() -> None:
    calls: list[int] = []
    rng = random.Random(7)

    def bits(k: int) -> int:
        calls.append(k)
        return rng.getrandbits(k)

    ids = EdgeIds(bits)
    drawn = [ids.next() for _ in range(1025)]
    assert calls == [64 * 512] * 3  # 1,025 ids: three draws
    assert all(0 < i < 1 << 64 for i in drawn)
    assert len(set(drawn)) == len(drawn)
    assert max(drawn).bit_length() == 64  # the words are whole, not truncated
    again = EdgeIds(random.Random(7).getrandbits)
    assert [again.next() for _ in range(1025)] == drawn  # a seeded generator: the same ids


def test_a_zero_word_becomes_1() -> None:
    ids = EdgeIds(lambda k: 0)
    assert {ids.next() for _ in range(600)} == {1}
