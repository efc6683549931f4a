"""``LocalCluster``: topologies run on this machine through the real process model.

Each submitted topology gets the kernel's `LocalScheduler` in this process (its executors
are children of this process and die with it), a localfs state in the cluster's heron home,
and a working directory there. ``heron_core.client`` has no "start in the background, stop
later" call, so this module composes its public steps (`prepare`, `install`, `uninstall`).
"""

from __future__ import annotations

import contextlib
import getpass
import itertools
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from heron_core.client import (
    CONTROL_TIMEOUT_S,
    Deployment,
    LogFollower,
    TManagerClient,
    install,
    plan_update,
    prepare,
    request_topology_state,
    topology_processes,
    uninstall,
    update_topology,
)
from heron_core.errors import HeronError, SchedulerError, UserCodeError
from heron_core.proto import tmanager_pb2, topology_pb2
from heron_core.scheduler import LocalScheduler, apply_update
from heron_core.statemgr import StateManager, create_state_manager
from storm_compat._code import load_storm_topology
from storm_compat.thrift import storm_thrift
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
        self.started = time.monotonic()
        self.packing_plan = deployment.packing_plan

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

    def dump_stacks(self, settle_s: float = 2.0) -> int:
        """Have every process of the topology print each thread's stack to its log (SIGUSR1:
        see ``heron_core._logging.enable_stack_dumps``), for a topology that hangs; waits up to
        ``settle_s`` for the logs to stop growing. Returns how many processes were signalled."""
        signalled = 0
        for process in topology_processes(self.topology_id):
            with contextlib.suppress(psutil.Error):
                process.send_signal(signal.SIGUSR1)
                signalled += 1
        logs = self.deployment.working_dir / "logs"

        def size() -> int:
            return sum(p.stat().st_size for p in logs.glob("*.log") if p.is_file())

        deadline, before = time.monotonic() + settle_s, -1
        while time.monotonic() < deadline and size() != before:
            before = size()
            time.sleep(0.2)
        return signalled

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

    def rebalance(
        self, parallelism: Mapping[str, int], containers: int | None, wait_secs: float
    ) -> None:
        """Run with ``parallelism`` (component -> instances) and ``containers``, through the
        same path as ``heron update`` (`heron_core.client.update_topology`): deactivated for
        ``wait_secs``, repacked, every container restarted with the new plans, activated
        again; returns once the new physical plan runs.

        Raises:
            ConfigurationError: an unknown component, a parallelism below 1, nothing to change.
            PackingError: the new plan does not fit.
            SchedulerError: the new plan did not run in time.
        """
        plan = plan_update(self._state, CLUSTER, self.name, parallelism, containers)

        def apply() -> str:
            return apply_update(
                self._state, self._scheduler, self.name, plan.topology, plan.packing_plan
            )

        update_topology(self._state, self.name, plan, apply, wait_secs=wait_secs)
        self.packing_plan = plan.packing_plan
        self._seen.clear()  # every instance was restarted on purpose

    def uptime_secs(self) -> int:
        """Whole seconds since it was submitted."""
        return int(time.monotonic() - self.started)

    def status(self) -> str:
        """Storm's status: ``"ACTIVE"``, or ``"INACTIVE"`` while deactivated."""
        topology = self._state.get_topology(self.name)
        paused = topology is not None and topology.state == topology_pb2.PAUSED
        return "INACTIVE" if paused else "ACTIVE"

    def summary(self) -> Any:
        """Storm's ``TopologySummary`` of it (tasks = executors = instances; workers =
        containers with instances)."""
        plan = self.packing_plan
        tasks = sum(len(c.instances) for c in plan.containers)
        return storm_thrift().TopologySummary(
            id=self.topology_id,
            name=self.name,
            num_tasks=tasks,
            num_executors=tasks,
            num_workers=len(plan.containers),
            uptime_secs=self.uptime_secs(),
            status=self.status(),
            owner=getpass.getuser(),
        )

    def info(self) -> Any:
        """Storm's ``TopologyInfo`` of it: one executor per instance of the physical plan (its
        stream manager's host and data port), and per component the errors its topology
        manager logged (Heron's exception log: the last time, the host and the trace)."""
        thrift = storm_thrift()
        plan = self._state.get_physical_plan(self.name)
        stmgrs = {} if plan is None else {s.id: s for s in plan.stmgrs}
        executors = []
        for instance in [] if plan is None else plan.instances:
            stmgr = stmgrs.get(instance.stmgr_id)
            task = instance.info.task_id
            executors.append(
                thrift.ExecutorSummary(
                    executor_info=thrift.ExecutorInfo(task_start=task, task_end=task),
                    component_id=instance.info.component_name,
                    host=stmgr.host_name if stmgr is not None else "",
                    port=stmgr.data_port if stmgr is not None else 0,
                    uptime_secs=self.uptime_secs(),
                )
            )
        return thrift.TopologyInfo(
            id=self.topology_id,
            name=self.name,
            uptime_secs=self.uptime_secs(),
            executors=executors,
            status=self.status(),
            errors=self._errors({e.component_id for e in executors}),
            owner=getpass.getuser(),
        )

    def _errors(self, components: set[str]) -> dict[str, list[Any]]:
        thrift = storm_thrift()
        errors: dict[str, list[Any]] = {c: [] for c in components}
        client = TManagerClient(self._state, self.name)
        try:
            for component in sorted(components):
                request = tmanager_pb2.ExceptionLogRequest(component_name=component)
                response = client.ask(request)
                if not isinstance(response, tmanager_pb2.ExceptionLogResponse):
                    continue
                for entry in response.exceptions:
                    last = datetime.fromisoformat(entry.lasttime) if entry.lasttime else None
                    errors[component].append(
                        thrift.ErrorInfo(
                            error=entry.stacktrace or entry.logging,
                            error_time_secs=int(last.timestamp()) if last else 0,
                            host=entry.hostname,
                        )
                    )
        except HeronError:
            pass  # no topology manager (yet): no errors known
        finally:
            client.close()
        return errors

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
        self._started = time.monotonic()

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

    def killTopologyWithOpts(self, name: str, opts: Any) -> None:
        """Storm's kill with ``KillOptions``: the topology is deactivated (its spouts get
        ``deactivate()``, tuples in flight finish), then killed ``opts.wait_secs`` seconds
        later (unset: its ``topology.message.timeout.secs``, as Storm waits); 0 kills at once.

        Raises:
            SchedulerError: no such topology, or its topology manager did not answer.
        """
        running = self.topology(name)
        wait = getattr(opts, "wait_secs", None)
        if wait is None:
            wait = running.deployment.config["topology.message.timeout.secs"]
        if wait > 0:
            running.request_state(topology_pb2.PAUSED)
            time.sleep(wait)
        self.killTopology(name)

    def getClusterInfo(self) -> Any:
        """Storm's ``ClusterSummary``: this machine as the one supervisor and nimbus, and a
        ``TopologySummary`` per running topology (status ``ACTIVE`` or ``INACTIVE``)."""
        thrift = storm_thrift()
        host = socket.gethostname()
        uptime = int(time.monotonic() - self._started)
        topologies = [running.summary() for running in self._topologies.values()]
        workers = sum(t.num_workers for t in topologies)
        return thrift.ClusterSummary(
            supervisors=[
                thrift.SupervisorSummary(
                    host=host,
                    uptime_secs=uptime,
                    num_workers=workers,
                    num_used_workers=workers,
                    supervisor_id=f"local-{host}",
                )
            ],
            nimbus_uptime_secs=uptime,
            topologies=topologies,
            nimbuses=[thrift.NimbusSummary(host=host, port=0, uptime_secs=uptime, isLeader=True)],
        )

    def getTopologyInfo(self, topologyId: str) -> Any:
        """Storm's ``TopologyInfo`` of the running topology whose id (not name, as in Storm)
        is ``topologyId``: an ``ExecutorSummary`` per task and the errors its components
        reported (``reportError``, uncaught exceptions), newest last.

        Raises:
            SchedulerError: no running topology has that id (the message lists the ids).
        """
        for running in self._topologies.values():
            if running.topology_id == topologyId:
                return running.info()
        ids = ", ".join(sorted(r.topology_id for r in self._topologies.values())) or "none"
        raise SchedulerError(f"no topology with id {topologyId!r} in this LocalCluster; ids: {ids}")

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

    def rebalance(self, name: str, options: Any) -> None:
        """Storm's rebalance with ``RebalanceOptions``: ``num_executors`` (component ->
        instances) and ``num_workers`` (containers) change the parallelism as ``heron update``
        does. The spouts are deactivated for ``wait_secs`` first (unset: the topology's
        ``topology.message.timeout.secs``, as Storm waits), then every container restarts
        with the new plan. Unlike Storm it returns once the new plan runs.

        Raises:
            SchedulerError: no such topology, or the new plan did not run in time.
            ConfigurationError: an unknown component, a count below 1, or nothing to change.
            PackingError: the new plan does not fit.
        """
        running = self.topology(name)
        wait = getattr(options, "wait_secs", None)
        if wait is None:
            wait = running.deployment.config["topology.message.timeout.secs"]
        executors = getattr(options, "num_executors", None) or {}
        running.rebalance(dict(executors), getattr(options, "num_workers", None), float(wait))

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
