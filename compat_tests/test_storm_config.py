"""Config: workers, tasks, max task parallelism, user keys, debug, and acker executors 0."""

from __future__ import annotations

import pytest
from compat_components import Introspector, NeverAcks, TrackedSpout
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import Config, StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

INPUT = [[f"w{n}"] for n in range(6)]


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", TrackedSpout(INPUT, Fields("word"), events))
    builder.setBolt("tasks", Introspector(), 1).setNumTasks(4).shuffleGrouping("src")
    builder.setBolt("capped", Introspector(), 3).setMaxTaskParallelism(1).shuffleGrouping("src")
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    conf = Config()
    conf.setDebug(True)
    conf["compat.setting"] = "from the topology config"
    return complete(tmp_path_factory.mktemp("config"), topology, workers, conf)


def test_num_tasks_and_max_task_parallelism_set_the_tasks(run: Run) -> None:
    assert {len(c["tasks"]) for _, c, _ in run.tuples("tasks")} == {4}
    assert {len(c["tasks"]) for _, c, _ in run.tuples("capped")} == {1}


def test_workers_are_containers(run: Run, workers: int) -> None:
    executors = {conf["parent"] for _, _, conf in run.tuples("tasks") + run.tuples("capped")}
    assert len(executors) == workers


def test_topology_config_reaches_prepare_and_debug_logs_emits(run: Run) -> None:
    confs = [conf for _, _, conf in run.tuples("tasks")]
    assert {(c["setting"], c["debug"]) for c in confs} == {("from the topology config", True)}
    assert "component 'src', task" in run.logs and "Emitting: default ['w0']" in run.logs


def unacked(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", TrackedSpout(INPUT, Fields("word"), events))
    builder.setBolt("sink", NeverAcks()).shuffleGrouping("src")
    return builder.createTopology()


def test_zero_ackers_acks_every_spout_tuple_at_once(
    workers: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    conf = Config()
    conf.setNumAckers(0)
    run = complete(tmp_path_factory.mktemp("ackers"), unacked, workers, conf)
    assert run.outcomes("src") == {"ack": sorted(INPUT), "fail": []}
