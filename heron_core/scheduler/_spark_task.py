"""What runs inside a Spark task: one container's executor, for as long as the task lives.

`ContainerTask` is the function of a container's single-partition Spark job. Spark pickles it
by reference (``heron_core`` must be importable by the workers' Python) and calls it in a
Python worker on some executor host. It unpacks the container package (a Spark broadcast:
fetched over the application's authenticated block transfers) into a fresh working directory,
starts ``python -m heron_core.executor`` there with a parent-death signal (SIGKILL when the
task's worker process dies: a cancelled task, a killed worker or executor JVM), waits for it,
and fails the task when it exits (a container never ends on its own), with the executor's last
log lines in the message. Nothing here imports PySpark at module level.

On a cluster's executor, the task also makes the executor's directory owner-only and starts
its janitor (`heron_core.scheduler._spark_janitor`, one per executor directory), which removes
the containers' unpacked code and key pair once the executor's JVM has exited (the application
ended, or the executor died), keeping their logs. The container's processes never see the
cluster's secret, which Spark hands the executor in ``_SPARK_AUTH_SECRET``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from heron_core._daemon_flags import DaemonFlags
from heron_core.executor import describe_exit, ipc_dirs, spawn
from heron_core.scheduler._package import unpack_package

__all__ = ["SPARK_AUTH_SECRET_ENV", "ContainerFailure", "ContainerTask", "task_host"]

_PARENT_CHECK_SECS = 1.0
_LOG_LINES = 3
SPARK_AUTH_SECRET_ENV = "_SPARK_AUTH_SECRET"
"""The environment variable in which a standalone worker hands its executors the cluster's
secret (when ``spark.authenticate`` is on); the executor's Python workers inherit it."""
JANITOR_MODULE = "heron_core.scheduler._spark_janitor"


class ContainerFailure(RuntimeError):
    """A container's executor ended (or could not start); the message says how and where.

    Spark reports it to the driver in the task's traceback as ``...ContainerFailure:
    <message>``, the message on one line, which the scheduler picks out
    (``describe_job_failure``).
    """


def _route_address(peer: str) -> str | None:
    """The local address this host uses to reach ``peer`` (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((peer, 9))
            address: str = probe.getsockname()[0]
            return address
    except OSError:
        return None


def task_host(driver_host: str = "") -> str:
    """The address this container's daemons bind and register in the state manager.

    ``SPARK_LOCAL_IP`` when set (the address Spark itself binds on this host); else the
    address of the interface that routes to the driver (the one the executor reached the
    driver from, so reachable from the other hosts of the application); else the address of
    this host's name.

    >>> os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    >>> task_host("192.0.2.1")
    '127.0.0.1'
    >>> del os.environ["SPARK_LOCAL_IP"]
    """
    local_ip = os.environ.get("SPARK_LOCAL_IP", "").strip()
    if local_ip:
        return local_ip
    if driver_host:
        routed = _route_address(driver_host)
        if routed is not None and routed != "0.0.0.0":
            return routed
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _tail(path: Path, lines: int = _LOG_LINES) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:] if line.strip())


@dataclass(frozen=True)
class ContainerTask:
    """The Spark task function of one container (see the module's docstring).

    Attributes:
        topology_name: the topology's name.
        topology_id: the topology's id.
        cluster: the cluster name.
        container: the container id (0: the topology manager).
        state_config: the ``--state-config`` JSON of the executor.
        package: the Spark broadcast of the container package (`build_package`'s bytes).
        driver_host: ``spark.driver.host``, to find this host's address (`task_host`).
        on_cluster: whether the task runs in a cluster's executor (not ``local[N]``, whose
            executor is the scheduler's own JVM and whose containers the scheduler cleans up
            itself): the executor's directory is made owner-only and gets a janitor.
        backoff_initial_secs: the first retry's wait when Spark re-runs the task itself
            (``TaskContext.attemptNumber() > 0``); doubled per attempt.
        backoff_max_secs: the longest such wait.
    """

    topology_name: str
    topology_id: str
    cluster: str
    container: int
    state_config: str
    package: Any
    driver_host: str = ""
    on_cluster: bool = False
    backoff_initial_secs: float = 1.0
    backoff_max_secs: float = 30.0

    def working_dir(self) -> Path:
        """The container's working directory on this host: ``containers/<K>`` under the
        Spark task's own working directory (the executor's directory on a worker, the
        scheduler's W with ``local[N]``)."""
        return Path.cwd().absolute() / "containers" / str(self.container)

    def argv(self, working_dir: Path, host: str) -> list[str]:
        """The executor's command line (this Python, which is ``spark.pyspark.python``)."""
        flags = DaemonFlags(
            self.topology_name,
            self.topology_id,
            self.cluster,
            working_dir,
            self.container,
            self.state_config,
        )
        return [sys.executable, "-m", "heron_core.executor", *flags.argv(), "--host", host]

    def __call__(self, partition: Iterable[object]) -> Iterator[str]:
        """Run the container until its executor ends; never returns normally.

        Raises:
            ContainerFailure: the executor exited or could not start, or this worker lost
                its parent (the executor is killed first).
        """
        from pyspark import TaskContext  # the worker has PySpark

        for _ in partition:
            pass
        os.environ.pop(SPARK_AUTH_SECRET_ENV, None)  # not for the container's processes
        context = TaskContext.get()
        attempt = context.attemptNumber() if context is not None else 0
        if attempt > 0:
            time.sleep(min(self.backoff_initial_secs * 2.0 ** (attempt - 1), self.backoff_max_secs))
        where = f"container {self.container} of topology {self.topology_name!r}"
        host = task_host(self.driver_host)
        root = self.working_dir()
        for stale in ipc_dirs(root):  # left by a predecessor that was killed
            shutil.rmtree(stale, ignore_errors=True)
        if self.on_cluster:
            try:
                Path.cwd().chmod(0o700)
                start_janitor(Path.cwd())
            except (OSError, subprocess.SubprocessError) as exc:
                raise ContainerFailure(
                    f"{where}: cannot start the janitor of {Path.cwd()} on {host}: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
        try:
            unpack_package(self.package.value, root)
        except Exception as exc:
            raise ContainerFailure(
                f"{where}: cannot unpack the container package into {root} on {host}: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        log = root / "logs" / f"executor-{self.container}.log"
        try:
            proc = spawn(self.argv(root, host), log, root, new_session=True)
        except OSError as exc:
            raise ContainerFailure(f"{where}: cannot start its executor on {host}: {exc}") from None
        code = self._wait(proc)
        if code is None:
            raise ContainerFailure(
                f"{where}: the Spark worker running it lost its parent on "
                f"{host}; its executor was killed"
            )
        last = _tail(log)
        raise ContainerFailure(
            f"{where}: its executor (pid {proc.pid}) exited with "
            f"{describe_exit(code)} on {host} (attempt {attempt}); log {log}"
            + (f": {last}" if last else "")
        )

    @staticmethod
    def _wait(proc: subprocess.Popen[bytes]) -> int | None:
        """The executor's exit status, or None after killing it because this worker was
        orphaned (its Spark executor went away without killing it)."""
        parent = os.getppid()
        while True:
            try:
                return proc.wait(timeout=_PARENT_CHECK_SECS)
            except subprocess.TimeoutExpired:
                if os.getppid() != parent:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    proc.wait()
                    return None


def executor_jvm() -> psutil.Process | None:
    """The Spark executor's JVM among this process's ancestors (a Python worker's parents are
    PySpark's daemon, then the JVM); None when there is none."""
    try:
        for parent in psutil.Process().parents():
            if parent.name() == "java":
                return parent
    except psutil.Error:
        pass
    return None


def start_janitor(directory: Path) -> None:
    """Start the janitor of executor directory ``directory`` (see the module's docstring): a
    process of its own session, outside the task's process tree, watching the executor's JVM.
    Each task starts one; all but the first to lock the directory exit at once, and the first
    detaches (see `heron_core.scheduler._spark_janitor`): returns once the process started
    here has exited.

    Raises:
        OSError: it cannot be started, or no executor JVM is among this process's ancestors.
        subprocess.TimeoutExpired: it did not detach within 60 s.
    """
    jvm = executor_jvm()
    if jvm is None:
        raise OSError(f"no Spark executor JVM among the ancestors of pid {os.getpid()}")
    with (directory / "heron-janitor.log").open("ab") as log:
        janitor = subprocess.Popen(
            [
                sys.executable,
                "-m",
                JANITOR_MODULE,
                "--directory",
                str(directory),
                "--pid",
                str(jvm.pid),
                "--started",
                repr(jvm.create_time()),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=directory,
            start_new_session=True,
        )
    janitor.wait(timeout=60)
