"""Count windows in processing time: Storm's CountTriggerPolicy and CountEvictionPolicy."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from window_fakes import windower

from heron_core.windowing._manager import COMPACT_EVERY


def test_a_sliding_count_window_fires_every_slide_from_the_first_tuple() -> None:
    windows, seen, _ = windower(length_count=5, slide_count=2)
    for n in range(1, 11):
        windows.add(n)
    # the first window fires with the 2nd tuple, holding what came so far (fewer than 5)
    assert seen.contents() == [
        [1, 2],
        [1, 2, 3, 4],
        [2, 3, 4, 5, 6],
        [4, 5, 6, 7, 8],
        [6, 7, 8, 9, 10],
    ]
    assert [w.new for w in seen.windows] == [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]
    assert [w.expired for w in seen.windows] == [[], [], [1], [2, 3], [4, 5]]
    assert seen.expired == [1, 2, 3, 4, 5]
    assert all(w.start_ts is None and w.end_ts == 0 for w in seen.windows)


def test_a_tumbling_count_window_holds_each_tuple_once_and_expires_it_at_the_next() -> None:
    windows, seen, _ = windower(length_count=3, slide_count=3)
    for n in range(1, 8):
        windows.add(n)
    assert seen.contents() == [[1, 2, 3], [4, 5, 6]]
    assert [w.new for w in seen.windows] == [[1, 2, 3], [4, 5, 6]]
    assert [w.expired for w in seen.windows] == [[], [1, 2, 3]]
    assert seen.expired == [1, 2, 3]  # 4..7 are still in the window (unacked)
    assert windows.size == 4


def test_a_count_window_without_a_slide_fires_on_every_tuple() -> None:
    windows, seen, _ = windower(length_count=3, slide_count=1)
    for n in range(1, 5):
        windows.add(n)
    assert seen.contents() == [[1], [1, 2], [1, 2, 3], [2, 3, 4]]
    assert [w.new for w in seen.windows] == [[1], [2], [3], [4]]


def test_events_past_the_length_expire_every_100_additions_before_the_window_fires() -> None:
    windows, seen, _ = windower(length_count=3, slide_count=200)
    for n in range(1, COMPACT_EVERY):
        windows.add(n)
    assert seen.expired == []
    windows.add(COMPACT_EVERY)  # the 100th addition compacts: all but the last 3 expire
    assert seen.expired == list(range(1, COMPACT_EVERY - 2))
    assert windows.size == 3
    for n in range(COMPACT_EVERY + 1, 201):
        windows.add(n)
    assert seen.contents() == [[198, 199, 200]]
    # getExpired holds everything expired since the previous window, compactions included
    assert seen.windows[0].expired == list(range(1, 198))
    assert seen.expired == list(range(1, 198))


@settings(max_examples=60, deadline=None)
@given(
    length=st.integers(1, 12),
    slide=st.integers(1, 12),
    n=st.integers(0, 250),
)
def test_count_windows_match_storms_model_and_expire_every_tuple_once(
    length: int, slide: int, n: int
) -> None:
    """Window k (fired by tuple t = k * slide) holds tuples max(1, t - length + 1)..t; its new
    tuples are those not in window k - 1; every tuple expires once, after its last window,
    and is never in a window again."""
    slide = min(slide, length)
    windows, seen, _ = windower(length_count=length, slide_count=slide)
    for item in range(1, n + 1):
        windows.add(item)
    triggers = list(range(slide, n + 1, slide))
    model = [list(range(max(1, t - length + 1), t + 1)) for t in triggers]
    assert seen.contents() == model
    previous: list[int] = []
    for window in seen.windows:
        assert window.new == [i for i in window.items if i not in previous]
        previous = window.items
    assert len(seen.expired) == len(set(seen.expired))
    assert seen.expired == sorted(seen.expired)
    # every tuple older than the last `length` is expired by the last window or a compaction
    last = triggers[-1] if triggers else 0
    assert set(seen.expired) >= set(range(1, last - length + 1))
    assert not set(seen.expired) & set(range(n - length + 1, n + 1))
    for k, window in enumerate(seen.windows):
        later = {i for w in seen.windows[k:] for i in w.items}
        assert not set(window.expired) & later
    if length % slide == 0:  # once steady, each tuple is in exactly length / slide windows
        for item in range(1, last - length + 2):
            assert sum(item in w.items for w in seen.windows) == length // slide
