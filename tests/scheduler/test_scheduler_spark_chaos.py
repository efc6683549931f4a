"""Containers on a real Spark standalone cluster survive kill -9 with acking on: of each daemon
kind in turn (a bolt instance, each stream manager, the topology manager, a metrics manager, the
spout instance; the time until acks flow again is printed), of a container's executor, then of
the Spark executor JVM hosting a container. Only the dead containers start again; every
sentence is acked and every word counted; the other containers keep their pids."""

from __future__ import annotations

import os
import signal
import time

import pytest
from spark_support import (  # noqa: F401 - spark_run is a fixture
    SparkTopologyRun,
    container_processes,
    hosting_jvm,
    processes_of,
    spark_run_fixture,
    topology_id,
    wait_for,
)
from spark_word_count import read_log

from heron_core.statemgr import create_state_manager
from heron_core.testing.spark import SparkStandaloneCluster

pytestmark = [pytest.mark.processes, pytest.mark.zookeeper]

SENTENCES = 3000


def _acked(run: SparkTopologyRun) -> set[int]:
    return {r["ack"] for r in read_log(run.out, "spout") if "ack" in r}


def _restarted(ident: str, container: int, old: dict[str, int]) -> bool:
    """Whether every process of ``container`` runs again, under a new executor."""
    now = container_processes(ident).get(container, {})
    return set(now) == set(old) and now["executor"] != old["executor"]


def _task_of(run: SparkTopologyRun, component: str) -> tuple[int, int]:
    """(container, task id) of the first instance of ``component`` in the physical plan."""
    with create_state_manager(run.zk, "spark") as state:
        plan = state.get_physical_plan("chaos")
    assert plan is not None
    containers = {s.id: s.container_id for s in plan.stmgrs}
    instance = min(
        (i for i in plan.instances if i.info.component_name == component),
        key=lambda i: i.info.task_id,
    )
    return containers[instance.stmgr_id], instance.info.task_id


def _kill_each_daemon_kind(run: SparkTopologyRun, ident: str) -> None:
    """kill -9 one daemon of each kind in turn; after each, acks flow again (the time it took
    is printed, not asserted)."""
    split, spout = _task_of(run, "split"), _task_of(run, "sentences")
    for kind, container, role in (
        ("bolt instance", split[0], f"instance-{split[1]}"),
        ("stmgr-1", 1, "stmgr"),
        ("stmgr-2", 2, "stmgr"),
        ("tmanager", 0, "tmanager"),
        ("metricsmgr-1", 1, "metricsmgr"),
        ("spout instance", spout[0], f"instance-{spout[1]}"),
    ):
        # the daemon may be starting again (a restart the previous kill caused): wait for it
        wait_for(
            lambda container=container, role=role: (
                role in container_processes(ident).get(container, {})
            ),
            f"the {kind} running (container {container}: {container_processes(ident)})",
            timeout=60,
        )
        pid = container_processes(ident)[container][role]
        acked = len(_acked(run))
        os.kill(pid, signal.SIGKILL)
        killed_at = time.monotonic()
        wait_for(
            lambda acked=acked: len(_acked(run)) >= min(acked + 30, SENTENCES),
            f"acks after kill -9 of the {kind}",
            timeout=120,
        )
        print(f"spark, {kind}: flowing again {time.monotonic() - killed_at:.1f} s after kill -9")
        wait_for(
            lambda container=container, role=role, pid=pid: (
                container_processes(ident).get(container, {}).get(role, pid) != pid
            ),
            f"a new {kind}",
        )


def test_killed_containers_start_again_alone_and_nothing_is_lost(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun
) -> None:
    submitted = spark_run.submit(
        "chaos",
        spark,
        "topology.stmgrs=2",
        "topology.message.timeout.secs=10",
        f"sparktest.sentences={SENTENCES}",
        "sparktest.pause=0.01",
    )
    assert submitted.returncode == 0, submitted.stderr
    ident = topology_id(submitted)
    before = container_processes(ident)
    assert sorted(before) == [0, 1, 2]
    wait_for(lambda: len(_acked(spark_run)) >= 100, "the first 100 acks")
    _kill_each_daemon_kind(spark_run, ident)
    before = container_processes(ident)

    # 1. kill -9 the executor of container 1: only container 1 starts again.
    os.kill(before[1]["executor"], signal.SIGKILL)
    wait_for(lambda: _restarted(ident, 1, before[1]), "container 1 to start again")
    after_first = container_processes(ident)
    for k in (0, 2):
        assert after_first[k] == before[k], f"container {k} was disturbed"

    # 2. kill -9 the Spark executor JVM hosting a container: prefer one without container 0,
    #    whose tmanager would wait for its stale location to expire.
    hosts = {k: hosting_jvm(after_first[k]["executor"]) for k in after_first}
    assert all(jvm is not None for jvm in hosts.values()), hosts
    by_pid = {jvm.pid: jvm for jvm in hosts.values() if jvm is not None}
    victim = min(by_pid.values(), key=lambda jvm: hosts[0] is not None and jvm.pid == hosts[0].pid)
    hit = sorted(k for k, jvm in hosts.items() if jvm is not None and jvm.pid == victim.pid)
    spared = sorted(set(after_first) - set(hit))
    assert spared, "every container was on one Spark executor"
    victim.kill()
    for k in hit:
        wait_for(
            lambda k=k: _restarted(ident, k, after_first[k]),
            f"container {k} to start again after its Spark executor was killed",
        )

    wait_for(lambda: len(_acked(spark_run)) >= SENTENCES, f"all {SENTENCES} sentences acked", 300)
    assert _acked(spark_run) == set(range(SENTENCES))
    counted = {(r["sid"], r["position"]) for r in read_log(spark_run.out, "count")}
    assert counted == {(sid, p) for sid in range(SENTENCES) for p in range(5)}
    final = container_processes(ident)
    for k in spared:
        assert final[k] == after_first[k], f"container {k} was disturbed by the JVM kill"

    killed = spark_run.heron("kill", "spark", "chaos")
    assert killed.returncode == 0, killed.stderr
    assert processes_of(ident) == []
