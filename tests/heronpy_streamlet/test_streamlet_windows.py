"""Windowed operations on tick tuples with an injected clock: which elements each window
holds, its whole-second bounds, the keyed reduce and the four joins, and when inputs are
acked."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlet_support import FakeClock, LocalPlan

from heron_core.errors import UserCodeError
from heronpy.connectors.mock.arraylooper import ArrayLooper
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.impl._window import TimeWindows
from heronpy.streamlet.keyedwindow import KeyedWindow
from heronpy.streamlet.window import Window
from heronpy.streamlet.windowconfig import WindowConfig

results: list[Any] = []


@pytest.fixture(autouse=True)
def _fresh() -> None:
    results.clear()


@given(
    st.sampled_from([(1, 1), (4, 4), (4, 2), (10, 2), (9, 3)]),
    st.lists(st.integers(min_value=0, max_value=3), max_size=30),
    st.lists(st.floats(min_value=0.0, max_value=0.9), min_size=40, max_size=40),
)
def test_with_a_whole_number_of_slides_each_item_is_in_exactly_that_many_windows(
    window: tuple[int, int], arrivals_per_tick: list[int], lateness: list[float]
) -> None:
    # ticks come late by up to 0.9 s on a loaded machine: membership must not depend on it
    duration, slide = window
    windows: TimeWindows[int] = TimeWindows(duration, slide)
    seen: dict[int, int] = {}
    acked: list[int] = []
    item = 0
    now = 0.0
    for tick, count in enumerate(arrivals_per_tick + [0] * (duration // slide)):
        for _ in range(count):
            windows.add(item, now)
            item += 1
        now = (tick + 1) * slide + lateness[tick % len(lateness)]
        inside, expired = windows.slide(now)
        for member in inside:
            seen[member] = seen.get(member, 0) + 1
        acked.extend(expired)
    assert seen == {i: duration // slide for i in range(item)}
    assert acked == list(range(item))  # every item acked once, when it left its last window
    assert len(windows) == 0


def test_otherwise_a_window_holds_the_arrivals_of_its_last_duration_seconds() -> None:
    windows: TimeWindows[str] = TimeWindows(duration=5, slide=2)
    windows.add("a", 100.0)
    windows.add("b", 101.5)
    assert windows.slide(102.0) == (["a", "b"], [])
    windows.add("c", 103.0)
    assert windows.slide(104.0) == (["a", "b", "c"], ["a"])  # 'a' is too old for 106
    # 'c' arrived at 103: the window at 108 is (103, 108]
    assert windows.slide(106.0) == (["b", "c"], ["b", "c"])
    assert windows.slide(108.0) == ([], [])


def word_count(window: WindowConfig, partitions: int = 1) -> Builder:
    builder = Builder()
    (
        builder.new_source(ArrayLooper(["Mary had a little lamb", "a lamb"]))
        .flat_map(lambda line: line.split())
        .map(lambda word: (word, 1))
        .reduce_by_key_and_window(window, lambda x, y: x + y)
        .set_num_partitions(partitions)
        .consume(lambda result: results.append(result))
    )
    return builder


def test_reduce_by_key_and_window_counts_words_per_sliding_window() -> None:
    clock = FakeClock(1000.3)
    local = LocalPlan(word_count(WindowConfig.create_sliding_window(4, 2)), clock)
    local.spout("generator-1")  # "Mary had a little lamb" at 1000.3
    clock.now = 1002.1
    local.tick("reducebykeyandwindow-1")
    counts = {kw.key: n for kw, n in results}
    assert counts == {"Mary": 1, "had": 1, "a": 1, "little": 1, "lamb": 1}
    assert {kw.window for kw, _ in results} == {Window(998, 1002)}
    results.clear()
    local.spout("generator-1")  # "a lamb" at 1002.1
    clock.now = 1004.2
    local.tick("reducebykeyandwindow-1")
    assert [(kw.key, n) for kw, n in results] == [
        ("Mary", 1),
        ("had", 1),
        ("a", 2),
        ("little", 1),
        ("lamb", 2),
    ]
    assert results[0][0] == KeyedWindow("Mary", Window(1000, 1004))
    # the first sentence's words have left their last window: acked
    acked = [pair[0] for stage, pair in local.acked if stage == "reducebykeyandwindow-1"]
    assert acked == ["Mary", "had", "a", "little", "lamb"]
    results.clear()
    clock.now = 1006.0
    local.tick("reducebykeyandwindow-1")
    assert [(kw.key, n) for kw, n in results] == [("a", 1), ("lamb", 1)]
    clock.now = 1008.0
    results.clear()
    local.tick("reducebykeyandwindow-1")
    assert results == []  # an empty window emits nothing


def test_each_key_is_reduced_by_one_task_of_a_partitioned_reduce() -> None:
    clock = FakeClock()
    local = LocalPlan(word_count(WindowConfig.create_tumbling_window(5), partitions=3), clock)
    local.spout("generator-1", calls=4)
    clock.now += 5
    local.tick("reducebykeyandwindow-1")
    assert sorted((kw.key, n) for kw, n in results) == [
        ("Mary", 2),
        ("a", 4),
        ("had", 2),
        ("lamb", 4),
        ("little", 2),
    ]
    tasks_of = {}
    for task in local.task_ids("reducebykeyandwindow-1"):
        for word, _ in local.received.get(("reducebykeyandwindow-1", task), []):
            tasks_of.setdefault(word, set()).add(task)
    assert all(len(tasks) == 1 for tasks in tasks_of.values())
    assert len(set().union(*tasks_of.values())) > 1  # the keys are spread over the tasks


def test_reduce_by_window_folds_from_none_like_heronpy() -> None:
    builder = Builder()
    numbers = builder.new_source(ArrayLooper([1, 2, 3])).set_num_partitions(2)
    numbers.reduce_by_window(
        WindowConfig.create_tumbling_window(3),
        lambda total, n: [n] if total is None else [*total, n],
    ).consume(lambda result: results.append(result))
    clock = FakeClock(500.0)
    local = LocalPlan(builder, clock)
    local.spout("generator-1", calls=3)
    clock.now = 503.5
    local.tick("reducebywindow-1")  # both tasks tick: only the lowest holds elements
    assert results == [(Window(500, 503), [1, 1, 2, 2, 3, 3])]


def join_of(kind: str) -> LocalPlan:
    builder = Builder()
    left = builder.new_source(ArrayLooper([("k1", "a"), ("k1", "b"), ("k2", "x")]))
    right = builder.new_source(ArrayLooper([("k1", "c"), ("k3", "y")]))
    window = WindowConfig.create_sliding_window(2, 1)
    joined = getattr(left, kind)(right, window, lambda left, right: f"{left}+{right}")
    joined.consume(lambda result: results.append((result[0].key, result[1])))
    clock = FakeClock(100.0)
    local = LocalPlan(builder, clock)
    local.spout("generator-1", calls=3)
    local.spout("generator-2", calls=2)
    clock.now = 101.0
    local.tick("join-1")
    return local


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("join", [("k1", "a+c"), ("k1", "b+c")]),
        ("outer_left_join", [("k1", "a+c"), ("k1", "b+c"), ("k2", "x+None")]),
        ("outer_right_join", [("k1", "a+c"), ("k1", "b+c"), ("k3", "None+y")]),
        ("outer_join", [("k1", "a+c"), ("k1", "b+c"), ("k2", "x+None"), ("k3", "None+y")]),
    ],
)
def test_joins_pair_the_values_of_each_key_in_a_window(kind: str, expected: list[Any]) -> None:
    join_of(kind)
    assert results == expected


def test_join_windows_carry_the_key_and_whole_second_bounds() -> None:
    builder = Builder()
    left = builder.new_source(lambda: ["key1", "a"])  # heronpy's example uses lists
    right = builder.new_source(lambda: ["key1", "c"])
    left.join(right, WindowConfig.create_sliding_window(2, 1), lambda x, y: x + y).consume(
        lambda result: results.append(result)
    )
    clock = FakeClock(50.7)
    local = LocalPlan(builder, clock)
    local.spout("supplier-1")
    local.spout("supplier-2")
    clock.now = 51.9
    local.tick("join-1")
    assert results == [(KeyedWindow("key1", Window(49, 51)), "ac")]


def test_a_keyed_stage_refuses_elements_that_are_not_pairs() -> None:
    builder = Builder()
    builder.new_source(lambda: "lamb").reduce_by_key_and_window(
        WindowConfig.create_tumbling_window(1), max
    ).log()
    local = LocalPlan(builder)
    with pytest.raises(UserCodeError, match=r"'reducebykeyandwindow-1' takes \(key, value\) pairs"):
        local.spout("supplier-1")
