"""``heron submit spark`` fails fast, naming the fix, and leaves nothing behind: unreachable
master, no Java, PySpark missing, too few task slots, ZooKeeper unreachable, localfs state on a
cluster master, and workers whose Python cannot import heron_core."""

from __future__ import annotations

import re
import venv
from pathlib import Path

import pytest
from spark_support import (  # noqa: F401 - spark_run is a fixture
    SparkTopologyRun,
    spark_env,
    spark_run_fixture,
    submit_fails,
)

from heron_core.testing.spark import SparkStandaloneCluster, free_port

pytestmark = [pytest.mark.processes, pytest.mark.zookeeper]

NO_PYSPARK = """\
import sys


class _NoPySpark:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pyspark" or name.startswith("pyspark."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoPySpark)
"""


def test_an_unreachable_master_names_its_url(spark_run: SparkTopologyRun) -> None:
    url = f"spark://127.0.0.1:{free_port()}"
    error = submit_fails(spark_run, url, "heron.scheduler.spark.allow.unauthenticated=true")
    assert error.startswith(f"topology 'broken': cannot reach the Spark master {url} (127.0.0.1:")
    assert "heron.scheduler.spark.master" in error
    listed = spark_run.heron("list", "spark")
    assert listed.stdout == "no topologies on cluster 'spark'\n", listed.stderr


def test_no_java_names_java_home(spark_run: SparkTopologyRun, tmp_path: Path) -> None:
    env = spark_env(PATH=str(tmp_path / "empty-path"))
    env.pop("JAVA_HOME", None)
    error = submit_fails(spark_run, "local[2]", env=env)
    assert "no Java found" in error and "JAVA_HOME" in error
    error = submit_fails(spark_run, "local[2]", env=spark_env(JAVA_HOME=str(tmp_path / "nowhere")))
    assert f"JAVA_HOME={tmp_path / 'nowhere'} has no bin/java" in error


def test_pyspark_missing_names_the_extra(spark_run: SparkTopologyRun, tmp_path: Path) -> None:
    shim = tmp_path / "no-pyspark"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(NO_PYSPARK)
    error = submit_fails(spark_run, "local[2]", env=spark_env(PYTHONPATH=str(shim)))
    assert error.startswith("PySpark is not installed: pip install 'heron-storm[spark]'")


def test_too_few_slots_on_a_local_master(spark_run: SparkTopologyRun) -> None:
    error = submit_fails(spark_run, "local[1]")
    assert error == (
        "topology 'broken' needs 2 Spark task slots (one per container: the topology manager's "
        "and 1 stream manager's), the application has 1 (master local[1] runs 1 task thread): "
        "use local[2] or more (heron.scheduler.spark.master)"
    )


def test_too_few_slots_on_a_cluster(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun
) -> None:
    def applications() -> int:
        apps = spark.applications("heron-broken")
        return len(apps["active"]) + len(apps["completed"])

    started = applications()
    # spark.cores.max caps the slots: known from the config, before Spark starts.
    capped = submit_fails(
        spark_run,
        spark,
        "topology.stmgrs=2",
        "heron.scheduler.spark.conf.spark.cores.max=2",
    )
    assert capped.startswith("topology 'broken' needs 3 Spark task slots")
    assert "the application has 2 (spark.cores.max=2): raise spark.cores.max" in capped
    # Five containers on two 2-core workers: known from the master's state (its web UI's
    # /json/), before Spark starts.
    ui_port = spark.web_url.rsplit(":", 1)[1]
    short = submit_fails(
        spark_run,
        spark,
        "topology.stmgrs=4",
        f"heron.scheduler.spark.conf.spark.master.ui.port={ui_port}",
    )
    assert short == (
        "topology 'broken' needs 5 Spark task slots (one per container: the topology "
        "manager's and 4 stream managers'), the application has 4 (4 free cores on the Spark "
        "master's 2 ALIVE workers): raise spark.cores.max or the workers' cores "
        "(heron.scheduler.spark.conf.spark.cores.max), or lower topology.stmgrs"
    )
    assert applications() == started, "a Spark application started for a check without one"
    # Without the master's web UI (nothing serves its state on port 8080), the slots are
    # counted once the executors registered (within 20 s: a loaded machine starts them slowly).
    short = submit_fails(
        spark_run,
        spark,
        "topology.stmgrs=4",
        "heron.scheduler.spark.slots.timeout.secs=20",
    )
    assert short.startswith("topology 'broken' needs 5 Spark task slots")
    assert re.search(r"the application has [0-4] \(executors that registered within \d+ s\)", short)
    assert short.endswith(
        "raise spark.cores.max or the workers' cores "
        "(heron.scheduler.spark.conf.spark.cores.max), or lower topology.stmgrs"
    )
    assert applications() == started + 1


def test_zookeeper_unreachable_names_the_connection_string(spark_run: SparkTopologyRun) -> None:
    port = free_port()
    spark_run.zk = {**spark_run.zk, "heron.statemgr.connection.string": f"127.0.0.1:{port}"}
    error = submit_fails(spark_run, "local[2]")
    assert error.startswith(f"cannot connect to ZooKeeper at '127.0.0.1:{port}'")
    assert "heron.statemgr.connection.string" in error


def test_localfs_state_with_a_cluster_master_is_a_configuration_error(
    spark_run: SparkTopologyRun,
) -> None:
    error = submit_fails(spark_run, "spark://127.0.0.1:7077", "heron.class.state.manager=localfs")
    assert "the localfs state manager keeps state in files on this host" in error
    assert "heron.class.state.manager=zookeeper" in error


def test_workers_without_heron_core_fail_the_submit_with_the_fix(
    spark_run: SparkTopologyRun, tmp_path: Path
) -> None:
    bare = tmp_path / "bare-venv"
    venv.create(bare, with_pip=False)
    error = submit_fails(
        spark_run,
        "local[2]",
        f"heron.scheduler.spark.conf.spark.pyspark.python={bare / 'bin' / 'python'}",
    )
    assert "failed on Spark: ModuleNotFoundError: No module named 'heron_core'" in error
    assert "cannot import heron_core" in error and "spark.archives" in error
