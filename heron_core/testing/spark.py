"""A real, throw-away Spark standalone cluster for tests, from the pip ``pyspark`` package.

:class:`SparkStandaloneCluster` starts a master and ``workers`` workers on loopback with
pyspark's own ``bin/spark-class`` (``SPARK_HOME`` is the installed ``pyspark`` package, Java
comes from ``JAVA_HOME`` or ``PATH``), each in a process group of its own, on free ports, with
``SPARK_WORKER_DIR`` in a temporary directory. :meth:`~SparkStandaloneCluster.stop` ends every
process by process group (the executors a worker launched are in its group) and removes the
files. Nothing but ``pip install pyspark`` and a Java 17 or 21 is needed. The master may bind
another local address, and each worker may run on a host of its own (a :class:`WorkerSite`:
its address and a command prefix such as ``ip netns exec NS``, see
``heron_core.testing.netns``).

The cluster runs with Spark's authentication and RPC encryption on (``spark.authenticate``,
``spark.network.crypto.enabled``): its master and workers read a fresh random shared secret
from an owner-only properties file (``--properties-file``), and
:attr:`~SparkStandaloneCluster.secret_file` holds the same secret alone, for
``heron.scheduler.spark.auth.secret.file``; :meth:`~SparkStandaloneCluster.heron_config` gives
both keys a topology needs to run there. ``authenticate=False`` starts a cluster that any
process reaching it may use, for the tests that show what that exposes.

>>> cluster = SparkStandaloneCluster(workers=1, cores=1)
>>> cluster.master_url, cluster.secret_file
('', None)
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Self

import psutil

from heron_core.network import free_port
from heron_core.scheduler._spark_conf import MASTER_KEY, SECRET_FILE_KEY
from heron_core.testing.processes import processes_mentioning

__all__ = [
    "QUICK_START_JAVA_OPTIONS",
    "SparkClusterError",
    "SparkStandaloneCluster",
    "WorkerSite",
    "executor_jvms",
    "free_port",
    "spark_home",
]

_STOP_GRACE_S = 10.0
_SECRET_BYTES = 32

QUICK_START_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""JVM options that start a short-lived test JVM with less CPU (the C1 compiler only, the serial
collector): about half the start-up time of a whole cluster on a loaded 2-core machine."""


class SparkClusterError(RuntimeError):
    """The cluster cannot start: PySpark or Java is missing, or a daemon died or never served."""


def spark_home() -> Path:
    """The Spark distribution inside the installed ``pyspark`` package (its ``bin/``, ``jars/``).

    Raises:
        SparkClusterError: PySpark is not installed.
    """
    try:
        import pyspark
    except ImportError as exc:
        raise SparkClusterError(
            "PySpark is not installed: pip install 'heron-storm[spark]'"
        ) from exc
    return Path(pyspark.__file__).resolve().parent


def executor_jvms(app_id: str) -> list[psutil.Process]:
    """The live Spark executor JVMs (``CoarseGrainedExecutorBackend``) of application
    ``app_id`` on this host."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        argv = process.info.get("cmdline") or []
        if (
            process.info.get("status") != psutil.STATUS_ZOMBIE
            and any(a.endswith("CoarseGrainedExecutorBackend") for a in argv)
            and app_id in argv
        ):
            found.append(process)
    return found


@dataclass(frozen=True)
class WorkerSite:
    """Where one worker of a :class:`SparkStandaloneCluster` runs.

    Attributes:
        host: the address the worker binds (``--host``) and its executors bind and advertise;
            it must reach the master's host.
        prefix: the command the worker's ``spark-class`` runs under (``("ip", "netns",
            "exec", "ns1")`` runs it in that network namespace); it must exec the command, so
            that the worker keeps the pid and process group it was started with.
        local_ip: whether the worker's environment has ``SPARK_LOCAL_IP=<host>``, which its
            executors and their Python workers inherit; without it, what runs there picks its
            address itself (a container's daemons: the one that routes to the driver).
    """

    host: str = "127.0.0.1"
    prefix: tuple[str, ...] = ()
    local_ip: bool = True


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


class SparkStandaloneCluster:
    """A standalone master and ``workers`` workers on 127.0.0.1, started by :meth:`start`.

    Args:
        workers: how many workers (on ``host``); ignored when ``sites`` is given.
        cores: cores each worker offers.
        memory: memory each worker offers (Spark's notation, ``"2g"``).
        startup_timeout_s: how long :meth:`start` waits for every worker to be ALIVE.
        host: the local address the master binds (its RPC port and web UI); the workers must
            reach it.
        sites: one worker per site, each on its own address and under its own command
            prefix; default: ``workers`` workers on ``host``.
        java_options: JVM options of the master and the workers (``SPARK_DAEMON_JAVA_OPTS``),
            such as :data:`QUICK_START_JAVA_OPTIONS`; the applications' executors take theirs
            from ``spark.executor.extraJavaOptions``.
        authenticate: whether the master and the workers require Spark's authentication
            (with a secret made at :meth:`start`) and encrypt their RPC.
    """

    def __init__(
        self,
        *,
        workers: int = 2,
        cores: int = 2,
        memory: str = "2g",
        startup_timeout_s: float = 120.0,
        host: str = "127.0.0.1",
        sites: Sequence[WorkerSite] | None = None,
        java_options: str = "",
        authenticate: bool = True,
    ) -> None:
        self._host = host
        self._authenticate = authenticate
        self._java_options = java_options
        self._sites = tuple(sites) if sites is not None else (WorkerSite(host),) * workers
        self._workers = len(self._sites)
        self._cores = cores
        self._memory = memory
        self._startup_timeout_s = startup_timeout_s
        self._directory: Path | None = None
        self._processes: list[subprocess.Popen[bytes]] = []
        self._pids: dict[str, int] = {}
        self._logs: list[IO[bytes]] = []
        self._port = 0
        self._webui_port = 0
        self._final_log = ""

    @property
    def master_url(self) -> str:
        """``spark://<host>:<port>`` ("" before :meth:`start`)."""
        return f"spark://{self._host}:{self._port}" if self._port else ""

    @property
    def web_url(self) -> str:
        """The master's web UI, ``http://<host>:<port>`` ("" before :meth:`start`)."""
        return f"http://{self._host}:{self._webui_port}" if self._webui_port else ""

    @property
    def secret_file(self) -> Path | None:
        """An owner-only file holding the cluster's shared secret alone, for
        ``heron.scheduler.spark.auth.secret.file`` (None when stopped or without
        authentication)."""
        if self._directory is None or not self._authenticate:
            return None
        return self._directory / "auth" / "secret"

    @property
    def local_dir(self) -> Path | None:
        """``SPARK_LOCAL_DIRS`` of the workers: the applications' scratch directories (the
        executors' own temporary directories among them). None when stopped."""
        return None if self._directory is None else self._directory / "local"

    def heron_config(self) -> dict[str, str]:
        """The config keys that run a topology on this cluster: its master URL and, with
        authentication, the secret file."""
        config = {MASTER_KEY: self.master_url}
        if self.secret_file is not None:
            config[SECRET_FILE_KEY] = str(self.secret_file)
        return config

    @property
    def work_dir(self) -> Path | None:
        """``SPARK_WORKER_DIR``: the applications' executor directories (None when stopped)."""
        return None if self._directory is None else self._directory / "work"

    @property
    def daemon_pids(self) -> dict[str, int]:
        """The pid of each daemon, by name (``master``, ``worker-0``, ...); each leads its
        process group. Empty when stopped."""
        return dict(self._pids)

    def environment(self, local_ip: str | None = "127.0.0.1") -> dict[str, str]:
        """The environment a daemon runs in (``SPARK_HOME``, ``SPARK_LOCAL_IP``, ...); no
        ``SPARK_LOCAL_IP`` when ``local_ip`` is None."""
        assert self._directory is not None
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_WORKER_DIR=str(self._directory / "work"),
            SPARK_LOCAL_DIRS=str(self._directory / "local"),
            SPARK_LOG_DIR=str(self._directory / "logs"),
            SPARK_DAEMON_MEMORY="256m",
            SPARK_NO_DAEMONIZE="1",
        )
        env.pop("SPARK_CONF_DIR", None)
        env.pop("SPARK_LOCAL_IP", None)
        if local_ip is not None:
            env["SPARK_LOCAL_IP"] = local_ip
        if self._java_options:
            env["SPARK_DAEMON_JAVA_OPTS"] = self._java_options
        return env

    def start(self) -> None:
        """Start the master and the workers; return once every worker is ALIVE.

        Raises:
            SparkClusterError: PySpark or Java is missing, or a daemon exited or the workers
                were not ALIVE within the startup timeout (the message holds the logs).
        """
        home = spark_home()
        if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
            raise SparkClusterError(
                "cannot start Spark: no Java (set JAVA_HOME or put java on PATH)"
            )
        self._directory = Path(tempfile.mkdtemp(prefix="heron-spark-"))
        (self._directory / "work").mkdir()
        (self._directory / "logs").mkdir()
        (self._directory / "local").mkdir()
        self._port, self._webui_port = free_port(self._host), free_port(self._host)
        spark_class = str(home / "bin" / "spark-class")
        properties = self._write_auth_files()
        try:
            self._launch(
                "master",
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    self._host,
                    "--port",
                    str(self._port),
                    "--webui-port",
                    str(self._webui_port),
                    *properties,
                ],
                self._host,
            )
            for index, site in enumerate(self._sites):
                self._launch(
                    f"worker-{index}",
                    [
                        *site.prefix,
                        spark_class,
                        "org.apache.spark.deploy.worker.Worker",
                        "--host",
                        site.host,
                        "--port",
                        "0",  # Spark picks a free port on the worker's host
                        "--webui-port",
                        "0",
                        "--cores",
                        str(self._cores),
                        "--memory",
                        self._memory,
                        "--work-dir",
                        str(self._directory / "work"),
                        *properties,
                        self.master_url,
                    ],
                    site.host if site.local_ip else None,
                )
            self._wait_until_alive()
        except BaseException:
            self.stop()
            raise

    def _write_auth_files(self) -> list[str]:
        """With authentication, write a fresh secret to :attr:`secret_file` and the owner-only
        Spark properties file the master and the workers read (``spark.authenticate``, the
        secret, ``spark.network.crypto.enabled``); return their ``--properties-file`` flags
        ([] without authentication)."""
        assert self._directory is not None
        if not self._authenticate:
            return []
        auth = self._directory / "auth"
        auth.mkdir(mode=0o700)
        secret = secrets.token_hex(_SECRET_BYTES)
        properties = auth / "spark-auth.properties"
        for path, text in (
            (auth / "secret", f"{secret}\n"),
            (
                properties,
                "spark.authenticate true\n"
                f"spark.authenticate.secret {secret}\n"
                "spark.network.crypto.enabled true\n",
            ),
        ):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
                out.write(text)
        return ["--properties-file", str(properties)]

    def _launch(self, name: str, argv: list[str], local_ip: str | None) -> None:
        assert self._directory is not None
        log = open(self._directory / "logs" / f"{name}.log", "wb")  # noqa: SIM115 (stop closes)
        self._logs.append(log)
        process = subprocess.Popen(
            argv,
            env=self.environment(local_ip),
            cwd=self._directory,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._processes.append(process)
        self._pids[name] = process.pid

    def _wait_until_alive(self) -> None:
        deadline = time.monotonic() + self._startup_timeout_s
        while True:
            for process in self._processes:
                if process.poll() is not None:
                    raise SparkClusterError(
                        f"a Spark daemon (pid {process.pid}) exited with "
                        f"{process.returncode} before the cluster was up; logs:\n{self.log_text()}"
                    )
            state = self.state()
            alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
            if len(alive) >= self._workers:
                return
            if time.monotonic() > deadline:
                raise SparkClusterError(
                    f"the Spark cluster had {len(alive)} of {self._workers} workers ALIVE after "
                    f"{self._startup_timeout_s:g} s; logs:\n{self.log_text()}"
                )
            time.sleep(0.2)

    def state(self) -> dict[str, Any]:
        """The master's ``/json/`` document (workers, activeapps, completedapps), or {} when
        the master does not answer."""
        if not self._webui_port:
            return {}
        try:
            with urllib.request.urlopen(f"{self.web_url}/json/", timeout=5) as answer:
                document: dict[str, Any] = json.load(answer)
                return document
        except (OSError, ValueError, urllib.error.URLError):
            return {}

    def applications(self, name: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """``{"active": [...], "completed": [...]}``: the master's applications, only those
        called ``name`` when given."""
        state = self.state()
        out: dict[str, list[dict[str, Any]]] = {}
        for kind, key in (("active", "activeapps"), ("completed", "completedapps")):
            out[kind] = [app for app in state.get(key, []) if name is None or app["name"] == name]
        return out

    def wait_idle(self, timeout: float = 60.0) -> list[psutil.Process]:
        """Wait until the master runs no application and no process of a topology container
        (a command line naming ``heron_core.`` and the workers' directory: executors,
        daemons, janitors) is left, for ``timeout`` seconds at most; kill by pid whatever is
        still left then, and return those processes ([] when the cluster went idle)."""
        work = self.work_dir

        def leftovers() -> list[psutil.Process]:
            found = processes_mentioning(work) if work is not None else []
            return [p for p in found if any("heron_core." in a for a in _cmdline(p))]

        deadline = time.monotonic() + timeout
        while (self.applications()["active"] or leftovers()) and time.monotonic() < deadline:
            time.sleep(0.2)
        survivors = leftovers()
        for process in survivors:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        return survivors

    def stop(self) -> None:
        """End every daemon and executor by process group (SIGTERM, SIGKILL after 10 s), wait
        for the processes whose command line names the cluster's directory (the janitors the
        containers' tasks started end once their executor has: SIGKILL after 10 s), then
        remove the files. Idempotent; :meth:`log_text` still answers afterwards."""
        processes, self._processes = self._processes, []
        self._pids = {}
        groups = [process.pid for process in processes]  # each leads its own group
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_GRACE_S
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        for process in processes:
            process.wait()
        if self._directory is not None:  # what the executors' tasks started: janitors
            _, alive = psutil.wait_procs(
                processes_mentioning(self._directory), timeout=_STOP_GRACE_S
            )
            for straggler in alive:
                with contextlib.suppress(psutil.NoSuchProcess):
                    straggler.kill()
            psutil.wait_procs(alive, timeout=_STOP_GRACE_S)
        for log in self._logs:
            log.close()
        self._logs = []
        if self._directory is not None:
            self._final_log = self.log_text()
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def log_text(self) -> str:
        """The daemons' logs, every executor's ``stderr`` and the logs of the topology
        containers it ran (``containers/<K>/logs``), each under a header."""
        if self._directory is None:
            return self._final_log
        parts = []
        files = sorted((self._directory / "logs").glob("*.log"))
        files += sorted((self._directory / "work").glob("*/*/stderr"))
        files += sorted((self._directory / "work").glob("*/*/containers/*/logs/*.log"))
        for path in files:
            with contextlib.suppress(OSError):
                text = path.read_text(errors="replace")
                parts.append(f"===== {path} =====\n{text}")
        return "\n".join(parts)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
