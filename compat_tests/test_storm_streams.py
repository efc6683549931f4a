"""Streams: named and default streams, subscriptions per stream, emit's task ids."""

from __future__ import annotations

from typing import Any

import pytest
from compat_components import Router, Tagger
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import StormTopology
from storm_compat.testing import FixedTupleSpout, MockedSources
from storm_compat.topology import OutputFieldsDeclarer, TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes


class TwoStreamSpout(FixedTupleSpout):
    """Declares "default" (word, n) and "side" (note); mocked in the test."""

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "n"))
        declarer.declareStream("side", Fields("note"))


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", TwoStreamSpout([]), 2)
    builder.setBolt("router", Router(), 2).shuffleGrouping("src")
    builder.setBolt("evens", Tagger(["word", "n"])).shuffleGrouping("router", "even")
    builder.setBolt("odds", Tagger(["word", "n"]), 2).shuffleGrouping("router", "odd")
    builder.setBolt("both", Tagger(["word", "n"])).shuffleGrouping(
        "router", "even"
    ).shuffleGrouping("router", "odd")
    builder.setBolt("side", Tagger(["note"])).shuffleGrouping("src", "side")
    return builder.createTopology()


MAIN: list[list[Any]] = [["w", n] for n in range(8)]
SIDE = [["first"], ["second"]]


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    mocked = MockedSources()
    mocked.addMockData("src", *MAIN)
    mocked.addMockData("src", "side", *SIDE)
    return complete(tmp_path_factory.mktemp("streams"), topology, workers, mocked=mocked)


def test_mocked_spout_emits_on_both_of_its_streams(run: Run) -> None:
    assert sorted(run.tuples("src")) == MAIN
    assert sorted(run.tuples("src", "side")) == sorted(SIDE)


def test_bolts_get_only_the_streams_they_subscribe_to(run: Run) -> None:
    assert sorted(run.tuples("router", "even")) == [v for v in MAIN if v[1] % 2 == 0]
    assert sorted(run.tuples("router", "odd")) == [v for v in MAIN if v[1] % 2 == 1]
    assert run.tuples("router") == []  # nothing on the default stream
    assert sorted(v[2:] for v in run.tuples("evens")) == [v for v in MAIN if v[1] % 2 == 0]
    assert sorted(v[2:] for v in run.tuples("odds")) == [v for v in MAIN if v[1] % 2 == 1]
    assert sorted(v[2:] for v in run.tuples("both")) == MAIN
    assert sorted(v[2:] for v in run.tuples("side")) == sorted(SIDE)


def test_emit_returns_the_ids_of_the_receiving_tasks(run: Run) -> None:
    returned = {n: ids for n, ids in run.tuples("router", "ids")}
    receivers = {n: task for task, _, _, n in run.tuples("evens") + run.tuples("odds")}
    both = {n: task for task, _, _, n in run.tuples("both")}
    assert sorted(returned) == list(range(8))
    for n, ids in returned.items():
        # the subscriber of its stream, "both", and the capturing bolt of completeTopology
        assert len(ids) == 3 and {receivers[n], both[n]} < set(ids)
