"""``StormSubmitter.submitTopology`` onto the spark cluster: a conf naming the cluster
(``Config.CLUSTER``) and its settings (the master, ZooKeeper) runs a Storm-API word count
exactly on a real standalone cluster, across two stream managers, until ``heron kill``, which
leaves no process, no znode and a FINISHED application; a bad cluster setting in the conf fails
the submit at once, naming the topology and the key."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from spark_frontend_support import assert_nothing_left, containers_logged_on_failure
from spark_frontend_support import ui_port as master_ui_port
from spark_support import (  # noqa: F401 - spark_run is a fixture
    COMMAND_TIMEOUT,
    QUICK_JVMS,
    SparkTopologyRun,
    assert_exact,
    container_processes,
    spark_env,
    spark_run_fixture,
    wait_for,
)
from spark_word_count import read_log
from storm_spark_word_count import build_topology

from heron_core.errors import ConfigurationError, HeronError, StateManagerError
from heron_core.testing.spark import SparkStandaloneCluster, free_port
from storm_compat import Config, StormSubmitter

SCRIPT = Path(__file__).with_name("storm_spark_word_count.py")
CORPUS = Path(__file__).with_name("spark_word_count.py")
SENTENCES = 300


@pytest.mark.processes
@pytest.mark.zookeeper
def test_storm_submitter_runs_a_word_count_on_the_cluster_until_killed(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun, tmp_path: Path
) -> None:
    code = tmp_path / "storm"
    code.mkdir()
    for source in (SCRIPT, CORPUS):
        shutil.copy(source, code / source.name)
    conf: dict[str, Any] = {
        Config.CLUSTER: "spark",
        **spark.heron_config(),
        "heron.statemgr.connection.string": spark_run.zk["heron.statemgr.connection.string"],
        "heron.statemgr.root.path": spark_run.zk["heron.statemgr.root.path"],
        "heron.scheduler.spark.conf.spark.ui.enabled": False,
        "heron.scheduler.spark.conf.spark.master.ui.port": master_ui_port(spark),
        **QUICK_JVMS,
        "sparktest.out": str(spark_run.out),
        "sparktest.sentences": SENTENCES,
    }
    with containers_logged_on_failure(spark, "heron-wc"):
        done = subprocess.run(
            [sys.executable, str(code / SCRIPT.name), "wc", json.dumps(conf)],
            env=spark_env(HERON_HOME=str(spark_run.home)),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        # submitTopology returned once every container ran; the topology outlives the script.
        assert [app["name"] for app in spark.applications()["active"]] == ["heron-wc"]
        listed = spark_run.heron("list", "spark")
        _, row = listed.stdout.splitlines()
        name, ident, *_ = row.split()
        assert name == "wc" and row.endswith(" running")
        assert sorted(container_processes(ident)) == [0, 1, 2]
        wait_for(
            lambda: (
                len({r["ack"] for r in read_log(spark_run.out, "spout") if "ack" in r}) >= SENTENCES
            ),
            f"all {SENTENCES} sentences acked",
        )
        assert_exact(spark_run.out, SENTENCES)
        killed = spark_run.heron("kill", "spark", "wc")
        assert killed.returncode == 0, killed.stderr
        assert_nothing_left(spark, spark_run.zk, "wc", ident)


@pytest.mark.parametrize(
    ("conf", "error", "message"),
    [
        (
            {Config.CLUSTER: "sprak"},
            ConfigurationError,
            "topology 'wc': conf['storm_compat.cluster']: unknown cluster 'sprak': ",
        ),
        (
            {Config.CLUSTER: ["spark"]},
            ConfigurationError,
            "topology 'wc': conf['storm_compat.cluster']: expected the name of a heron cluster",
        ),
        (
            {Config.CLUSTER: "spark", "heron.scheduler.spark.master": "spark://:7077"},
            ConfigurationError,
            "topology 'wc', the conf of StormSubmitter.submitTopology (cluster 'spark'): "
            "heron.scheduler.spark.master: expected local[N] (N >= 1), local[*], "
            "spark://host:port, or another master URL, got 'spark://:7077'",
        ),
        (
            {Config.CLUSTER: "spark", "heron.scheduler.spark.mastr": "spark://m:7077"},
            ConfigurationError,
            "topology 'wc', the conf of StormSubmitter.submitTopology (cluster 'spark'): "
            "unknown config key 'heron.scheduler.spark.mastr'",
        ),
        (
            {Config.CLUSTER: "spark", "heron.scheduler.spark.conf.spark.cores.max": "two"},
            ConfigurationError,
            "topology 'wc', the conf of StormSubmitter.submitTopology (cluster 'spark'): "
            "heron.scheduler.spark.conf.spark.cores.max: expected a positive integer, got 'two'",
        ),
        (
            {
                Config.CLUSTER: "spark",
                "heron.scheduler.spark.master": "spark://m:7077",
                "heron.class.state.manager": "localfs",
            },
            ConfigurationError,
            "topology 'wc', the conf of StormSubmitter.submitTopology (cluster 'spark'): the "
            "localfs state manager keeps state in files on this host",
        ),
        (
            {
                Config.CLUSTER: "spark",
                "heron.statemgr.connection.string": "127.0.0.1:{free port}",
                "heron.statemgr.zookeeper.connection.timeout.ms": 1000,
            },
            StateManagerError,
            "topology 'wc', the conf of StormSubmitter.submitTopology (cluster 'spark'): cannot "
            "connect to ZooKeeper at '127.0.0.1:",
        ),
    ],
    ids=[
        "unknown-cluster",
        "cluster-not-a-name",
        "bad-master",
        "misspelt-key",
        "bad-spark-property",
        "localfs-with-a-cluster-master",
        "zookeeper-unreachable",
    ],
)
def test_a_bad_spark_conf_fails_naming_the_topology_and_the_key(
    conf: dict[str, Any],
    error: type[HeronError],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))
    conf = {
        k: v.replace("{free port}", str(free_port())) if isinstance(v, str) else v
        for k, v in conf.items()
    }
    with pytest.raises(error) as raised:
        StormSubmitter.submitTopology("wc", conf, build_topology())
    assert type(raised.value) is error
    assert str(raised.value).startswith(message), raised.value
    assert not (tmp_path / "home" / "topologies" / "spark" / "wc").exists()
