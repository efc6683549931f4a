"""``heron sparse`` onto the spark cluster: a ``sparse quickstart`` project whose
``config.json`` has an environment naming the cluster (``"cluster": "spark"``) with the
cluster's settings in its ``"options"`` (the master, ZooKeeper) is submitted with
``heron sparse submit -e spark`` to a real standalone cluster, across two stream managers;
its word counts arrive in the containers' logs on the workers; ``list``, ``tail`` and ``kill``
find it through the same environment, and the kill leaves no process, no znode and a FINISHED
application. A bad environment fails naming the topology, the environment and the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from spark_frontend_support import (
    assert_nothing_left,
    container_logs,
    containers_logged_on_failure,
    ui_port,
)
from spark_support import (  # noqa: F401 - spark_run is a fixture
    COMMAND_TIMEOUT,
    HERON,
    QUICK_JVMS,
    SparkTopologyRun,
    container_processes,
    spark_env,
    spark_run_fixture,
    topology_id,
    wait_for,
)

from heron_core.testing.spark import SparkStandaloneCluster, free_port

sys.path.insert(0, str(Path(__file__).parents[1] / "streamparse"))  # the quickstart helpers
from sparse_support import counts_are_consistent, logged_totals, quickstart


def sparse(
    project: Path, *args: str, timeout: float = COMMAND_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run ``heron sparse <args>`` in ``project``, Spark binding loopback."""
    return subprocess.run(
        [HERON, "sparse", *args],
        cwd=project,
        env=spark_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def add_environment(project: Path, name: str, environment: dict[str, Any]) -> None:
    """Add environment ``name`` to the project's ``config.json``, as a user edits it."""
    path = project / "config.json"
    config = json.loads(path.read_text())
    config["envs"][name] = environment
    path.write_text(json.dumps(config, indent=4))


def count_totals(spark: SparkStandaloneCluster) -> dict[str, list[int]]:
    """The quickstart WordCountBolt's "counted [N] words" totals, by log, in the logs of the
    containers of ``heron-wordcount`` on the workers."""
    logs = container_logs(spark, "heron-wordcount")
    return logged_totals(
        {path.stem: text for path, text in logs.items() if "count_bolt" in path.name}
    )


@pytest.mark.processes
@pytest.mark.zookeeper
def test_sparse_submit_to_a_spark_environment_counts_until_killed(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun, tmp_path: Path
) -> None:
    project = quickstart(tmp_path)
    zk = spark_run.zk
    add_environment(
        project,
        "spark",
        {
            "cluster": "spark",
            "workers": [],
            "options": {
                "topology.workers": 2,
                **spark.heron_config(),
                "heron.statemgr.connection.string": zk["heron.statemgr.connection.string"],
                "heron.statemgr.root.path": zk["heron.statemgr.root.path"],
                "heron.scheduler.spark.conf.spark.ui.enabled": False,
                "heron.scheduler.spark.conf.spark.master.ui.port": ui_port(spark),
                **QUICK_JVMS,
            },
        },
    )
    home = ("--heron-home", str(spark_run.home))
    with containers_logged_on_failure(spark, "heron-wordcount"):
        submitted = sparse(project, "submit", "-e", "spark", *home)
        assert submitted.returncode == 0, submitted.stderr
        assert submitted.stdout.startswith("submitted topology 'wordcount' (id wordcount-")
        assert submitted.stdout.endswith(" to 'spark'\n")
        ident = topology_id(submitted)
        assert [app["name"] for app in spark.applications()["active"]] == ["heron-wordcount"]
        assert sorted(container_processes(ident)) == [0, 1, 2]
        listed = sparse(project, "list", "-e", "spark", *home)
        _, row = listed.stdout.splitlines()
        assert row.split()[:2] == ["wordcount", ident] and row.endswith(" running")
        wait_for(
            lambda: sum(len(t) for t in count_totals(spark).values()) >= 2,
            "two 'counted [N] words' lines of the count bolts",
        )
        totals = count_totals(spark)
        assert counts_are_consistent(totals, tasks=2), totals
        tail = sparse(project, "tail", "-e", "spark", *home)
        assert tail.returncode == 0, tail.stderr
        assert "containers/<K>/logs/ of the Spark executor's directory" in tail.stderr
        killed = sparse(project, "kill", "-e", "spark", *home)
        assert killed.returncode == 0, killed.stderr
        assert killed.stdout == "killed topology 'wordcount' on 'spark'\n"
        assert_nothing_left(spark, zk, "wordcount", ident)
        listed = sparse(project, "list", "-e", "spark", *home)
        assert listed.stdout == "no topologies on cluster 'spark'\n", listed.stderr


ENVIRONMENTS: dict[str, Any] = {
    "sprak": {"cluster": "sprak"},
    "number": {"cluster": 5},
    "listed": {"cluster": "spark", "options": ["heron.scheduler.spark.master=spark://m"]},
    "badmaster": {"cluster": "spark", "options": {"heron.scheduler.spark.master": "spark://"}},
    "misspelt": {"cluster": "spark", "options": {"heron.scheduler.spark.mastr": "spark://m"}},
    "nozk": {
        "cluster": "spark",
        "options": {
            "heron.statemgr.connection.string": "127.0.0.1:{free port}",
            "heron.statemgr.zookeeper.connection.timeout.ms": 1000,
        },
    },
}


@pytest.mark.processes
def test_a_bad_spark_environment_fails_naming_the_topology_environment_and_field(
    tmp_path: Path,
) -> None:
    project = quickstart(tmp_path)
    port = str(free_port())
    for name, environment in ENVIRONMENTS.items():
        add_environment(
            project, name, json.loads(json.dumps(environment).replace("{free port}", port))
        )
    home = ("--heron-home", str(tmp_path / "home"))
    config = project / "config.json"

    def error(*args: str) -> str:
        done = sparse(project, *args, *home)
        assert done.returncode == 2, done.stdout
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith("heron: error: "), done.stderr
        return line.removeprefix("heron: error: ")

    assert error("submit", "-e", "sprak").startswith(
        f"{config}: environment 'sprak', \"cluster\": unknown cluster 'sprak': "
    )
    assert error("list", "-e", "number") == (
        f"{config}: environment 'number', \"cluster\": expected the name of a heron cluster "
        "(local, localzk, spark, or a <name>.yaml of --config-path), got 5"
    )
    assert error("kill", "-e", "listed").startswith(
        f"{config}: environment 'listed', \"options\": expected an object of config keys"
    )
    assert error("submit", "-e", "badmaster") == (
        "topology 'wordcount', environment 'badmaster' of config.json (cluster 'spark'): "
        "heron.scheduler.spark.master: expected local[N] (N >= 1), local[*], "
        "spark://host:port, or another master URL, got 'spark://'"
    )
    assert error("submit", "-e", "misspelt").startswith(
        "topology 'wordcount', environment 'misspelt' of config.json (cluster 'spark'): "
        "unknown config key 'heron.scheduler.spark.mastr'"
    )
    unreachable = (
        "environment 'nozk' of config.json (cluster 'spark'): cannot connect to ZooKeeper at "
        f"'127.0.0.1:{port}' (heron.statemgr.connection.string)"
    )
    assert error("list", "-e", "nozk").startswith(unreachable)
    assert error("kill", "-e", "nozk").startswith(f"topology 'wordcount', {unreachable}")
    assert error("submit", "-e", "nozk").startswith(f"topology 'wordcount', {unreachable}")
    assert not (tmp_path / "home" / "topologies" / "spark").exists()
