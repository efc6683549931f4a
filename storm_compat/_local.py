"""``LocalCluster``: topologies run on this machine through the real process model.

Each submitted topology gets the kernel's `LocalScheduler` in this process (its executors
are children of this process and die with it), a localfs state in the cluster's heron home,
and a working directory there. ``heron_core.client`` has no "start in the background, stop
later" call, so this module composes its public steps (`prepare`, `install`, `uninstall`).
"""

from __future__ import annotations

import itertools
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from heron_core.client import (
    CONTROL_TIMEOUT_S,
    Deployment,
    LogFollower,
    install,
    prepare,
    request_topology_state,
    topology_processes,
    uninstall,
)
from heron_core.errors import SchedulerError, UserCodeError
from heron_core.proto import topology_pb2
from heron_core.scheduler import LocalScheduler
from heron_core.statemgr import StateManager, create_state_manager
from storm_compat._code import load_storm_topology
from storm_compat.topology import StormTopology

__all__ = ["LocalCluster"]

CLUSTER = "local"
TMANAGER_TIMEOUT_S = CONTROL_TIMEOUT_S
"""How long activate/deactivate wait for the topology manager to come up and answer."""
_LOG_LINES = 60


@dataclass(frozen=True)
class _Instance:
    """One instance process seen running: its task, component, container and pid."""

    task: int
    component: str
    container: int
    pid: int


def _to_stderr(line: str) -> None:
    stream = sys.stderr  # looked up per line: whatever stderr is now (pytest swaps it)
    stream.write(line + "\n")
    stream.flush()


def _instance_of(argv: list[str], pid: int) -> _Instance | None:
    if "heron_core.instance" not in argv:
        return None
    flags = dict(itertools.pairwise(argv))
    return _Instance(int(flags["--task-id"]), flags["--component"], int(flags["--container"]), pid)


class LocalTopology:
    """One topology a `LocalCluster` runs: its scheduler, state, working directory and the
    follower of its logs (None: nothing is shown)."""

    def __init__(
        self,
        deployment: Deployment,
        scheduler: LocalScheduler,
        state: StateManager,
        follower: LogFollower | None = None,
    ) -> None:
        self.deployment = deployment
        self.name = deployment.topology.name
        self.topology_id = deployment.topology.id
        self._scheduler = scheduler
        self._state = state
        self._seen: dict[int, _Instance] = {}
        self.follower = follower

    def is_running(self) -> bool:
        """Whether the physical plan exists (every instance registered)."""
        return self._state.get_physical_plan(self.name) is not None

    def check_instances(self) -> None:
        """Raise if an instance process seen earlier has died since (the executor restarts
        it; a crash means user code raised).

        Raises:
            UserCodeError: naming the task and component, with the end of its log.
        """
        running: dict[int, _Instance] = {}
        for process in topology_processes(self.topology_id):
            try:
                instance = _instance_of(process.cmdline(), process.pid)
            except psutil.Error:  # it ended meanwhile: judged on the next call
                continue
            if instance is not None:
                running[instance.task] = instance
        for task, seen in self._seen.items():
            now = running.get(task)
            if now is None or now.pid != seen.pid:
                raise UserCodeError(
                    f"topology {self.name!r}: task {task} of component {seen.component!r} "
                    f"died; {self._log_tail(seen)}"
                )
        self._seen.update(running)

    def _log_tail(self, instance: _Instance) -> str:
        name = f"container_{instance.container}_{instance.component}_{instance.task}.log"
        path = self.deployment.working_dir / "logs" / name
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError as exc:
            return f"its log {path} cannot be read: {exc}"
        errors = [i for i, line in enumerate(lines) if " ERROR " in line]
        start = errors[-1] if errors else max(len(lines) - 10, 0)
        tail = "\n".join(lines[start : start + _LOG_LINES])
        return f"its log ({path}) says:\n{tail}"

    def request_state(self, state: topology_pb2.TopologyState.ValueType) -> None:
        """Ask the topology manager to activate (RUNNING) or deactivate (PAUSED); see
        `heron_core.client.request_topology_state` (waits up to `TMANAGER_TIMEOUT_S`).

        Raises:
            SchedulerError: it did not answer in time, or refused.
        """
        request_topology_state(self._state, self.name, state, TMANAGER_TIMEOUT_S)

    def kill(self, keep_dir: bool) -> None:
        """Stop every process, show what they logged on the way out, then delete the state
        and (unless ``keep_dir``) the files; with ``keep_dir``, say where the logs are."""
        try:
            self._scheduler.close()
        finally:
            try:
                if self.follower is not None:
                    self.follower.close()
                    if keep_dir:
                        _to_stderr(f"logs: {self.follower.logs_dir}")
                uninstall(self._state, self.name, self.deployment.working_dir, keep_dir=keep_dir)
            finally:
                self._state.close()


class LocalCluster:
    """Runs topologies on this machine, each task in its own process (Storm's LocalCluster).

    Usable as a context manager; ``shutdown`` (or leaving the ``with`` block) kills every
    topology still running. Processes are children of this process.

    Args:
        heron_home: where state and working directories go (default: a temporary directory,
            removed by ``shutdown``).
        config_path: the directory of cluster YAML files (default: the built-in ones).
        keep_logs: keep each killed topology's working directory (its ``logs/``; the path is
            printed when the topology is killed).
        show_logs: print what the spouts and bolts log to stderr while they run, as Storm's
            local mode prints its workers' logs: every line of their loggers, ``print``,
            multilang ``log`` commands, warnings, errors and tracebacks, as
            ``<component>:<task> | <line>`` (not the engine's routine records). A crash of a
            task is printed as one line either way (see ``heron_core.client.LogFollower``).

    >>> with LocalCluster() as cluster:
    ...     cluster.killTopology("nothing")
    Traceback (most recent call last):
    ...
    heron_core.errors.SchedulerError: no topology 'nothing' in this LocalCluster; running: none
    """

    def __init__(
        self,
        *,
        heron_home: str | Path | None = None,
        config_path: str | Path | None = None,
        keep_logs: bool = False,
        show_logs: bool = True,
    ) -> None:
        self._owns_home = heron_home is None
        self.heron_home = (
            Path(tempfile.mkdtemp(prefix="heron-local-"))
            if heron_home is None
            else Path(heron_home)
        )
        self._config_path = config_path
        self._keep_logs = keep_logs
        self._show_logs = show_logs
        self._topologies: dict[str, LocalTopology] = {}

    def submitTopology(
        self, topologyName: str, conf: Mapping[str, Any] | None, topology: StormTopology
    ) -> None:
        """Start ``topology`` as ``topologyName`` with topology config ``conf``; returns once
        its processes are started (they come up in the background).

        Raises:
            TopologyValidationError, ConfigurationError: a bad topology or config.
            PackingError: it does not fit the containers.
            SchedulerError: the name is taken.
        """
        loaded = load_storm_topology(topologyName, conf, topology)
        deployment = prepare(CLUSTER, loaded, (), self._config_path, self.heron_home)
        for line in deployment.inert_settings:
            _to_stderr(f"{topologyName}: note: {line}")
        scheduler = LocalScheduler()
        scheduler.initialize(deployment.config, deployment.runtime)
        state = create_state_manager(deployment.config, CLUSTER)
        state.start()
        try:
            install(state, deployment)
        except BaseException:
            state.close()
            raise
        logs = deployment.working_dir / "logs"
        follower = LogFollower(logs, _to_stderr, show_logs=self._show_logs, from_start=True)
        running = LocalTopology(deployment, scheduler, state, follower)
        try:
            scheduler.on_schedule(deployment.packing_plan)
            follower.start_thread()
        except BaseException:
            running.kill(keep_dir=False)
            raise
        self._topologies[topologyName] = running

    def topology(self, name: str) -> LocalTopology:
        """The running topology ``name``.

        Raises:
            SchedulerError: no such topology (the message lists the running ones).
        """
        running = self._topologies.get(name)
        if running is None:
            names = ", ".join(sorted(self._topologies)) or "none"
            raise SchedulerError(f"no topology {name!r} in this LocalCluster; running: {names}")
        return running

    def killTopology(self, name: str) -> None:
        """Stop topology ``name`` at once (Heron's kill: unlike Storm, no deactivation and
        no ``topology.message.timeout.secs`` wait first) and delete its state.

        Raises:
            SchedulerError: no such topology.
        """
        running = self.topology(name)
        del self._topologies[name]
        running.kill(keep_dir=self._keep_logs)

    def activate(self, topologyName: str) -> None:
        """Resume the spouts of ``topologyName`` (their ``activate`` is called).

        Raises:
            SchedulerError: no such topology, or its topology manager did not answer.
        """
        self.topology(topologyName).request_state(topology_pb2.RUNNING)

    def deactivate(self, topologyName: str) -> None:
        """Pause the spouts of ``topologyName``: ``deactivate`` is called and ``nextTuple``
        is not, until ``activate``.

        Raises:
            SchedulerError: no such topology, or its topology manager did not answer.
        """
        self.topology(topologyName).request_state(topology_pb2.PAUSED)

    def shutdown(self) -> None:
        """Kill every running topology and remove the temporary heron home."""
        failures: list[BaseException] = []
        for name in list(self._topologies):
            try:
                self.killTopology(name)
            except Exception as exc:
                failures.append(exc)
        if self._owns_home and not self._keep_logs:
            shutil.rmtree(self.heron_home, ignore_errors=True)
        if failures:
            raise failures[0]

    close = shutdown

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()
