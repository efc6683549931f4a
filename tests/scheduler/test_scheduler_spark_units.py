"""The Spark scheduler's decisions without a JVM: the master URL, the SparkConf, the
application's authentication, task slots, reasons of failed jobs, config checks at submit, the
task host, the container package and the scheduler service's reports."""

from __future__ import annotations

import io
import os
import stat
import sys
import tarfile
from pathlib import Path

import pytest

from heron_core.config import build_config
from heron_core.errors import ConfigurationError, SchedulerError, StateManagerError
from heron_core.executor import DaemonContext, desired_processes
from heron_core.network import KEYS_DIR, TopologyKeys
from heron_core.proto import packing_plan_pb2
from heron_core.scheduler import (
    SHIPPED,
    LocalScheduler,
    SparkScheduler,
    build_package,
    create_scheduler,
    unpack_package,
)
from heron_core.scheduler._package import remove_unpacked
from heron_core.scheduler._spark_auth import describe_refusal, spark_security
from heron_core.scheduler._spark_conf import (
    ALLOW_UNAUTHENTICATED_KEY,
    SECRET_FILE_KEY,
    describe_job_failure,
    fixed_slot_limit,
    master_state_urls,
    memory_mb,
    parse_master,
    slot_shortfall,
    spark_properties,
    standalone_slot_limit,
)
from heron_core.scheduler._spark_task import ContainerTask, task_host
from heron_core.scheduler.service import ServiceReport, parse_report


def _plan(*cpus: float) -> packing_plan_pb2.PackingPlan:
    return packing_plan_pb2.PackingPlan(
        id="p",
        containers=[
            packing_plan_pb2.ContainerPlan(
                id=k, required_resource=packing_plan_pb2.Resource(cpu=cpu)
            )
            for k, cpu in enumerate(cpus, start=1)
        ],
    )


# --- registry and config checks ------------------------------------------------------------


def test_spark_is_a_builtin_scheduler() -> None:
    assert isinstance(create_scheduler("spark"), SparkScheduler)
    assert isinstance(create_scheduler("local"), LocalScheduler)
    with pytest.raises(ConfigurationError, match="known: local, spark"):
        create_scheduler("aurora")


def test_the_spark_cluster_config_validates() -> None:
    config = build_config(
        {"heron.class.scheduler": "spark", "heron.class.state.manager": "zookeeper"}
    )
    SparkScheduler().validate_config(config)


def test_localfs_state_is_refused_with_a_cluster_master_only() -> None:
    local = build_config({"heron.scheduler.spark.master": "local[3]"})
    SparkScheduler().validate_config(local)
    cluster = build_config({"heron.scheduler.spark.master": "spark://m:7077"})
    with pytest.raises(ConfigurationError, match=r"localfs state manager .*=zookeeper"):
        SparkScheduler().validate_config(cluster)


def test_missing_pyspark_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # makes `import pyspark` fail
    with pytest.raises(SchedulerError, match=r"^PySpark is not installed: pip install "):
        SparkScheduler().validate_config(build_config())


def test_missing_java_names_java_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SchedulerError, match=r"no Java found .* set JAVA_HOME"):
        SparkScheduler().validate_config(build_config())
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SchedulerError, match=f"JAVA_HOME={tmp_path} has no bin/java"):
        SparkScheduler().validate_config(build_config())


# --- the master URL --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "kind", "slots", "endpoints"),
    [
        ("local", "local", 1, ()),
        ("local[4]", "local", 4, ()),
        ("local[2,3]", "local", 2, ()),
        ("local[*]", "local", os.cpu_count(), ()),
        ("spark://m:7078", "standalone", None, (("m", 7078),)),
        ("spark://a,b:7000", "standalone", None, (("a", 7077), ("b", 7000))),
        ("yarn", "other", None, ()),
        ("k8s://https://api:6443", "other", None, ()),
        ("local-cluster[2,1,1024]", "other", None, ()),
    ],
)
def test_master_urls(
    url: str, kind: str, slots: int | None, endpoints: tuple[tuple[str, int], ...]
) -> None:
    master = parse_master(url)
    assert (master.url, master.kind, master.local_slots, master.endpoints) == (
        url,
        kind,
        slots,
        endpoints,
    )


@pytest.mark.parametrize(
    "url", ["", "local[0]", "local[x]", "local[2", "spark://:7077", "spark://m:x"]
)
def test_bad_master_urls_name_the_key(url: str) -> None:
    with pytest.raises(ConfigurationError, match=r"heron\.scheduler\.spark\.master"):
        parse_master(url)


def test_config_errors_at_submit_name_the_topology() -> None:
    bad = build_config(
        {"heron.class.state.manager": "zookeeper"},
        {"topology.name": "wc"},
        {"heron.scheduler.spark.master": "spark://:7077"},
    )
    with pytest.raises(
        ConfigurationError, match=r"^topology 'wc': heron\.scheduler\.spark\.master: "
    ):
        SparkScheduler().validate_config(bad)
    forbidden = build_config(
        {"heron.class.state.manager": "zookeeper"},
        {"topology.name": "wc"},
        {"heron.scheduler.spark.conf.spark.master": "yarn"},
    )
    with pytest.raises(ConfigurationError, match=r"^topology 'wc': .*spark\.master is not allowed"):
        SparkScheduler().validate_config(forbidden)


# --- the SparkConf ---------------------------------------------------------------------------


def test_spark_properties_defaults_and_overrides() -> None:
    config = build_config(
        overrides={
            "heron.scheduler.spark.master": "spark://m:7077",
            "heron.scheduler.spark.conf.spark.scheduler.mode": "FIFO",
            "heron.scheduler.spark.conf.spark.cores.max": 6,
        }
    )
    props = spark_properties(config, "wc", _plan(2.0), "/venv/bin/python")
    assert props["spark.app.name"] == "heron-wc"
    assert props["spark.master"] == "spark://m:7077"
    assert props["spark.scheduler.mode"] == "FIFO"  # the user's value wins
    assert props["spark.cores.max"] == "6"
    assert props["spark.task.maxFailures"] == "1"
    assert props["spark.speculation"] == "false"
    assert (
        props["spark.pyspark.python"] == props["spark.pyspark.driver.python"] == "/venv/bin/python"
    )
    assert props["spark.ui.enabled"] == props["spark.ui.killEnabled"] == "false"
    assert "spark.task.cpus" not in props


def test_packing_mode_reserves_the_largest_containers_cpus() -> None:
    config = build_config(overrides={"heron.scheduler.spark.container.cpus": "packing"})
    assert spark_properties(config, "wc", _plan(2.0, 3.5), "py")["spark.task.cpus"] == "4"
    assert spark_properties(config, "wc", _plan(0.5), "py")["spark.task.cpus"] == "1"
    mine = build_config(
        overrides={
            "heron.scheduler.spark.container.cpus": "packing",
            "heron.scheduler.spark.conf.spark.task.cpus": 2,
        }
    )
    assert spark_properties(mine, "wc", _plan(8.0), "py")["spark.task.cpus"] == "2"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("spark.speculation", "true", "must stay false: a speculative copy"),
        ("spark.master", "yarn", r"set heron\.scheduler\.spark\.master instead"),
        ("spark.task.cpus", "zero", "expected a positive integer"),
        ("spark.cores.max", "two", r"'wc': .*spark\.cores\.max: expected a positive integer"),
        ("spark.executor.cores", "0", "spark.executor.cores: expected a positive integer"),
        ("spark.master.ui.port", "ui", "spark.master.ui.port: expected a positive integer"),
    ],
)
def test_spark_properties_refuse_what_breaks_containers(key: str, value: str, message: str) -> None:
    config = build_config(overrides={f"heron.scheduler.spark.conf.{key}": value})
    with pytest.raises(ConfigurationError, match=message):
        spark_properties(config, "wc", _plan(1.0), "py")


# --- the application's authentication ------------------------------------------------------

SECRET = "0123456789abcdef0123456789abcdef"
STANDALONE = parse_master("spark://m:7077")


def _secret_file(tmp_path: Path, text: str = SECRET + "\n", mode: int = 0o600) -> str:
    path = tmp_path / "spark-secret"
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def test_every_master_authenticates_and_encrypts_by_default(tmp_path: Path) -> None:
    on = {"spark.authenticate": "true", "spark.network.crypto.enabled": "true"}
    local = spark_security({}, parse_master("local[2]"), "wc")
    assert (local.properties, local.secret, local.unprotected) == (on, None, None)
    assert spark_security({}, parse_master("yarn"), "wc").properties == on
    config = {SECRET_FILE_KEY: _secret_file(tmp_path)}
    cluster = spark_security(config, STANDALONE, "wc")
    assert (cluster.properties, cluster.secret, cluster.unprotected) == (on, SECRET, None)
    assert SECRET not in repr(cluster)
    assert spark_security(config, parse_master("k8s://h:443"), "wc").secret == SECRET


def test_a_standalone_master_without_a_secret_file_is_refused_unless_allowed() -> None:
    with pytest.raises(ConfigurationError) as refused:
        spark_security({}, STANDALONE, "wc")
    message = str(refused.value)
    assert message.startswith("topology 'wc': Spark would hand the container package")
    assert f"the standalone master spark://m:7077 has no {SECRET_FILE_KEY}" in message
    assert "--properties-file" in message and f"{ALLOW_UNAUTHENTICATED_KEY}=true" in message
    allowed = spark_security({ALLOW_UNAUTHENTICATED_KEY: True}, STANDALONE, "wc")
    assert allowed.properties == {"spark.authenticate": "false"} and not allowed.authenticates
    assert allowed.unprotected == f"the standalone master spark://m:7077 has no {SECRET_FILE_KEY}"


@pytest.mark.parametrize(
    ("prop", "why"),
    [
        ("spark.authenticate", "heron.scheduler.spark.conf.spark.authenticate=false"),
        ("spark.network.crypto.enabled", "spark.network.crypto.enabled=false sends it in clear"),
    ],
)
def test_turning_authentication_or_encryption_off_needs_the_opt_out(prop: str, why: str) -> None:
    config: dict[str, object] = {f"heron.scheduler.spark.conf.{prop}": "false"}
    with pytest.raises(ConfigurationError, match=f"{why}. Undo that, or set "):
        spark_security(config, parse_master("local[2]"), "wc")
    allowed = spark_security(
        {**config, ALLOW_UNAUTHENTICATED_KEY: True}, parse_master("local"), "wc"
    )
    assert allowed.properties[prop] == "false" and why in str(allowed.unprotected)


def test_the_secret_as_a_spark_property_is_refused() -> None:
    config = {"heron.scheduler.spark.conf.spark.authenticate.secret": SECRET}
    with pytest.raises(ConfigurationError, match="shown by the tracker") as refused:
        spark_security(config, STANDALONE, "wc")
    assert SECRET not in str(refused.value) and SECRET_FILE_KEY in str(refused.value)


def test_a_secret_file_unused_by_spark_is_refused(tmp_path: Path) -> None:
    config: dict[str, object] = {SECRET_FILE_KEY: _secret_file(tmp_path)}
    with pytest.raises(ConfigurationError, match=r"with local\[2\] Spark makes the application's"):
        spark_security(config, parse_master("local[2]"), "wc")
    config["heron.scheduler.spark.conf.spark.authenticate"] = "false"
    with pytest.raises(ConfigurationError, match="turns authentication off: unset one of them"):
        spark_security(config, STANDALONE, "wc")


@pytest.mark.parametrize(
    ("text", "mode", "says"),
    [
        (SECRET + "\n", 0o644, "holds the Spark cluster's secret but group or others may access"),
        ("short\n", 0o600, "found 5 characters"),
        (f"{SECRET}\n{SECRET}\n", 0o600, "found more than one line"),
        (f" {SECRET}\n", 0o600, "found control characters or spaces around it"),
        ("\u00e9" * 20, 0o600, "found bytes that are not ASCII"),
    ],
)
def test_a_secret_file_that_cannot_work_names_the_key_and_path(
    tmp_path: Path, text: str, mode: int, says: str
) -> None:
    path = _secret_file(tmp_path, text, mode)
    with pytest.raises(ConfigurationError) as refused:
        spark_security({SECRET_FILE_KEY: path}, STANDALONE, "wc")
    message = str(refused.value)
    assert SECRET_FILE_KEY in message and path in message and says in message
    assert SECRET not in message


def test_a_secret_file_path_that_cannot_work_names_the_key(tmp_path: Path) -> None:
    for value, says in (
        ("relative/secret", "must be an absolute path"),
        (str(tmp_path / "missing"), "No such file or directory"),
    ):
        with pytest.raises(ConfigurationError, match=SECRET_FILE_KEY) as refused:
            spark_security({SECRET_FILE_KEY: value}, STANDALONE, "wc")
        assert says in str(refused.value)


def test_a_refusing_master_names_the_fix_for_each_side(tmp_path: Path) -> None:
    guarded = spark_security({SECRET_FILE_KEY: _secret_file(tmp_path)}, STANDALONE, "wc")
    text = describe_refusal(guarded, STANDALONE, "wc", "Message is dropped")
    assert text.startswith("topology 'wc': the Spark master spark://m:7077 refused the app")
    assert "(Spark: Message is dropped)" in text and "--properties-file" in text
    assert f"another secret than {SECRET_FILE_KEY} ({tmp_path / 'spark-secret'})" in text
    open_ = spark_security({ALLOW_UNAUTHENTICATED_KEY: True}, STANDALONE, "wc")
    text = describe_refusal(open_, STANDALONE, "wc", "Expected SaslMessage")
    assert "the master requires authentication" in text and SECRET_FILE_KEY in text


# --- task slots ------------------------------------------------------------------------------


def test_fixed_slot_limits() -> None:
    assert fixed_slot_limit(parse_master("local[3]"), {}) == (
        3,
        "master local[3] runs 3 task threads",
    )
    assert fixed_slot_limit(
        parse_master("spark://m"), {"spark.cores.max": "5", "spark.task.cpus": "2"}
    ) == (
        2,
        "spark.cores.max=5, spark.task.cpus=2 each",
    )
    assert fixed_slot_limit(parse_master("spark://m"), {}) is None
    assert fixed_slot_limit(parse_master("yarn"), {}) is None
    # spark.cores.max caps a standalone application only (YARN and Kubernetes ignore it).
    assert fixed_slot_limit(parse_master("yarn"), {"spark.cores.max": "1"}) is None


def _worker(
    cores: int, free: int, memory_free: int = 2048, state: str = "ALIVE"
) -> dict[str, object]:
    return {"state": state, "cores": cores, "coresfree": free, "memoryfree": memory_free}


@pytest.mark.parametrize(
    ("workers", "properties", "environ", "slots", "why"),
    [
        (
            [_worker(2, 2), _worker(2, 2)],
            {},
            {},
            4,
            "4 free cores on the Spark master's 2 ALIVE workers",
        ),
        (
            [_worker(4, 1), _worker(2, 0), _worker(8, 8, state="DEAD")],
            {},
            {},
            1,
            "1 free core on the Spark master's 2 ALIVE workers, 5 of their 6 taken by other "
            "applications",
        ),
        (
            [_worker(5, 5), _worker(3, 3)],
            {"spark.executor.cores": "2", "spark.task.cpus": "2"},
            {},
            3,
            "8 free cores on the Spark master's 2 ALIVE workers, 2 per executor "
            "(spark.executor.cores), spark.task.cpus=2 per task",
        ),
        (
            [_worker(4, 4, memory_free=1536), _worker(4, 4, memory_free=512)],
            {"spark.executor.cores": "1"},
            {},
            1,
            "8 free cores on the Spark master's 2 ALIVE workers, 1 per executor "
            "(spark.executor.cores); 1 of them lacks the 1024 MiB of free memory an executor "
            "needs (spark.executor.memory)",
        ),
        ([_worker(4, 4, memory_free=1536)], {}, {"SPARK_EXECUTOR_MEMORY": "2g"}, 0, None),
        ([_worker(4, 4, memory_free=1536)], {}, {"SPARK_EXECUTOR_MEMORY": "1g"}, 4, None),
        ([_worker(4, 4)], {"spark.executor.memory": "plenty"}, {}, 4, None),
        (
            [_worker(4, 4), _worker(4, 4)],
            {"spark.cores.max": "3"},
            {},
            3,
            "8 free cores on the Spark master's 2 ALIVE workers; spark.cores.max=3",
        ),
        ([], {}, {}, 0, "0 free cores on the Spark master's 0 ALIVE workers"),
    ],
)
def test_standalone_slot_limits_count_what_the_master_can_grant(
    workers: list[dict[str, object]],
    properties: dict[str, str],
    environ: dict[str, str],
    slots: int,
    why: str | None,
) -> None:
    got = standalone_slot_limit({"workers": workers}, properties, environ)
    assert got[0] == slots
    if why is not None:
        assert got[1] == why


def test_the_master_state_is_read_from_its_web_ui() -> None:
    assert master_state_urls(parse_master("spark://m:7077"), {}) == ["http://m:8080/json/"]
    assert master_state_urls(parse_master("spark://a:1,b:2"), {"spark.master.ui.port": "9090"}) == [
        "http://a:9090/json/",
        "http://b:9090/json/",
    ]
    assert [memory_mb(t) for t in ("1g", "1536m", "2048k", "3t", "1.5g", "")] == [
        1024,
        1536,
        2,
        3 * 1024**2,
        None,
        None,
    ]


def test_slot_shortfall_on_a_cluster_names_the_fix() -> None:
    message = slot_shortfall("wc", _plan(1, 1), 2, "spark.cores.max=2", parse_master("spark://m"))
    assert message == (
        "topology 'wc' needs 3 Spark task slots (one per container: the topology manager's and "
        "2 stream managers'), the application has 2 (spark.cores.max=2): raise spark.cores.max "
        "or the workers' cores (heron.scheduler.spark.conf.spark.cores.max), or lower "
        "topology.stmgrs"
    )


# --- failed jobs -----------------------------------------------------------------------------

_CONTAINER_FAILURE = """\
An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 \
times, most recent failure: Lost task 0.0 in stage 3.0 (TID 3) (127.0.0.1 executor 1): \
org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/heron_core/scheduler/_spark_task.py", line 9, in f
    raise ContainerFailure(
heron_core.scheduler._spark_task.ContainerFailure: container 1 of topology 'wc': its executor \
(pid 42) exited with exit status 1 on 127.0.0.1 (attempt 0); log /w/containers/1/logs/executor-1.log
 SQLSTATE: 38000
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(x.scala:1)
Driver stacktrace:
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:1)
"""

_MODULE_MISSING = """\
An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown from \
the Python worker: Traceback (most recent call last):
  File "pyspark.zip/pyspark/serializers.py", line 483, in loads
    return cloudpickle.loads(obj, encoding=encoding)
ModuleNotFoundError: No module named 'heron_core'
 SQLSTATE: 38000
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(x.scala:1)
"""


def test_failed_jobs_are_described_without_the_java_stack() -> None:
    assert describe_job_failure(_CONTAINER_FAILURE) == (
        "container 1 of topology 'wc': its executor (pid 42) exited with exit status 1 on "
        "127.0.0.1 (attempt 0); log /w/containers/1/logs/executor-1.log"
    )
    assert describe_job_failure(_MODULE_MISSING) == (
        "ModuleNotFoundError: No module named 'heron_core'"
    )
    cancelled = (
        "An error occurred while calling o1.collect.\n: org.apache.spark.SparkException: "
        "[SPARK_JOB_CANCELLED] Job 1 cancelled part of cancelled job group g SQLSTATE: XXKDA\n"
        "\tat org.apache.spark.errors.SparkCoreErrors$.sparkJobCancelled(x.scala:1)"
    )
    assert describe_job_failure(cancelled).startswith("[SPARK_JOB_CANCELLED] Job 1 cancelled")
    assert describe_job_failure("plain") == "plain"


# --- the Spark task --------------------------------------------------------------------------


def test_task_host_prefers_spark_local_ip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_LOCAL_IP", "192.0.2.7")
    assert task_host("198.51.100.1") == "192.0.2.7"
    monkeypatch.delenv("SPARK_LOCAL_IP")
    assert task_host("127.0.0.1") == "127.0.0.1"  # the interface that routes to the driver


def test_container_task_runs_the_executor_binding_the_task_host(tmp_path: Path) -> None:
    task = ContainerTask("wc", "wc-1", "spark", 2, '{"k": 1}', "pkg")
    argv = task.argv(tmp_path, "192.0.2.7")
    assert argv[:3] == [sys.executable, "-m", "heron_core.executor"]
    assert argv[argv.index("--container") + 1] == "2"
    assert argv[argv.index("--working-dir") + 1] == str(tmp_path)
    assert argv[-2:] == ["--host", "192.0.2.7"]
    assert task.working_dir() == Path.cwd().absolute() / "containers" / "2"


def test_daemons_bind_the_executors_host() -> None:
    plan = packing_plan_pb2.PackingPlan(
        id="p",
        containers=[
            packing_plan_pb2.ContainerPlan(
                id=1, instances=[packing_plan_pb2.InstancePlan(component_name="w", task_id=1)]
            )
        ],
    )
    ctx = DaemonContext("wc", "wc-1", "spark", "/w", "{}", "ipc:///t/", ("py", "-m"), "10.1.2.3")
    metricsmgr, stmgr, instance = desired_processes(plan, 1, ctx).values()
    assert stmgr.argv[-2:] == metricsmgr.argv[-2:] == ("--host", "10.1.2.3")
    assert "--host" not in instance.argv
    assert desired_processes(plan, 0, ctx)["tmanager"].argv[-2:] == ("--host", "10.1.2.3")
    plain = DaemonContext("wc", "wc-1", "local", "/w", "{}", "ipc:///t/", ("py", "-m"))
    assert "--host" not in desired_processes(plan, 1, plain)["stmgr-1"].argv


# --- the container package -------------------------------------------------------------------


def test_the_package_ships_the_code_and_keys_with_modes_into_a_fresh_directory(
    tmp_path: Path,
) -> None:
    assert SHIPPED == ("code", KEYS_DIR)
    w = tmp_path / "w"
    keys = TopologyKeys.create(w / KEYS_DIR)
    (w / "code" / "data").mkdir(parents=True)
    (w / "code" / "data" / "words.txt").write_text("a b")
    script = w / "code" / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    (w / "logs").mkdir()
    (w / "logs" / "scheduler.log").write_text("not shipped")
    package = build_package(w)
    target = tmp_path / "container"
    (target / "stale").mkdir(parents=True)
    unpack_package(package, target)
    assert sorted(p.name for p in target.iterdir()) == ["code", "keys", "logs"]
    assert TopologyKeys.load(target / KEYS_DIR) == keys
    assert stat.S_IMODE((target / KEYS_DIR).stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in (target / KEYS_DIR).iterdir()} == {0o600}
    assert (target / "code" / "data" / "words.txt").read_text() == "a b"
    assert os.access(target / "code" / "run.sh", os.X_OK)
    assert list((target / "logs").iterdir()) == []
    (target / "logs" / "stmgr-1.log").write_text("kept")
    remove_unpacked(target)
    assert sorted(p.name for p in target.iterdir()) == ["logs"]
    assert (target / "logs" / "stmgr-1.log").read_text() == "kept"
    remove_unpacked(tmp_path / "nowhere")  # nothing to remove


def test_the_package_refuses_paths_leaving_the_directory(tmp_path: Path) -> None:
    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w:gz") as tar:
        data = b"x"
        info = tarfile.TarInfo("../escaped.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(tarfile.TarError):
        unpack_package(evil.getvalue(), tmp_path / "container")
    assert not (tmp_path / "escaped.txt").exists()


# --- the scheduler service's reports ---------------------------------------------------------


def test_service_reports_round_trip_and_keep_the_error_class() -> None:
    for report in (
        ServiceReport("progress", "starting"),
        ServiceReport("running", "every container runs"),
        ServiceReport("error", "no ZooKeeper", "StateManagerError"),
    ):
        assert parse_report(report.encode().rstrip(b"\n")) == report
    assert isinstance(ServiceReport("error", "m", "StateManagerError").error(), StateManagerError)
    assert isinstance(ServiceReport("error", "m", "ConfigurationError").error(), ConfigurationError)
    assert type(ServiceReport("error", "m", "KeyError").error()) is SchedulerError
    assert type(ServiceReport("error", "m", "TopologyValidationError").error()) is SchedulerError
