"""Event-time windows: Storm's WaterMarkEventGenerator, the watermark trigger policies and
the watermark eviction policies; late tuples."""

from __future__ import annotations

from typing import Any

import pytest
from window_fakes import Clock, windower

from heron_core.windowing import Windower


def feed(windows: Windower[Any], stamps: list[int], stream: str = "s") -> list[int]:
    """Add each timestamp as its own item; return the late ones."""
    return [ts for ts in stamps if not windows.add(ts, ts, stream)]


def test_a_tumbling_event_time_window_fires_at_multiples_of_its_length_on_watermarks() -> None:
    windows, seen, clock = windower(
        length_ms=1000, slide_ms=1000, event_time=True, watermark_interval_ms=1000
    )
    assert feed(windows, [100, 900, 1000, 1100, 1900, 2100]) == []
    clock.now = 999
    windows.poll()
    assert seen.windows == []  # no watermark before its interval
    clock.now = 1000
    windows.poll()  # watermark 2100: the windows ending at 1000 and 2000 are complete
    assert seen.contents() == [[100, 900, 1000], [1100, 1900]]
    assert [(w.start_ts, w.end_ts) for w in seen.windows] == [(0, 1000), (1000, 2000)]
    assert seen.windows[1].expired == [100, 900, 1000]
    # a tuple before the watermark is late; one at it is not
    assert feed(windows, [2099, 2100]) == [2099]
    assert windows.size == 4  # 1100 and 1900 (in the last window), 2100 twice


def test_empty_event_time_windows_are_skipped_to_the_next_aligned_end() -> None:
    windows, seen, clock = windower(length_ms=1000, slide_ms=1000, event_time=True)
    feed(windows, [1500, 7250, 9000])
    clock.now = 1000
    windows.poll()
    assert [(w.end_ts, w.items) for w in seen.windows] == [
        (2000, [1500]),
        (8000, [7250]),
        (9000, [9000]),
    ]


def test_a_sliding_event_time_window_holds_the_timestamps_of_its_length() -> None:
    windows, seen, clock = windower(length_ms=3000, slide_ms=1000, event_time=True)
    stamps = list(range(500, 6000, 500))
    feed(windows, stamps)
    clock.now = 1000
    windows.poll()  # watermark 5500
    assert [w.end_ts for w in seen.windows] == [1000, 2000, 3000, 4000, 5000]
    for window in seen.windows:
        assert window.items == [t for t in stamps if window.end_ts - 3000 < t <= window.end_ts]


def test_the_lag_holds_the_watermark_back_and_takes_tuples_out_of_order() -> None:
    windows, seen, clock = windower(length_ms=1000, slide_ms=1000, event_time=True, lag_ms=500)
    feed(windows, [100, 1200, 800, 2000])
    clock.now = 1000
    windows.poll()  # watermark 2000 - 500 = 1500: only the window ending at 1000 is complete
    assert seen.contents() == [[100, 800]]
    assert feed(windows, [1400]) == [1400]  # before the watermark of 1500: late
    assert feed(windows, [1600, 3000]) == []
    clock.now = 2000
    windows.poll()  # watermark 2500
    assert seen.contents() == [[100, 800], [1200, 2000, 1600]]


def test_without_a_lag_a_tuple_behind_a_later_one_misses_its_window_as_in_storm() -> None:
    """Storm's watermark eviction stops scanning at the first tuple past the window's end
    (plus the lag): an out-of-order tuple queued behind it is not in the window, and expires
    at the next one. `withLag` is what makes room for out-of-order tuples."""
    windows, seen, clock = windower(length_ms=1000, slide_ms=1000, event_time=True)
    feed(windows, [100, 1200, 800, 2500])
    clock.now = 1000
    windows.poll()  # watermark 2500
    assert seen.contents() == [[100], [1200]]
    assert seen.windows[1].expired == [100, 800]


def test_the_watermark_waits_for_every_input_stream_and_follows_the_slowest() -> None:
    windows, seen, clock = windower(
        length_ms=1000, slide_ms=1000, event_time=True, streams=("a", "b")
    )
    feed(windows, [100, 1500, 2500], "a")
    clock.now = 1000
    windows.poll()
    assert seen.windows == []  # nothing from "b" yet
    feed(windows, [1200], "b")
    clock.now = 2000
    windows.poll()  # watermark min(2500, 1200) = 1200
    assert seen.contents() == [[100]]
    assert feed(windows, [1100], "a") == [1100]  # late for every stream


def test_an_event_time_count_window_slides_by_timestamps_the_watermark_passed() -> None:
    windows, seen, clock = windower(length_count=3, slide_count=2, event_time=True)
    feed(windows, [10, 20, 30, 40, 50])
    clock.now = 1000
    windows.poll()  # watermark 50: a window at every 2nd timestamp, ending at 20 and 40
    assert seen.contents() == [[10, 20], [20, 30, 40]]
    assert [(w.start_ts, w.end_ts) for w in seen.windows] == [(None, 20), (None, 40)]
    assert seen.windows[1].new == [30, 40]
    assert seen.windows[1].expired == [10]
    feed(windows, [60])
    clock.now = 2000
    windows.poll()
    assert seen.contents()[-1] == [40, 50, 60]


def test_an_event_time_count_window_sliding_by_time_holds_the_last_count_before_its_end() -> None:
    windows, seen, clock = windower(length_count=2, slide_ms=1000, event_time=True)
    feed(windows, [100, 500, 900, 1500])
    clock.now = 1000
    windows.poll()
    assert seen.contents() == [[500, 900]]
    assert seen.expired == [100]
    assert seen.windows[0].end_ts == 1000


def test_an_event_time_duration_window_sliding_by_count() -> None:
    windows, seen, clock = windower(length_ms=1000, slide_count=2, event_time=True)
    feed(windows, [100, 600, 1200, 1900])
    clock.now = 1000
    windows.poll()
    assert seen.contents() == [[100, 600], [1200, 1900]]
    assert [(w.start_ts, w.end_ts) for w in seen.windows] == [(-400, 600), (900, 1900)]
    assert seen.expired == [100, 600]


def test_nothing_expires_before_the_first_watermark() -> None:
    windows, seen, _ = windower(length_ms=10, slide_ms=10, event_time=True)
    feed(windows, list(range(1, 301)))  # three compactions, no watermark yet
    assert seen.expired == [] and windows.size == 300


def test_an_event_time_window_needs_timestamps() -> None:
    windows, _, _ = windower(length_ms=10, slide_ms=10, event_time=True)
    with pytest.raises(ValueError, match="timestamp"):
        windows.add("x")


def test_watermarks_are_due_every_interval_and_one_is_issued_for_missed_ones() -> None:
    windows, seen, clock = windower(
        Clock(5),
        length_ms=100,
        slide_ms=100,
        event_time=True,
        watermark_interval_ms=250,
    )
    assert windows.due() == 255
    feed(windows, [50, 150])
    clock.now = 1000
    windows.poll()
    assert windows.due() == 1005  # one watermark (150) for the three intervals missed
    assert seen.contents() == [[50]]  # the window ending at 200 waits for a later watermark
