"""A real, throw-away Spark standalone cluster for tests, from the pip ``pyspark`` package.

:class:`SparkStandaloneCluster` starts a master and ``workers`` workers on loopback with
pyspark's own ``bin/spark-class`` (``SPARK_HOME`` is the installed ``pyspark`` package, Java
comes from ``JAVA_HOME`` or ``PATH``), each in a process group of its own, on free ports, with
``SPARK_WORKER_DIR`` in a temporary directory. :meth:`~SparkStandaloneCluster.stop` ends every
process by process group (the executors a worker launched are in its group) and removes the
files. Nothing but ``pip install pyspark`` and a Java 17 or 21 is needed.

>>> cluster = SparkStandaloneCluster(workers=1, cores=1)
>>> cluster.master_url
''
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any, Self

import psutil

__all__ = [
    "SparkClusterError",
    "SparkStandaloneCluster",
    "executor_jvms",
    "free_port",
    "spark_home",
]

_STOP_GRACE_S = 10.0


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


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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


class SparkStandaloneCluster:
    """A standalone master and ``workers`` workers on 127.0.0.1, started by :meth:`start`.

    Args:
        workers: how many workers.
        cores: cores each worker offers.
        memory: memory each worker offers (Spark's notation, ``"2g"``).
        startup_timeout_s: how long :meth:`start` waits for every worker to be ALIVE.
    """

    def __init__(
        self,
        *,
        workers: int = 2,
        cores: int = 2,
        memory: str = "2g",
        startup_timeout_s: float = 120.0,
    ) -> None:
        self._workers = workers
        self._cores = cores
        self._memory = memory
        self._startup_timeout_s = startup_timeout_s
        self._directory: Path | None = None
        self._processes: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []
        self._port = 0
        self._webui_port = 0
        self._final_log = ""

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:<port>`` ("" before :meth:`start`)."""
        return f"spark://127.0.0.1:{self._port}" if self._port else ""

    @property
    def web_url(self) -> str:
        """The master's web UI, ``http://127.0.0.1:<port>`` ("" before :meth:`start`)."""
        return f"http://127.0.0.1:{self._webui_port}" if self._webui_port else ""

    @property
    def work_dir(self) -> Path | None:
        """``SPARK_WORKER_DIR``: the applications' executor directories (None when stopped)."""
        return None if self._directory is None else self._directory / "work"

    def environment(self) -> dict[str, str]:
        """The environment the daemons run in (``SPARK_HOME``, ``SPARK_LOCAL_IP``, ...)."""
        assert self._directory is not None
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_WORKER_DIR=str(self._directory / "work"),
            SPARK_LOG_DIR=str(self._directory / "logs"),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY="256m",
            SPARK_NO_DAEMONIZE="1",
        )
        env.pop("SPARK_CONF_DIR", None)
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
        self._port, self._webui_port = free_port(), free_port()
        spark_class = str(home / "bin" / "spark-class")
        try:
            self._launch(
                "master",
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self._port),
                    "--webui-port",
                    str(self._webui_port),
                ],
            )
            for index in range(self._workers):
                self._launch(
                    f"worker-{index}",
                    [
                        spark_class,
                        "org.apache.spark.deploy.worker.Worker",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(free_port()),
                        "--webui-port",
                        str(free_port()),
                        "--cores",
                        str(self._cores),
                        "--memory",
                        self._memory,
                        "--work-dir",
                        str(self._directory / "work"),
                        self.master_url,
                    ],
                )
            self._wait_until_alive()
        except BaseException:
            self.stop()
            raise

    def _launch(self, name: str, argv: list[str]) -> None:
        assert self._directory is not None
        log = open(self._directory / "logs" / f"{name}.log", "wb")  # noqa: SIM115 (stop closes)
        self._logs.append(log)
        self._processes.append(
            subprocess.Popen(
                argv,
                env=self.environment(),
                cwd=self._directory,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

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

    def stop(self) -> None:
        """End every daemon and executor by process group (SIGTERM, SIGKILL after 10 s), then
        remove the files. Idempotent; :meth:`log_text` still answers afterwards."""
        processes, self._processes = self._processes, []
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
        for log in self._logs:
            log.close()
        self._logs = []
        if self._directory is not None:
            self._final_log = self.log_text()
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def log_text(self) -> str:
        """The daemons' logs and every executor's ``stderr``, each under a header."""
        if self._directory is None:
            return self._final_log
        parts = []
        files = sorted((self._directory / "logs").glob("*.log"))
        files += sorted((self._directory / "work").glob("*/*/stderr"))
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
