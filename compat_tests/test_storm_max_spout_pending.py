"""Max spout pending: a spout task never has more un-acked tuples in flight than the limit."""

from __future__ import annotations

from typing import Any

import pytest
from compat_components import Tagger, TrackedSpout
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import Config, StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

INPUT = [[f"w{n}"] for n in range(10)]


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("by_conf", TrackedSpout(INPUT, Fields("word"), events))
    builder.setSpout("by_declarer", TrackedSpout(INPUT, Fields("word"), events)).setMaxSpoutPending(
        1
    )
    builder.setBolt("sink", Tagger(["word"]), 2).shuffleGrouping("by_conf").shuffleGrouping(
        "by_declarer"
    )
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    conf = Config()
    conf.setMaxSpoutPending(3)
    return complete(tmp_path_factory.mktemp("pending"), topology, workers, conf)


def most_in_flight(events: list[dict[str, Any]]) -> int:
    in_flight = peak = 0
    for event in events:
        if event["event"] == "emit":
            in_flight += 1
            peak = max(peak, in_flight)
        elif event["event"] in ("ack", "fail"):
            in_flight -= 1
    return peak


@pytest.mark.parametrize(("spout", "limit"), [("by_conf", 3), ("by_declarer", 1)])
def test_in_flight_tuples_reach_but_never_pass_the_limit(run: Run, spout: str, limit: int) -> None:
    assert run.outcomes(spout) == {"ack": sorted(INPUT), "fail": []}
    assert most_in_flight(run.events(spout)) == limit
