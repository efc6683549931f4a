"""Windowed bolts end to end (``BaseWindowedBolt`` through ``Testing.completeTopology``):
a sliding count window and a tumbling duration window, with acking on, in one topology.

As in Storm, a window's tuples are acked when they expire from it: the tumbling duration
window expires every tuple at the window after its own (time goes on without input), while
the sliding count window only expires tuples as later ones arrive, so its last window's
tuples are never acked and time out.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from compat_components import TrackedSpout
from compat_support import Run, complete
from window_components import WindowSummer

from storm_compat import StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.topology.base import BaseWindowedBolt
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

Count = BaseWindowedBolt.Count
Duration = BaseWindowedBolt.Duration

COUNTED = 10
TIMED = 30
TIMEOUT_S = 4


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout(
        "counted", TrackedSpout([[n] for n in range(1, COUNTED + 1)], Fields("n"), events)
    )
    builder.setSpout("timed", TrackedSpout([[n] for n in range(1, TIMED + 1)], Fields("n"), events))
    sliding = WindowSummer().withWindow(Count(4), Count(2))
    builder.setBolt("sliding", sliding).globalGrouping("counted")
    builder.setBolt("tumbling", WindowSummer().withTumblingWindow(Duration.of(300))).globalGrouping(
        "timed"
    )
    return builder.createTopology()


def outcomes(acked: Iterable[int], failed: Iterable[int]) -> dict[str, list[list[int]]]:
    """``Run.outcomes`` of a spout whose tuples ``[n]`` were acked or failed as given."""
    return {
        "ack": sorted(([n] for n in acked), key=repr),
        "fail": sorted(([n] for n in failed), key=repr),
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    conf = {"topology.message.timeout.secs": TIMEOUT_S}
    return complete(tmp_path_factory.mktemp("windowing"), topology, 1, conf)


def test_a_sliding_count_window_fires_every_two_tuples_and_acks_what_expires(run: Run) -> None:
    windows = run.tuples("sliding")
    assert [w[:4] for w in windows] == [
        [3, [1, 2], [1, 2], []],
        [10, [1, 2, 3, 4], [3, 4], []],
        [18, [3, 4, 5, 6], [5, 6], [1, 2]],
        [26, [5, 6, 7, 8], [7, 8], [3, 4]],
        [34, [7, 8, 9, 10], [9, 10], [5, 6]],
    ]
    assert all(start is None and end > 0 for *_, start, end in windows)
    # the last window's tuples never expire: they time out, as in Storm
    assert run.outcomes("counted") == outcomes(acked=range(1, 7), failed=range(7, 11))


def test_a_tumbling_duration_window_holds_each_tuple_once_and_acks_every_one(run: Run) -> None:
    windows = run.tuples("tumbling")
    assert windows, run.logs
    seen = [n for _, window, *_ in windows for n in window]
    assert sorted(seen) == list(range(1, TIMED + 1))
    previous: tuple[int, list[int]] | None = None
    for total, window, new, expired, start, end in windows:
        assert total == sum(window) and new == window and end - start == 300
        # the previous window's tuples expire at the next interval; an interval without
        # tuples fires no window, and what expired in it is not reported again (as in Storm)
        follows = previous is not None and previous[0] == start
        assert expired == (previous[1] if follows and previous else [])
        previous = (end, window)
    assert run.outcomes("timed") == outcomes(acked=range(1, TIMED + 1), failed=())
