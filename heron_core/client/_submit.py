"""``heron submit``: resolve, pack, store and launch a topology."""

from __future__ import annotations

import contextlib
import getpass
import importlib.metadata
import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heron_core.client import _launched as launched
from heron_core.client._config import Progress, client_config, quiet, working_dir
from heron_core.client._kill import stop_timeout_secs, stop_topology_processes, uninstall
from heron_core.client._loading import LoadedTopology, load_topology
from heron_core.config import config_from_proto, config_to_proto, inert_settings
from heron_core.errors import SchedulerError
from heron_core.executor import code_dir, describe_exit, state_config_json
from heron_core.instance._hooks import auto_hook_classes
from heron_core.network import KEYS_DIR, TopologyKeys
from heron_core.packing import create_packing
from heron_core.proto import execution_state_pb2, packing_plan_pb2, topology_pb2
from heron_core.scheduler import TopologyRuntime, create_scheduler
from heron_core.scheduler.service import parse_report, service_argv
from heron_core.statemgr import StateKey, StateManager, create_state_manager

__all__ = ["Deployment", "SubmitResult", "install", "prepare", "submit"]

STARTUP_TIMEOUT_KEY = "heron.scheduler.startup.timeout.secs"

_IGNORED_NAMES = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "__pycache__",
    "node_modules",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
}


@dataclass(frozen=True)
class Deployment:
    """A topology ready to be stored and scheduled.

    Attributes:
        cluster: the cluster name.
        topology: the logical plan message, whose ``topology_config`` is the resolved config.
        config: the resolved config (every registered key present).
        packing_plan: the packing plan.
        working_dir: W, ``<heron.directory.home>/topologies/<cluster>/<name>``.
        code_root: the directory copied to ``W/code``, the working directory of every
            instance (None: nothing to copy; ``W/code`` is empty).
    """

    cluster: str
    topology: topology_pb2.Topology
    config: dict[str, Any]
    packing_plan: packing_plan_pb2.PackingPlan
    working_dir: Path
    code_root: Path | None

    @property
    def size(self) -> str:
        """``"5 instances in 2 containers"``, for messages."""
        instances = sum(len(c.instances) for c in self.packing_plan.containers)
        containers = len(self.packing_plan.containers)
        return (
            f"{instances} instance{'s' * (instances != 1)} in "
            f"{containers} container{'s' * (containers != 1)}"
        )

    @property
    def inert_settings(self) -> list[str]:
        """The settings of the topology's config and of its components' configs that this
        engine accepts but cannot act on (see `heron_core.config.inert_settings`), one line
        each, for ``heron submit`` and ``heron run`` to print."""
        lines = inert_settings(self.config)
        for comp in [
            *(s.comp for s in self.topology.spouts),
            *(b.comp for b in self.topology.bolts),
        ]:
            for line in inert_settings(config_from_proto(comp.config)):
                lines.append(f"component {comp.name!r}: {line}")
        return lines

    @property
    def runtime(self) -> TopologyRuntime:
        """What a scheduler needs to know about this topology."""
        return TopologyRuntime(self.topology.name, self.topology.id, self.cluster, self.working_dir)


@dataclass(frozen=True)
class SubmitResult:
    """A submitted topology.

    Attributes:
        name: the topology's name.
        topology_id: its id (every one of its processes has ``--topology-id <id>``).
        cluster: the cluster it runs on.
        working_dir: its working directory (logs in ``logs/``).
        scheduler_pid: the pid of its scheduler service.
    """

    name: str
    topology_id: str
    cluster: str
    working_dir: Path
    scheduler_pid: int


def prepare(
    cluster: str,
    loaded: LoadedTopology,
    overrides: Sequence[str] = (),
    config_path: str | os.PathLike[str] | None = None,
    heron_home: str | os.PathLike[str] | None = None,
) -> Deployment:
    """Resolve the config (registry defaults < cluster YAML < topology config < command line,
    see `client_config`), let the scheduler it names check it (`Scheduler.validate_config`)
    and pack the topology. Touches no state and no file.

    Raises:
        ConfigurationError: a bad config layer or override, or a config the scheduler cannot
            run.
        UserCodeError: a ``topology.auto.task.hooks`` entry does not resolve to a class.
        SchedulerError: something the scheduler needs is not installed.
        PackingError: the instances do not fit.
    """
    plan = loaded.plan
    config = client_config(
        cluster,
        config_path=config_path,
        heron_home=heron_home,
        overrides=overrides,
        topology_config=plan.config,
    )
    config["topology.name"] = plan.name
    auto_hook_classes(config.get("topology.auto.task.hooks") or (), f"topology {plan.name!r}")
    create_scheduler(config["heron.class.scheduler"]).validate_config(config)
    topology = plan.to_proto()
    topology.topology_config.CopyFrom(config_to_proto(config))
    packing = create_packing(config["heron.class.packing.algorithm"]).pack(topology, config)
    return Deployment(
        cluster,
        topology,
        config,
        packing,
        working_dir(config, cluster, plan.name),
        loaded.code_root,
    )


def _ignore(skip: Sequence[Path]) -> Callable[[str, list[str]], set[str]]:
    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory)
        return {
            name
            for name in names
            if name in _IGNORED_NAMES
            or name.endswith((".pyc", ".pyo"))
            or (here / name / "pyvenv.cfg").exists()  # a virtualenv
            or any((here / name).absolute() == path for path in skip)
        }

    return ignore


def install(state: StateManager, deployment: Deployment, progress: Progress = quiet) -> None:
    """Create W (``code/`` copied from the code root, see `code_dir`; ``logs/``; the
    topology's fresh CURVE key pair in ``keys/``, owner-only, see `TopologyKeys`) and store the
    topology, its packing plan and its execution state, in that order, sealed with the new
    pair's `StateKey` (which ``state`` holds from then on). On failure, whatever was stored is
    deleted in reverse order and W is removed.

    Raises:
        SchedulerError: a topology of that name already exists on the cluster.
        StateManagerError: the state cannot be written.
    """
    topology, cluster, root = deployment.topology, deployment.cluster, deployment.working_dir
    name = topology.name
    existing = state.get_topology(name)
    if existing is not None:
        raise SchedulerError(
            f"topology {name!r} already exists on cluster {cluster!r} (id {existing.id}); "
            f"kill it first: heron kill {cluster} {name}"
        )
    shutil.rmtree(root, ignore_errors=True)  # left over from a topology no longer in the state
    home = Path(deployment.config["heron.directory.home"]).expanduser().absolute()
    code = code_dir(root)
    if deployment.code_root is not None:
        progress(f"copying {deployment.code_root} to {code}")
        shutil.copytree(deployment.code_root, code, ignore=_ignore([home, root]))
    code.mkdir(parents=True, exist_ok=True)
    (root / "logs").mkdir(parents=True, exist_ok=True)
    state.add_key(StateKey.of(name, TopologyKeys.create(root / KEYS_DIR)))
    execution = execution_state_pb2.ExecutionState(
        topology_name=name,
        topology_id=topology.id,
        submission_time=int(time.time()),
        submission_user=getpass.getuser(),
        cluster=cluster,
        role=getpass.getuser(),
        release_version=importlib.metadata.version("heron-storm"),
        working_directory=str(root),
    )
    undo: list[Callable[[str], None]] = []
    try:
        state.set_topology(name, topology)
        undo.append(state.delete_topology)
        state.set_packing_plan(name, deployment.packing_plan)
        undo.append(state.delete_packing_plan)
        state.set_execution_state(name, execution)
        undo.append(state.delete_execution_state)
    except BaseException:
        for delete in reversed(undo):
            delete(name)
        shutil.rmtree(root, ignore_errors=True)
        raise


def _launch_service(deployment: Deployment) -> tuple[subprocess.Popen[bytes], int]:
    """Start the scheduler service; returns it and the read end of its report pipe."""
    read_fd, write_fd = os.pipe()
    argv = service_argv(
        deployment.runtime,
        state_config_json(deployment.config),
        report_fd=write_fd,
        supervise=True,
    )
    root = deployment.working_dir
    try:
        with (root / "logs" / "scheduler.log").open("ab") as log:
            proc = subprocess.Popen(
                argv,
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(write_fd,),
            )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    launched.remember(proc)
    return proc, read_fd


def _log_tail(deployment: Deployment) -> str:
    log_path = deployment.working_dir / "logs" / "scheduler.log"
    try:
        lines = [line for line in log_path.read_text(errors="replace").splitlines() if line]
    except OSError:
        lines = []
    last = f" (its last line: {lines[-1].strip()})" if lines else ""
    return f"see {log_path}{last}"


def _wait_until_running(
    deployment: Deployment,
    proc: subprocess.Popen[bytes],
    report_fd: int,
    timeout: float,
    progress: Progress,
) -> None:
    """Follow the service's reports until it says every container runs.

    Raises:
        HeronError: the error the service reported (its own class: ConfigurationError,
            SchedulerError, StateManagerError, ...).
        SchedulerError: the service exited without a report, or nothing ran within
            ``timeout`` seconds.
    """
    name = deployment.topology.name
    deadline = time.monotonic() + timeout
    pending = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SchedulerError(
                f"the containers of topology {name!r} were not all running within "
                f"{timeout:.0f} s ({STARTUP_TIMEOUT_KEY}); {_log_tail(deployment)}"
            )
        readable, _, _ = select.select([report_fd], [], [], min(left, 1.0))
        if not readable:
            continue
        chunk = os.read(report_fd, 65536)
        if not chunk:  # the service closed its end without saying it runs: it died
            try:
                code = proc.wait(timeout=10.0)
                what = f"exited with {describe_exit(code)}"
            except subprocess.TimeoutExpired:
                what = "stopped reporting"
            raise SchedulerError(
                f"the scheduler of topology {name!r} {what}; {_log_tail(deployment)}"
            )
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            report = parse_report(line)
            if report.event == "error":
                raise report.error()
            if report.event == "running":
                return
            if report.message:
                progress(report.message)


def submit(
    cluster: str,
    spec: str | LoadedTopology,
    name: str | None = None,
    overrides: Sequence[str] = (),
    config_path: str | os.PathLike[str] | None = None,
    *,
    heron_home: str | os.PathLike[str] | None = None,
    progress: Progress = quiet,
    timeout: float | None = None,
) -> SubmitResult:
    """Submit the topology ``spec`` (see `load_topology`) to ``cluster`` and return once every
    container runs.

    Steps: load and build the plan; resolve the config (`client_config`) and let the
    scheduler check it; pack; create W and copy the code root to ``W/code``; store topology,
    packing plan and execution state (see `install`); start the scheduler service
    (``python -m heron_core.scheduler``, a detached daemon logging to
    ``W/logs/scheduler.log``) and follow its reports on a pipe until it says the physical
    plan exists (every container runs) or reports an error. If it does not get there,
    everything is undone and the error is raised.

    Args:
        cluster: the cluster name (a ``<cluster>.yaml`` in the config directory).
        spec: the topology: a Python file or ``module:attr``, or a topology another front
            end already loaded (e.g. ``heron sparse submit``'s streamparse project).
        name: the topology name (default: the topology's own); unused for a
            `LoadedTopology`, whose plan is named already.
        overrides: ``key=value`` config overrides (the command line layer).
        config_path: the directory of cluster YAML files (default: the built-in ones).
        heron_home: overrides ``heron.directory.home`` (default: ``$HERON_HOME``).
        progress: receives progress messages.
        timeout: seconds to wait for every container to run (default:
            ``heron.scheduler.startup.timeout.secs``).

    Raises:
        ConfigurationError, TopologyValidationError, UserCodeError: a bad topology or config.
        PackingError: the topology does not fit the containers.
        SchedulerError: the name is taken, or the containers did not start (the scheduler's
            own message: too few Spark task slots, an unreachable master, ...).
        StateManagerError: the state manager is unusable.
    """
    loaded = spec if isinstance(spec, LoadedTopology) else load_topology(spec, name)
    progress(f"loaded topology {loaded.plan.name!r} from {loaded.origin}")
    deployment = prepare(cluster, loaded, overrides, config_path, heron_home)
    progress(f"packed {deployment.size}")
    for line in deployment.inert_settings:
        progress(f"note: {line}")
    if timeout is None:
        timeout = float(deployment.config[STARTUP_TIMEOUT_KEY])
    with create_state_manager(deployment.config, cluster) as state:
        install(state, deployment, progress)
        proc: subprocess.Popen[bytes] | None = None
        report_fd = -1
        try:
            proc, report_fd = _launch_service(deployment)
            progress(f"started the scheduler (pid {proc.pid}); waiting for the containers")
            _wait_until_running(deployment, proc, report_fd, timeout, progress)
            pid = proc.pid
        except BaseException:
            stop_topology_processes(
                deployment.topology.id,
                proc.pid if proc is not None else None,
                stop_timeout_secs(deployment.config),
                progress,
            )
            if proc is not None:
                launched.reap(proc.pid)
            uninstall(state, deployment.topology.name, deployment.working_dir)
            raise
        finally:
            if report_fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(report_fd)
    progress(
        f"topology {deployment.topology.name!r} is running on cluster {cluster!r}; "
        f"logs in {deployment.working_dir / 'logs'}"
    )
    return SubmitResult(
        deployment.topology.name, deployment.topology.id, cluster, deployment.working_dir, pid
    )
