"""Storm's ``TopologyContext.registerMetric`` (every metric class of
``org.apache.storm.metric.api``) and ``OutputCollector.reportError`` on the real process model:
the values and the errors reach the topology manager."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from metric_components import MetricsBolt

from heron_core.client._tmanager import TManagerClient
from heron_core.proto import tmanager_pb2
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import isolated_home
from storm_compat import Config
from storm_compat.testing import FixedTupleSpout
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

HERE = Path(__file__).resolve().parent
NUMBERS = 40


@pytest.fixture(scope="module", name="run")
def run_fixture(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TopologyRun]:
    root = tmp_path_factory.mktemp("storm-metrics")
    code = root / "code"
    code.mkdir()
    (code / "metric_components.py").write_text((HERE / "metric_components.py").read_text())
    builder = TopologyBuilder()
    builder.setSpout("numbers", FixedTupleSpout([[n] for n in range(NUMBERS)], Fields("n")))
    builder.setBolt("metrics", MetricsBolt(), 2).shuffleGrouping("numbers")
    plan = builder.createTopology().to_logical_plan("storm-metrics", Config())
    failures = request.session.testsfailed
    with (
        isolated_home(root, lambda: request.session.testsfailed > failures) as home,
        TopologyRun(plan, heron_home=home, code_root=code) as run,
    ):
        yield run


def values(run: TopologyRun, name: str) -> list[float]:
    """``name``'s all-time value on each task of "metrics" that has it."""
    return [
        float(d.value)
        for m in run.metrics()
        if m.publisher.component_name == "metrics"
        for d in m.metrics
        if d.name == name
    ]


def wait_for_sum(run: TopologyRun, name: str, expected: float) -> None:
    run.wait_until(lambda: sum(values(run, name)) == expected, f"{name} summing to {expected}")


def test_count_metrics(run: TopologyRun) -> None:
    wait_for_sum(run, "count", NUMBERS)
    wait_for_sum(run, "parity/even", NUMBERS // 2)
    wait_for_sum(run, "parity/odd", NUMBERS // 2)


def test_reduced_metrics_with_the_mean_reducer(run: TopologyRun) -> None:
    wait_for_sum(run, "count", NUMBERS)
    for name in ("mean", "reduced", "means/even", "means/odd"):
        found = values(run, name)
        assert found and all(0 <= v <= NUMBERS - 1 for v in found), (name, found)


def published(run: TopologyRun, name: str) -> list[float]:
    """Every value of ``name`` "metrics" published, bucket by bucket: the file sink's lines (the
    tmanager keeps only the newest value of a gauge, and a combined metric's later buckets
    fall back to its identity)."""
    found = []
    for path in (run.working_dir / "metrics").glob("metrics-*.json*"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["component"] == "metrics" and name in record["metrics"]:
                found.append(float(record["metrics"][name]))
    return found


def test_combined_and_assignable_metrics_and_a_plain_imetric(run: TopologyRun) -> None:
    wait_for_sum(run, "seen", NUMBERS)  # gauges: each task's newest value
    run.wait_until(
        lambda: max(published(run, "peak"), default=None) == NUMBERS - 1,
        f"a bucket of 'peak' at {NUMBERS - 1} in the file sink",
    )
    assert all(0 <= v < NUMBERS for v in published(run, "peak"))
    assert all(0 <= v < NUMBERS for v in values(run, "last"))


def test_report_error_reaches_the_exception_log(run: TopologyRun) -> None:
    def reported() -> list[tmanager_pb2.TmanagerExceptionLog]:
        client = TManagerClient(run.state, run.name)
        try:
            answer = client.ask(tmanager_pb2.ExceptionLogRequest(component_name="metrics"))
        finally:
            client.close()
        if not isinstance(answer, tmanager_pb2.ExceptionLogResponse):
            return []
        return list(answer.exceptions)

    run.wait_until(lambda: sum(e.count for e in reported()) == NUMBERS // 10, "4 errors")
    for entry in reported():
        assert entry.logging.startswith("ValueError: round number ")
        assert "self.collector.reportError(exc)" not in entry.stacktrace  # the raise, not us
        assert "raise ValueError" in entry.stacktrace
