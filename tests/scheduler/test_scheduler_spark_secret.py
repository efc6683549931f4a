"""Spark keeps the topology's secret: an outsider with a Spark RPC client gets nothing from an
application, and its copies go at ``heron kill``.

The outsider (`spark_outsider`: a bare JVM with Spark's classes, no application, no secret)
asks the driver's ``BlockManagerMaster`` where the broadcasts are and fetches them from the
driver's block manager, where the container package (the topology's code and CURVE key pair)
is a broadcast. Against an application with Spark's authentication (the default: ``local[N]``
makes its secret, the test cluster's applications take the cluster's from
``heron.scheduler.spark.auth.secret.file``) every request is refused. CONTROLS: the same
outsider against an application run with the opt-out key (``local[2]`` with
``spark.authenticate=false``, and an open cluster without a secret) takes the key pair out of
the package; and Spark's file server, where the package used to go (``addFile``), hands a file
to the outsider even from an authenticated application, which is why the package no longer
goes there.

Also here: the submits that are refused, each naming the fix (a cluster master without a
secret file, a secret file others may read, a master with another secret, an application
without authentication on an authenticated master, and an authenticated one on an open
master); the cluster's secret appears on no command line, in no log, znode or container
process; and after ``heron kill`` no copy of the package is left on the workers or in the
driver's directories (the janitor's work), the containers' logs kept.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from kazoo.client import KazooClient
from spark_outsider import outsider_fetch
from spark_support import (  # noqa: F401 - spark_run is a fixture
    SparkTopologyRun,
    container_processes,
    processes_of,
    spark_env,
    spark_run_fixture,
    submit_fails,
    topology_id,
    wait_for,
)

from heron_core.network import KEYS_DIR, free_port
from heron_core.scheduler._spark_conf import ALLOW_UNAUTHENTICATED_KEY, SECRET_FILE_KEY
from heron_core.scheduler._spark_janitor import LOCK_NAME
from heron_core.testing.processes import processes_mentioning
from heron_core.testing.spark import (
    QUICK_START_JAVA_OPTIONS,
    SparkClusterError,
    SparkStandaloneCluster,
    spark_home,
)

pytestmark = [pytest.mark.processes, pytest.mark.zookeeper]

SENTENCES = 50
OPT_OUT = (f"{ALLOW_UNAUTHENTICATED_KEY}=true",)
NO_AUTH = (*OPT_OUT, "heron.scheduler.spark.conf.spark.authenticate=false")
WARNING = "runs on Spark WITHOUT protection of its container package"


@pytest.fixture(scope="module")
def open_cluster() -> Iterator[SparkStandaloneCluster]:
    """A standalone cluster WITHOUT authentication (a master and one 2-core worker), for the
    controls: any process that reaches it may use it."""
    cluster = SparkStandaloneCluster(
        workers=1, cores=2, memory="2g", java_options=QUICK_START_JAVA_OPTIONS, authenticate=False
    )
    try:
        cluster.start()
    except SparkClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def open_spark(
    open_cluster: SparkStandaloneCluster, request: pytest.FixtureRequest
) -> Iterator[SparkStandaloneCluster]:
    """`open_cluster`, idle after the test (as the ``spark`` fixture leaves the session's)."""
    failures = request.session.testsfailed
    yield open_cluster
    survivors = open_cluster.wait_idle()
    if request.session.testsfailed > failures or survivors:
        print(f"--- open Spark cluster logs ---\n{open_cluster.log_text()}")
    assert not survivors, f"container processes outlived the test: {[p.pid for p in survivors]}"


# ------------------------------------------------------------------------------ helpers


def _working_dir(run: SparkTopologyRun, name: str) -> Path:
    return run.home / "topologies" / "spark" / name


def _secret_key(run: SparkTopologyRun, name: str) -> str:
    """The base64 of the topology's secret key file, as the outsider reports keys it finds."""
    (path,) = (_working_dir(run, name) / KEYS_DIR).glob("*.key_secret")
    return base64.b64encode(path.read_bytes()).decode()


def _scheduler_log(run: SparkTopologyRun, name: str) -> str:
    return (_working_dir(run, name) / "logs" / "scheduler.log").read_text(errors="replace")


def _driver(run: SparkTopologyRun, name: str) -> tuple[str, int]:
    """The driver's host and RPC port, from the scheduler's log (as its operator reads it)."""
    found = re.search(r"driver spark://([^:]+):(\d+)", _scheduler_log(run, name))
    assert found, _scheduler_log(run, name)
    return found.group(1), int(found.group(2))


def _submit(
    run: SparkTopologyRun, name: str, master: str | SparkStandaloneCluster, *properties: str
) -> tuple[str, int, Path]:
    """Submit ``name`` with its driver's block manager on a port the test knows (what an
    attacker's port scan finds) and its scratch directory (``spark.local.dir``) in the
    test's; return the topology id, that port and that directory."""
    block_port = free_port()
    scratch = run.home.parent / f"driver-{name}"
    scratch.mkdir()
    submitted = run.submit(
        name,
        master,
        f"sparktest.sentences={SENTENCES}",
        f"heron.scheduler.spark.conf.spark.driver.blockManager.port={block_port}",
        f"heron.scheduler.spark.conf.spark.local.dir={scratch}",
        *properties,
    )
    assert submitted.returncode == 0, submitted.stderr
    return topology_id(submitted), block_port, scratch


def _kill(run: SparkTopologyRun, name: str, ident: str) -> None:
    killed = run.heron("kill", "spark", name)
    assert killed.returncode == 0, killed.stderr
    assert processes_of(ident) == []


def _refused(report: dict[str, Any]) -> None:
    """The outsider got nothing: its RPC and every block fetch were refused."""
    assert report["rpc"] == "refused", report
    assert report["fetched"] == [] and report["secret_keys"] == [], report
    assert len(report["errors"]) > 1, report


def _driver_jvm(ident: str) -> psutil.Process:
    """The driver's JVM: the child of the topology's scheduler service that runs ``java``."""
    services = [p for p in processes_of(ident) if "heron_core.scheduler" in p.cmdline()]
    (jvm,) = [c for p in services for c in p.children() if c.name() == "java"]
    return jvm


def _znode_data(zk: dict[str, Any]) -> bytes:
    """The data of every znode under the test's root, concatenated."""
    client = KazooClient(hosts=zk["heron.statemgr.connection.string"])
    client.start(timeout=30)
    try:
        data, stack = b"", [zk["heron.statemgr.root.path"]]
        while stack:
            path = stack.pop()
            with contextlib.suppress(Exception):
                value, _ = client.get(path)
                data += value or b""
                stack.extend(f"{path}/{child}" for child in client.get_children(path))
        return data
    finally:
        client.stop()
        client.close()


def _package_copies(work: Path, app: str) -> list[Path]:
    """The unpacked code and key pairs of ``app``'s containers in the workers' directory."""
    return [
        path
        for container in work.glob(f"{app}/*/containers/*")
        for path in (container / "code", container / "keys")
        if path.exists()
    ]


# ------------------------------------------------------------------------------ local[N]


def test_an_outsider_gets_nothing_from_a_local_application_and_the_key_without_auth(
    spark_run: SparkTopologyRun,
) -> None:
    ident, block_port, scratch = _submit(spark_run, "guarded", "local[2]")
    host, rpc_port = _driver(spark_run, "guarded")
    assert WARNING not in _scheduler_log(spark_run, "guarded")
    _refused(outsider_fetch(host, rpc_port, block_port))
    assert any(scratch.iterdir()), "the driver keeps nothing in spark.local.dir"
    _kill(spark_run, "guarded", ident)
    assert list(scratch.iterdir()) == []  # the driver's copies of the broadcast went with it

    # CONTROL: the same outsider against an application without authentication.
    ident, block_port, scratch = _submit(spark_run, "open", "local[2]", *NO_AUTH)
    host, rpc_port = _driver(spark_run, "open")
    assert WARNING in _scheduler_log(spark_run, "open")
    report = outsider_fetch(host, rpc_port, block_port)
    assert report["rpc"] == "accepted" and report["fetched"], report
    assert report["secret_keys"] == [_secret_key(spark_run, "open")], report
    _kill(spark_run, "open", ident)


# ------------------------------------------------------------------------------ standalone


def test_an_outsider_gets_nothing_from_the_authenticated_cluster_and_kill_leaves_no_copy(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun
) -> None:
    assert spark.secret_file is not None and spark.work_dir and spark.local_dir
    secret = spark.secret_file.read_text().strip()
    ident, block_port, scratch = _submit(spark_run, "guarded", spark, "topology.stmgrs=2")
    host, rpc_port = _driver(spark_run, "guarded")
    _refused(outsider_fetch(host, rpc_port, block_port))

    # The cluster's secret is on no command line, in no log, znode or container process.
    assert secret not in " ".join(_driver_jvm(ident).cmdline())
    assert secret not in _scheduler_log(spark_run, "guarded")
    assert secret.encode() not in _znode_data(spark_run.zk)
    containers = container_processes(ident)
    assert sorted(containers) == [0, 1, 2]
    for daemons in containers.values():
        for pid in daemons.values():
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            assert b"_SPARK_AUTH_SECRET" not in environ and secret.encode() not in environ
            assert secret not in " ".join(psutil.Process(pid).cmdline())
    executor_dir = Path(psutil.Process(containers[1]["stmgr"]).cwd()).parent.parent
    assert executor_dir.stat().st_mode & 0o777 == 0o700
    assert (executor_dir / LOCK_NAME).exists()  # its janitor runs

    (app,) = [a["id"] for a in spark.applications("heron-guarded")["active"]]
    assert _package_copies(spark.work_dir, app)
    _kill(spark_run, "guarded", ident)
    assert list(scratch.iterdir()) == []  # the driver's copies of the broadcast
    wait_for(
        lambda: _package_copies(spark.work_dir, app) == [],  # type: ignore[arg-type]
        "the janitors to remove the containers' code and keys from the executors' directories",
        timeout=120,
    )
    assert list(spark.work_dir.glob(f"{app}/*/containers/*/logs/stmgr-*.log"))
    wait_for(
        lambda: list(spark.local_dir.rglob("broadcast_*")) == [],  # type: ignore[union-attr]
        "the workers to remove the executors' copies of the broadcast",
        timeout=120,
    )


def test_the_opt_out_runs_on_an_open_cluster_warns_and_an_outsider_takes_the_key(
    open_spark: SparkStandaloneCluster, spark_run: SparkTopologyRun
) -> None:
    # CONTROL of the test above: the same outsider, an application without a secret.
    ident, block_port, _ = _submit(spark_run, "open", open_spark, *OPT_OUT)
    assert WARNING in _scheduler_log(spark_run, "open")
    host, rpc_port = _driver(spark_run, "open")
    report = outsider_fetch(host, rpc_port, block_port)
    assert report["rpc"] == "accepted" and report["fetched"], report
    assert report["secret_keys"] == [_secret_key(spark_run, "open")], report
    _kill(spark_run, "open", ident)


_ADD_FILE_DRIVER = """
import os, sys, time
from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway

master, secret_file, shipped, port = sys.argv[1:5]
public = SparkConf(loadDefaults=False).setAll([
    ("spark.master", master), ("spark.app.name", "add-file"), ("spark.ui.enabled", "false"),
    ("spark.cores.max", "1"), ("spark.executor.memory", "512m"), ("spark.driver.port", port),
    ("spark.authenticate", "true"), ("spark.network.crypto.enabled", "true"),
])
gateway = launch_gateway(public)
conf = SparkConf(loadDefaults=False, _jvm=gateway.jvm).setAll(public.getAll())
conf.set("spark.authenticate.secret", open(secret_file).read().strip())
sc = SparkContext(conf=conf, gateway=gateway)
sc.addFile(shipped)
print("ready", flush=True)
sys.stdin.read()
sc.stop()
"""


def test_spark_file_server_hands_files_to_an_outsider_even_with_authentication(
    spark: SparkStandaloneCluster, tmp_path: Path
) -> None:
    # Why the package is a broadcast: an authenticated application's addFile is served to a
    # client without the secret.
    assert spark.secret_file is not None
    shipped = tmp_path / "shipped.bin"
    shipped.write_bytes(b"what addFile ships")
    script = tmp_path / "add_file_driver.py"
    script.write_text(textwrap.dedent(_ADD_FILE_DRIVER))
    port = free_port()
    env = spark_env(SPARK_HOME=str(spark_home()), PYSPARK_PYTHON=sys.executable)
    argv = [spark.master_url, str(spark.secret_file), str(shipped), str(port)]
    with subprocess.Popen(
        [sys.executable, str(script), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        start_new_session=True,
    ) as driver:
        try:
            assert driver.stdout is not None and driver.stdout.readline() == "ready\n"
            report = outsider_fetch("127.0.0.1", port, 0, files=("shipped.bin",))
            assert report["rpc"] == "refused", report  # its RPC needs the secret ...
            fetched = base64.b64decode(report["files"]["shipped.bin"])
            assert fetched == b"what addFile ships", report  # ... its file server does not
            assert driver.stdin is not None
            driver.stdin.close()  # the driver stops its application
            driver.wait(timeout=120)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(driver.pid, signal.SIGKILL)  # its JVM with it
            driver.wait()


# ------------------------------------------------------------------------------ the janitor


def test_the_janitor_removes_the_unpacked_package_once_the_executor_has_exited(
    tmp_path: Path,
) -> None:
    executor = subprocess.Popen(["sleep", "600"])  # stands for an executor's JVM
    directory = tmp_path / "executor"
    container = directory / "containers" / "1"
    for part in ("code", "keys", "logs"):
        (container / part).mkdir(parents=True)
    (container / "keys" / "topology.key_secret").write_text("secret")
    started = repr(psutil.Process(executor.pid).create_time())
    argv = [sys.executable, "-m", "heron_core.scheduler._spark_janitor", "--directory"]
    argv += [str(directory), "--pid", str(executor.pid), "--started", started]
    try:
        for _ in range(2):  # the first detaches, the second finds the directory taken
            assert subprocess.run(argv, timeout=60, check=False).returncode == 0
        janitors = processes_mentioning(directory)
        assert len(janitors) == 1, janitors
        time.sleep(1.0)  # it polls twice a second: the executor still runs, nothing goes
        assert (container / "keys" / "topology.key_secret").exists()
        executor.kill()
        executor.wait()
        wait_for(
            lambda: not (container / "keys").exists() and not (container / "code").exists(),
            "the janitor to remove the code and keys",
            timeout=30,
        )
        assert (container / "logs").is_dir()
        wait_for(lambda: processes_mentioning(directory) == [], "the janitor to exit", 30)
    finally:
        executor.kill()
        executor.wait()
        for janitor in processes_mentioning(directory):
            with contextlib.suppress(psutil.NoSuchProcess):
                janitor.kill()


# ------------------------------------------------------------------------------ refusals


def test_a_cluster_master_without_a_secret_file_is_refused_naming_the_fix(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun
) -> None:
    error = submit_fails(spark_run, spark.master_url)
    assert error.startswith("topology 'broken': Spark would hand the container package")
    assert f"has no {SECRET_FILE_KEY}" in error
    assert "--properties-file" in error and "spark.authenticate=true" in error
    assert f"{ALLOW_UNAUTHENTICATED_KEY}=true" in error


def test_a_secret_file_others_may_read_is_refused_naming_the_key_and_path(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun, tmp_path: Path
) -> None:
    assert spark.secret_file is not None
    secret = spark.secret_file.read_text().strip()
    shared = tmp_path / "shared-secret"
    shared.write_text(secret + "\n")
    shared.chmod(0o640)
    error = submit_fails(spark_run, spark.master_url, f"{SECRET_FILE_KEY}={shared}")
    assert f"{SECRET_FILE_KEY}: {shared} holds the Spark cluster's secret" in error
    assert "mode 0640" in error and f"chmod 600 {shared}" in error
    assert secret not in error


def test_a_master_with_another_secret_refuses_the_application_within_seconds(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun, tmp_path: Path
) -> None:
    other = tmp_path / "other-secret"
    other.write_text("a-secret-the-cluster-does-not-have\n")
    other.chmod(0o600)
    started = time.monotonic()
    error = submit_fails(spark_run, spark.master_url, f"{SECRET_FILE_KEY}={other}")
    assert time.monotonic() - started < 45  # Spark's own registration gives up after 60 s
    assert error.startswith(f"topology 'broken': the Spark master {spark.master_url} refused")
    assert f"another secret than {SECRET_FILE_KEY} ({other})" in error
    assert "--properties-file" in error


def test_an_application_without_authentication_is_refused_by_the_cluster_naming_the_key(
    spark: SparkStandaloneCluster, spark_run: SparkTopologyRun
) -> None:
    error = submit_fails(spark_run, spark.master_url, *OPT_OUT)
    assert error.startswith(f"topology 'broken': the Spark master {spark.master_url} refused")
    assert "the master requires authentication" in error and SECRET_FILE_KEY in error


def test_an_authenticated_application_is_refused_by_an_open_master_naming_the_fix(
    open_spark: SparkStandaloneCluster, spark_run: SparkTopologyRun, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("a-secret-of-sixteen-or-more\n")
    secret.chmod(0o600)
    error = submit_fails(spark_run, open_spark.master_url, f"{SECRET_FILE_KEY}={secret}")
    assert "runs without authentication or with another secret" in error
    assert "spark.authenticate=true" in error and "--properties-file" in error
