"""LocalCluster and StormSubmitter on the real process model."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_components import ErrorReportingBolt, EventSpout, TickCountingBolt

from heron_core.client import client_config, kill, list_topologies
from heron_core.errors import ConfigurationError, SchedulerError
from heron_core.statemgr import create_state_manager
from heron_core.testing.processes import isolated_home, wait_until
from heron_core.testing.processes import processes_mentioning as processes_under
from storm_compat import LocalCluster, StormSubmitter
from storm_compat.testing import TestWordCounter, TestWordSpout
from storm_compat.thrift import storm_thrift
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes


@pytest.fixture
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; afterwards no process may mention it, and its logs are printed if the
    test failed."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def numbers_to_a_sink(tmp_path: Path) -> tuple[TopologyBuilder, Path]:
    """A spout of numbers shuffled to a bolt counting ticks; both write to the returned
    events directory (``spout.log``, ``bolt.log``)."""
    events = tmp_path / "events"
    events.mkdir()
    builder = TopologyBuilder()
    builder.setSpout("numbers", EventSpout(str(events)))
    builder.setBolt("sink", TickCountingBolt(str(events))).shuffleGrouping("numbers")
    return builder, events


def test_deactivate_stops_next_tuple_until_activate(home: Path, tmp_path: Path) -> None:
    builder, events = numbers_to_a_sink(tmp_path)
    spout_log, bolt_log = events / "spout.log", events / "bolt.log"
    with LocalCluster(heron_home=home, keep_logs=True) as cluster:
        cluster.submitTopology("pausing", {}, builder.createTopology())
        wait_until(lambda: "emit" in lines(spout_log), "the first emit")

        cluster.deactivate("pausing")
        cluster.deactivate("pausing")  # already deactivated: not an error, as in Storm
        wait_until(lambda: "deactivate" in lines(spout_log), "the spout's deactivate()")
        ticks = len(lines(bolt_log))
        wait_until(lambda: len(lines(bolt_log)) >= ticks + 3, "three ticks while deactivated")
        cluster.activate("pausing")
        wait_until(lambda: "activate" in lines(spout_log), "the spout's activate()")
        wait_until(lambda: lines(spout_log)[-1] == "emit", "an emit after activate()")

        spout = lines(spout_log)
        paused = spout[spout.index("deactivate") + 1 : spout.index("activate")]
        assert paused == [] and spout.count("deactivate") == 1
        with pytest.raises(SchedulerError, match="no topology 'other' in this LocalCluster"):
            cluster.activate("other")
        cluster.killTopology("pausing")
        assert processes_under(home) == []
        with pytest.raises(SchedulerError, match="running: none"):
            cluster.killTopology("pausing")


def test_dump_stacks_has_every_process_print_its_threads_to_its_log(
    home: Path, tmp_path: Path
) -> None:
    # what completeTopology does before it reports a topology that did not complete in time
    builder, events = numbers_to_a_sink(tmp_path)
    with LocalCluster(heron_home=home, keep_logs=True) as cluster:
        cluster.submitTopology("stacks", {}, builder.createTopology())
        wait_until(lambda: "emit" in lines(events / "spout.log"), "the first emit")
        running = cluster.topology("stacks")
        # two executors, the tmanager, the stream manager, the metrics manager, two instances
        assert running.dump_stacks() >= 7
        logs = running.deployment.working_dir / "logs"
        for name in ("stmgr-1", "container_1_numbers_1", "container_1_sink_2"):
            wait_until(
                lambda name=name: "most recent call first" in (logs / f"{name}.log").read_text(),
                f"the stack dump in {name}.log",
            )
        cluster.killTopology("stacks")


def test_cluster_and_topology_info_and_kill_with_options(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events"
    events.mkdir()
    builder = TopologyBuilder()
    builder.setSpout("numbers", EventSpout(str(events)))
    builder.setBolt("sink", ErrorReportingBolt(), 2).shuffleGrouping("numbers")
    spout_log = events / "spout.log"
    with LocalCluster(heron_home=home, keep_logs=True) as cluster:
        conf = {"topology.workers": 2, "topology.worker.childopts": "-Xmx1g"}
        cluster.submitTopology("info", conf, builder.createTopology())
        note = "info: note: config key 'topology.worker.childopts' = '-Xmx1g' has no effect"
        assert note in capsys.readouterr().err
        wait_until(lambda: "emit" in lines(spout_log), "the first emit")

        (summary,) = cluster.getClusterInfo().topologies
        assert (summary.name, summary.status) == ("info", "ACTIVE")
        assert (summary.num_tasks, summary.num_executors, summary.num_workers) == (3, 3, 2)
        assert cluster.getClusterInfo().supervisors[0].num_used_workers == 2

        def errors() -> list[str]:
            found = cluster.getTopologyInfo(summary.id).errors.get("sink", [])
            return [e.error for e in found]

        wait_until(lambda: any("ValueError: bad input" in e for e in errors()), "the error")
        info = cluster.getTopologyInfo(summary.id)
        assert (info.id, info.name, info.status) == (summary.id, "info", "ACTIVE")
        tasks = sorted((e.component_id, e.executor_info.task_start) for e in info.executors)
        assert [c for c, _ in tasks] == ["numbers", "sink", "sink"]
        assert all(e.executor_info.task_start == e.executor_info.task_end for e in info.executors)
        assert all(e.host and e.port > 0 for e in info.executors)
        with pytest.raises(SchedulerError, match="no topology with id 'nope'"):
            cluster.getTopologyInfo("nope")

        cluster.deactivate("info")
        assert cluster.getClusterInfo().topologies[0].status == "INACTIVE"
        cluster.activate("info")
        wait_until(lambda: lines(spout_log)[-1] == "emit", "an emit after activate()")

        cluster.killTopologyWithOpts("info", storm_thrift().KillOptions(wait_secs=3))
        spout = lines(spout_log)
        assert spout[-1] == "deactivate", "the spout was not deactivated before the kill"
        assert cluster.getClusterInfo().topologies == []
        assert processes_under(home) == []


def test_rebalance_changes_the_parallelism_and_the_spout_emits_again(
    home: Path, tmp_path: Path
) -> None:
    events = tmp_path / "events"
    events.mkdir()
    builder = TopologyBuilder()
    builder.setSpout("numbers", EventSpout(str(events)))
    builder.setBolt("sink", TickCountingBolt(str(events))).fieldsGrouping("numbers", Fields("n"))
    spout_log = events / "spout.log"
    thrift = storm_thrift()
    with LocalCluster(heron_home=home, keep_logs=True) as cluster:
        cluster.submitTopology("scaled", {}, builder.createTopology())
        wait_until(lambda: "emit" in lines(spout_log), "the first emit")
        (summary,) = cluster.getClusterInfo().topologies
        assert (summary.num_tasks, summary.num_workers) == (2, 1)

        options = thrift.RebalanceOptions(wait_secs=1, num_workers=2, num_executors={"sink": 3})
        cluster.rebalance("scaled", options)
        (summary,) = cluster.getClusterInfo().topologies
        assert (summary.num_tasks, summary.num_workers, summary.status) == (4, 2, "ACTIVE")
        info = cluster.getTopologyInfo(summary.id)
        assert sorted(e.component_id for e in info.executors) == ["numbers", "sink", "sink", "sink"]
        spout = lines(spout_log)
        assert "deactivate" in spout, "the spout was not deactivated for the wait"
        emitted = len(lines(spout_log))
        wait_until(lambda: lines(spout_log)[emitted:].count("emit") >= 3, "emits after it")

        with pytest.raises(ConfigurationError, match="has no component 'nope'; its components"):
            cluster.rebalance("scaled", thrift.RebalanceOptions(num_executors={"nope": 2}))
        with pytest.raises(ConfigurationError, match="parallelism must be at least 1"):
            cluster.rebalance("scaled", thrift.RebalanceOptions(num_executors={"sink": 0}))
        with pytest.raises(SchedulerError, match="no topology 'other'"):
            cluster.rebalance("other", options)
        cluster.killTopology("scaled")
        assert processes_under(home) == []


def test_shutdown_kills_every_topology_and_removes_its_temporary_home() -> None:
    builder = TopologyBuilder()
    builder.setSpout("words", TestWordSpout(isDistributed=False), 3)
    builder.setBolt("count", TestWordCounter()).fieldsGrouping("words", Fields("word"))
    cluster = LocalCluster()
    with cluster:
        cluster.submitTopology("one", {}, builder.createTopology())
        cluster.submitTopology("two", {"topology.workers": 2}, builder.createTopology())
        with pytest.raises(SchedulerError, match="'one' already exists"):
            cluster.submitTopology("one", {}, builder.createTopology())
        wait_until(cluster.topology("two").is_running, "topology 'two' to run")
        assert processes_under(cluster.heron_home) != []
    assert not cluster.heron_home.exists()
    assert processes_under(cluster.heron_home) == []


SUBMIT = """
import sys
from storm_compat import StormSubmitter
from storm_compat.testing import TestWordCounter, TestWordSpout
from storm_compat.thrift import storm_thrift
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

builder = TopologyBuilder()
builder.setSpout("words", TestWordSpout())
builder.setBolt("count", TestWordCounter()).fieldsGrouping("words", Fields("word"))
StormSubmitter.submitTopology(sys.argv[1], {"storm_compat.cluster": "local"},
                              builder.createTopology())
"""


def test_storm_submitter_submits_a_topology_that_outlives_the_script(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "submit_wc.py"
    script.write_text(SUBMIT)
    env = {**os.environ, "HERON_HOME": str(home)}
    subprocess.run([sys.executable, str(script), "wc"], env=env, check=True, timeout=120)
    (info,) = list_topologies("local", heron_home=home)
    assert info.name == "wc"
    with create_state_manager(client_config("local", heron_home=home), "local") as state:
        wait_until(lambda: state.get_physical_plan("wc") is not None, "the physical plan")

    monkeypatch.setenv("HERON_HOME", str(home))
    builder = TopologyBuilder()
    builder.setSpout("words", TestWordSpout())
    with pytest.raises(SchedulerError, match="topology 'wc' already exists on cluster 'local'"):
        StormSubmitter.submitTopology("wc", None, builder.createTopology())

    kill("local", "wc", heron_home=home)
    assert processes_under(home) == []
    assert list_topologies("local", heron_home=home) == []
