"""BaseBasicBolt: emits anchored to the input, input acked after execute, FailedException
fails it (ReportedFailedException also reports it)."""

from __future__ import annotations

import pytest
from compat_components import Exclaimer, Judge, TrackedSpout
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

WORDS = ["ok", "fail", "report", "bad"]


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", TrackedSpout([[w] for w in WORDS], Fields("word"), events))
    builder.setBolt("exclaim", Exclaimer(), 2).shuffleGrouping("src")
    builder.setBolt("judge", Judge()).shuffleGrouping("exclaim")
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return complete(tmp_path_factory.mktemp("basic"), topology, workers)


def test_the_input_is_acked_after_execute_returns(run: Run) -> None:
    assert run.outcomes("src")["ack"] == [["ok"]]


def test_failed_exceptions_fail_the_input_and_emits_are_anchored_to_it(run: Run) -> None:
    # "bad!" is failed downstream: its tree fails only because the emit was anchored
    assert run.outcomes("src")["fail"] == [["bad"], ["fail"], ["report"]]
    assert sorted(run.tuples("exclaim")) == [["bad!"], ["ok!"]]


def test_reported_failed_exception_is_reported(run: Run) -> None:
    reported = [line for line in run.logs.splitlines() if "reported error:" in line]
    assert len(reported) == 1
    assert "component 'exclaim'" in reported[0] and "reporting report" in reported[0]
