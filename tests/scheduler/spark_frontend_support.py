"""Helpers for the tests that submit to the spark cluster through the Storm facade's front ends
(``heron sparse``, ``StormSubmitter``): the logs of an application's containers on the
standalone workers, printed when the test fails, and the check that a kill left nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spark_support import processes_of, wait_for, znodes_naming

from heron_core.testing.spark import SparkStandaloneCluster


def container_logs(spark: SparkStandaloneCluster, app_name: str) -> dict[Path, str]:
    """The text of every log of the containers of application ``app_name`` (its name in the
    master, ``heron-<topology>``) under the workers' directory:
    ``<SPARK_WORKER_DIR>/<app id>/<executor>/containers/<K>/logs/*.log``."""
    work = spark.work_dir
    if work is None:
        return {}
    apps = spark.applications(app_name)
    logs = {}
    for app in apps["active"] + apps["completed"]:
        for path in sorted(work.glob(f"{app['id']}/*/containers/*/logs/*.log")):
            with contextlib.suppress(OSError):
                logs[path] = path.read_text(errors="replace")
    return logs


@contextlib.contextmanager
def containers_logged_on_failure(spark: SparkStandaloneCluster, app_name: str) -> Iterator[None]:
    """Print the containers' logs of application ``app_name`` (the last 4000 characters of
    each) when the block raises."""
    try:
        yield
    except BaseException:
        for path, text in container_logs(spark, app_name).items():
            print(f"===== {path} =====\n{text[-4000:]}")
        raise


def assert_nothing_left(
    spark: SparkStandaloneCluster, zk: dict[str, Any], name: str, ident: str
) -> None:
    """After a kill of topology ``name`` (id ``ident``): none of its processes runs, no znode
    under the test's root names it, and its application is FINISHED in the master."""
    assert processes_of(ident) == []
    assert znodes_naming(zk, name) == []
    wait_for(
        lambda: (
            [a["state"] for a in spark.applications(f"heron-{name}")["completed"]] == ["FINISHED"]
        ),
        "the application to be listed as FINISHED",
        timeout=60,
    )
    assert spark.applications(f"heron-{name}")["active"] == []


def ui_port(spark: SparkStandaloneCluster) -> int:
    """The port of the master's web UI (``spark.master.ui.port``), which the scheduler reads
    the master's state from before Spark starts."""
    return int(spark.web_url.rsplit(":", 1)[1])
