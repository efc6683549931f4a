"""Message timeouts: a tree not completed in time fails at its spout; resetTimeout keeps a
tree alive past the timeout."""

from __future__ import annotations

import pytest
from compat_components import Holder, TrackedSpout
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import Config, StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

WORDS = ["quick1", "hold1", "slow1", "quick2", "hold2"]
TIMEOUT_S = 3  # the slow tuples are held 5 ticks of 1 s, their timeout reset on each


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", TrackedSpout([[w] for w in WORDS], Fields("word"), events))
    builder.setBolt("holder", Holder()).shuffleGrouping("src")
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    conf = Config()
    conf.setMessageTimeoutSecs(TIMEOUT_S)
    return complete(tmp_path_factory.mktemp("timeouts"), topology, workers, conf)


def test_trees_not_completed_in_time_fail(run: Run) -> None:
    assert run.outcomes("src")["fail"] == [["hold1"], ["hold2"]]


def test_reset_timeout_keeps_a_tree_alive_past_the_timeout(run: Run) -> None:
    assert run.outcomes("src")["ack"] == [["quick1"], ["quick2"], ["slow1"]]
    assert sorted(run.tuples("holder")) == [["quick1"], ["quick2"], ["slow1"]]
