"""Storm's starter topologies (topologies/) give exact results through completeTopology."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from compat_support import Run, complete, starter, workers_fixture  # noqa: F401 - a fixture

from storm_compat.testing import MockedSources

pytestmark = pytest.mark.processes

exclamation = starter("exclamation")
word_count = starter("storm_word_count")
rolling = starter("rolling_top_words")

WORDS = ["nathan", "mike", "jackson", "golda", "bertels", "nathan"]
SENTENCES = ["the cow jumped over the moon", "four score and seven years ago", "the end"]
# counts 6, 5, 4, 3, 2, 1: distinct, so the top 5 is exact
STREAM = [w for w, n in zip("abcdef", range(6, 0, -1), strict=True) for _ in range(n)]


@pytest.fixture(scope="module")
def exclaimed(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return complete(
        tmp_path_factory.mktemp("exclamation"),
        lambda _: exclamation.build_topology(words=2, exclaim1=2, exclaim2=2),
        workers,
        mocked=MockedSources({"word": [[w] for w in WORDS]}),
    )


def test_exclamation_appends_three_exclamation_marks_twice(exclaimed: Run) -> None:
    assert sorted(exclaimed.tuples("exclaim1")) == sorted([w + "!!!"] for w in WORDS)
    assert sorted(exclaimed.tuples("exclaim2")) == sorted([w + "!!!!!!"] for w in WORDS)


@pytest.fixture(scope="module")
def counted(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return complete(
        tmp_path_factory.mktemp("word_count"),
        lambda _: word_count.build_topology(spouts=1, splits=2, counts=3),
        workers,
        mocked=MockedSources({"spout": [[s] for s in SENTENCES]}),
    )


def test_word_count_counts_every_occurrence_of_every_word(counted: Run) -> None:
    words = [w for s in SENTENCES for w in s.split()]
    assert sorted(counted.tuples("split")) == sorted([w] for w in words)
    expected = [[w, k] for w, n in Counter(words).items() for k in range(1, n + 1)]
    assert sorted(counted.tuples("count")) == sorted(expected)


@pytest.fixture(scope="module")
def ranked(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    topology = rolling.build_topology(
        top_n=5, window_secs=120, emit_secs=1, rank_emit_secs=1, generators=1, counters=2, rankers=2
    )
    return complete(
        tmp_path_factory.mktemp("rolling"),
        lambda _: topology,
        workers,
        mocked=MockedSources({"wordGenerator": [[w] for w in STREAM]}),
    )


def ranking(values: list[Any]) -> list[tuple[Any, int]]:
    return [(r.obj, r.count) for r in values[0].getRankings()]


def test_rolling_counts_are_emitted_on_ticks(ranked: Run) -> None:
    final: dict[str, int] = {}
    for obj, count, _ in ranked.tuples("counter"):
        final[obj] = max(count, final.get(obj, 0))
    assert final == Counter(STREAM)


def test_rolling_top_words_ranks_the_top_five(ranked: Run) -> None:
    expected = [("a", 6), ("b", 5), ("c", 4), ("d", 3), ("e", 2)]
    assert ranking(ranked.tuples("finalRanker")[-1]) == expected
    partial = [ranking(values) for values in ranked.tuples("intermediateRanker")]
    assert all(len(r) <= 5 for r in partial)
