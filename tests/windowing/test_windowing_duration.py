"""Duration windows in processing time: Storm's TimeTriggerPolicy and TimeEvictionPolicy,
with the trigger's deadlines as reference times (a late poll does not move windows)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from window_fakes import windower


def test_a_tumbling_duration_window_fires_every_interval_with_the_tuples_of_it() -> None:
    windows, seen, clock = windower(length_ms=1000, slide_ms=1000)
    assert windows.due() == 1000
    for clock.now, item in [(100, "a"), (500, "b"), (999, "c")]:
        windows.add(item)
    clock.now = 999
    windows.poll()
    assert seen.windows == []
    clock.now = 1000
    windows.poll()  # the window ends at 999: the millisecond of the deadline is the next's
    windows.add("d")
    clock.now = 1500
    windows.add("e")
    clock.now = 2000
    windows.poll()
    assert seen.contents() == [["a", "b", "c"], ["d", "e"]]
    assert [(w.start_ts, w.end_ts) for w in seen.windows] == [(-1, 999), (999, 1999)]
    assert [w.expired for w in seen.windows] == [[], ["a", "b", "c"]]
    assert seen.expired == ["a", "b", "c"]
    assert windows.due() == 3000


def test_an_empty_interval_fires_no_window_and_forgets_what_expired_in_it() -> None:
    windows, seen, clock = windower(length_ms=1000, slide_ms=1000)
    clock.now = 10
    windows.add("a")
    clock.now = 1000
    windows.poll()
    clock.now = 2000
    windows.poll()  # "a" expires; the window is empty: no activation
    clock.now = 2100
    windows.add("b")
    clock.now = 3000
    windows.poll()
    assert seen.contents() == [["a"], ["b"]]
    assert seen.expired == ["a"]
    assert seen.windows[1].expired == []  # as in Storm: reported only to the expiry callback
    assert seen.windows[1].new == ["b"]


def test_a_sliding_duration_window_holds_the_tuples_of_the_last_length() -> None:
    windows, seen, clock = windower(length_ms=3000, slide_ms=1000)
    for clock.now in range(0, 5000, 250):
        windows.poll()
        windows.add(clock.now)
    clock.now = 5000
    windows.poll()
    for window in seen.windows:
        assert window.end_ts is not None and window.start_ts == window.end_ts - 3000
        assert window.items == [
            t for t in range(0, 5000, 250) if window.start_ts < t <= window.end_ts
        ]
    assert [w.end_ts for w in seen.windows] == [999, 1999, 2999, 3999, 4999]
    assert seen.windows[3].new == [3000, 3250, 3500, 3750]
    assert seen.windows[3].expired == [0, 250, 500, 750]


def test_a_late_poll_fires_each_missed_window_with_its_own_end() -> None:
    windows, seen, clock = windower(length_ms=1000, slide_ms=1000)
    for clock.now in (100, 1100, 2100, 3100):
        windows.add(clock.now)  # nobody polls: every deadline is missed
    windows.poll()
    assert seen.contents() == [[100], [1100], [2100]]
    assert [w.end_ts for w in seen.windows] == [999, 1999, 2999]
    assert seen.expired == [100, 1100]
    assert windows.due() == 4000


def test_a_duration_window_sliding_by_count_holds_the_last_length_at_each_tuple() -> None:
    windows, seen, clock = windower(length_ms=1000, slide_count=1)
    for clock.now in (0, 400, 900, 1200, 2500):
        windows.add(clock.now)
    assert seen.contents() == [[0], [0, 400], [0, 400, 900], [400, 900, 1200], [2500]]
    assert [w.end_ts for w in seen.windows] == [0, 400, 900, 1200, 2500]
    assert windows.due() is None  # nothing fires by time


def test_a_count_window_sliding_by_duration_holds_the_last_count_at_each_interval() -> None:
    windows, seen, clock = windower(length_count=2, slide_ms=1000)
    for clock.now in (100, 200, 300, 1100):
        windows.poll()
        windows.add(clock.now)
    clock.now = 2000
    windows.poll()
    assert seen.contents() == [[200, 300], [300, 1100]]
    assert [(w.start_ts, w.end_ts) for w in seen.windows] == [(None, 999), (None, 1999)]
    assert seen.expired == [100, 200]


@settings(max_examples=60, deadline=None)
@given(
    slide=st.integers(1, 500),
    slides_per_window=st.integers(1, 4),
    steps=st.lists(st.tuples(st.integers(0, 700), st.booleans()), max_size=80),
)
def test_every_tuple_is_in_length_over_slide_windows_and_expires_once_after_them(
    slide: int, slides_per_window: int, steps: list[tuple[int, bool]]
) -> None:
    """Tuples arrive after random gaps, polls come late or not at all: each tuple whose
    windows have all fired is in exactly length / slide of them (the windows ending at the
    deadlines after its arrival), and expires once, after the last."""
    length = slide * slides_per_window
    windows, seen, clock = windower(length_ms=length, slide_ms=slide)
    arrivals = []
    for gap, poll in steps:
        clock.now += gap
        if poll:
            windows.poll()
        windows.add(clock.now)
        arrivals.append(clock.now)
    clock.now += length + slide
    windows.poll()
    for t in arrivals:
        holding = [w for w in seen.windows if t in w.items]
        assert len(holding) == slides_per_window
        assert all(w.end_ts is not None and 0 <= w.end_ts - t < length for w in holding)
    # one expiry for each tuple out of the last scan's window (the scan at the last deadline,
    # whether its window held tuples or not), none for the others
    last_end = clock.now // slide * slide - 1
    assert sorted(seen.expired) == sorted(t for t in arrivals if last_end - t >= length)
