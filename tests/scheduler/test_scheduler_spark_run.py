"""The spark cluster end to end through the installed ``heron`` command: an exact word count on
an embedded ``local[2]`` master and on a real standalone cluster with two stream managers,
``heron list``, and ``heron kill`` leaving no process, no znode and a FINISHED application."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from spark_support import (  # noqa: F401 - spark_run is a fixture
    SparkTopologyRun,
    assert_exact,
    container_processes,
    processes_of,
    spark_run_fixture,
    topology_id,
    wait_all_acked,
    wait_for,
    znodes_naming,
)
from spark_word_count import read_log

from heron_core.network import KEYS_DIR, TopologyKeys
from heron_core.statemgr import create_state_manager
from heron_core.testing.attack import attack, daemon_ports
from heron_core.testing.spark import SparkStandaloneCluster

pytestmark = [pytest.mark.processes, pytest.mark.zookeeper]

SENTENCES = 300
EXACT = ("topology.message.timeout.secs=120", f"sparktest.sentences={SENTENCES}")


def _assert_killed(run: SparkTopologyRun, name: str, ident: str) -> None:
    killed = run.heron("kill", "spark", name)
    assert killed.returncode == 0, killed.stderr
    assert killed.stdout == f"killed topology {name!r} on 'spark'\n"
    assert processes_of(ident) == []
    assert znodes_naming(run.zk, name) == []
    listed = run.heron("list", "spark")
    assert listed.stdout == "no topologies on cluster 'spark'\n", listed.stderr


def _deactivate_and_activate(run: SparkTopologyRun, name: str) -> None:
    """``heron deactivate`` and ``heron activate`` reach the spout on its Spark container, and
    ``heron list`` shows the state in between."""

    def events() -> list[str]:
        return [r["event"] for r in read_log(run.out, "spout") if "event" in r]

    for verb, event, state in (
        ("deactivate", "deactivate", "paused"),
        ("activate", "activate", "running"),
    ):
        done = run.heron(verb, "spark", name)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"{verb}d topology {name!r} on 'spark'\n"
        wait_for(lambda event=event: events()[-1:] == [event], f"the spout's {event}()")
        listed = run.heron("list", "spark")
        assert listed.stdout.splitlines()[1].endswith(f" {state}"), listed.stdout
    assert events() == ["deactivate", "activate"]


def test_word_count_on_local_master_is_exact_and_kill_leaves_nothing(
    spark_run: SparkTopologyRun,
) -> None:
    submitted = spark_run.submit("wc", "local[2]", *EXACT)
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.startswith("submitted topology 'wc' (id wc-")
    ident = topology_id(submitted)
    # The submit returned once every container ran: both are up, the physical plan exists.
    containers = container_processes(ident)
    assert sorted(containers) == [0, 1]
    assert "tmanager" in containers[0] and "stmgr" in containers[1]
    listed = spark_run.heron("list", "spark")
    _, row = listed.stdout.splitlines()
    assert row.split()[0] == "wc" and row.endswith(" running")
    _attack_every_port(spark_run, "wc", containers, spark_run.home / "pwned")
    wait_all_acked(spark_run.out, SENTENCES)
    first = min(r["at"] for r in read_log(spark_run.out, "count"))
    print(f"local[2]: submit to first counted word {first - spark_run.submitted_at:.1f} s")
    assert_exact(spark_run.out, SENTENCES)
    _deactivate_and_activate(spark_run, "wc")
    restarted = spark_run.heron("restart", "spark", "wc", "--container-id", "1")
    assert restarted.returncode == 0, restarted.stderr
    assert restarted.stdout == "restarted topology 'wc' on 'spark' (container 1)\n"
    old = containers[1]["stmgr"]
    wait_for(lambda: not psutil.pid_exists(old), "the old stream manager of container 1 to end")
    after = container_processes(ident)
    assert after[1]["stmgr"] != old and after[0] == containers[0]
    # Each container unpacked the shipped code into its own directory under the task's cwd.
    work = spark_run.home / "topologies" / "spark" / "wc" / "containers"
    assert (work / "1" / "code" / "spark_word_count.py").is_file()
    assert (work / "1" / "logs" / "stmgr-1.log").is_file()
    _update(spark_run, "wc")
    _assert_killed(spark_run, "wc", ident)


def _update(run: SparkTopologyRun, name: str) -> None:
    """``heron update`` on Spark: a new parallelism that fits the application's task slots
    runs (the containers' jobs are submitted again with the new plans); one that needs more
    containers than the application has slots is refused and changes nothing."""
    done = run.heron("update", "spark", name, "--component-parallelism=count:3", "--wait-secs=1")
    assert done.returncode == 0, done.stderr
    assert "count: parallelism 2 -> 3" in done.stdout
    with create_state_manager(run.zk, "spark") as state:
        plan = state.get_physical_plan(name)
        assert plan is not None
        counts = [i for i in plan.instances if i.info.component_name == "count"]
        assert len(counts) == 3
        before = state.get_packing_plan(name)
    more = run.heron("update", "spark", name, "--container-number=2", "--wait-secs=0")
    assert more.returncode != 0 and "Traceback" not in more.stderr
    assert "needs 3 Spark task slots" in more.stderr, more.stderr
    with create_state_manager(run.zk, "spark") as state:
        assert state.get_packing_plan(name) == before


def test_word_count_on_a_standalone_cluster_is_exact_across_two_stream_managers(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun
) -> None:
    submitted = spark_run.submit("wc2", spark, "topology.stmgrs=2", *EXACT)
    assert submitted.returncode == 0, submitted.stderr
    ident = topology_id(submitted)
    assert [app["name"] for app in spark.applications()["active"]] == ["heron-wc2"]
    containers = container_processes(ident)
    assert sorted(containers) == [0, 1, 2]
    # The daemons run in directories of the Spark executors, with the code shipped by Spark.
    assert spark.work_dir is not None
    stmgr_cwd = Path(_cwd(containers[1]["stmgr"]))
    assert stmgr_cwd.is_relative_to(spark.work_dir)
    assert (stmgr_cwd / "code" / "spark_word_count.py").is_file()
    with create_state_manager(spark_run.zk, "spark") as state:
        plan = state.get_physical_plan("wc2")
    assert plan is not None
    assert sorted(s.id for s in plan.stmgrs) == ["stmgr-1", "stmgr-2"]
    assert {s.host_name for s in plan.stmgrs} == {"127.0.0.1"}  # SPARK_LOCAL_IP
    _attack_every_port(spark_run, "wc2", containers, spark_run.home / "pwned")
    wait_all_acked(spark_run.out, SENTENCES)
    assert_exact(spark_run.out, SENTENCES)
    _assert_killed(spark_run, "wc2", ident)
    wait_for(
        lambda: [a["state"] for a in spark.applications("heron-wc2")["completed"]] == ["FINISHED"],
        "the application to be listed as FINISHED",
        timeout=60,
    )
    assert spark.applications("heron-wc2")["active"] == []


def _attack_every_port(
    run: SparkTopologyRun, name: str, containers: dict[int, dict[str, int]], marker: Path
) -> None:
    """A process without the topology's key sends crafted pickles and forged control
    messages to every daemon port (`heron_core.testing.attack`): each daemon logs the refused
    handshakes and reads nothing (the exact counts checked afterwards show nothing was
    injected or lost, and the topology was not paused)."""
    with create_state_manager(run.zk, "spark") as state:
        targets = daemon_ports(state, name)
        plan = state.get_physical_plan(name)
    assert plan is not None
    public = TopologyKeys.load(run.home / "topologies" / "spark" / name / KEYS_DIR).public
    attack(targets, marker, [i.info.task_id for i in plan.instances], name, public)
    logs = [Path(_cwd(pid)) / "logs" for daemons in containers.values() for pid in daemons.values()]

    def all_refused() -> bool:
        text = "\n".join(p.read_text(errors="replace") for d in logs for p in d.glob("*.log"))
        return all(f":{t.port}): the peer did not complete the CURVE" in text for t in targets)

    wait_for(all_refused, "every daemon to log the refused handshakes")
    assert not marker.exists()


def _cwd(pid: int) -> str:
    return psutil.Process(pid).cwd()
