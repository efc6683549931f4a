"""LocalScheduler: one executor process per container on this host, restarted when it dies."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from heron_core.errors import SchedulerError
from heron_core.executor import (
    DaemonContext,
    ProcessRecord,
    ProcessSpec,
    RestartPolicy,
    describe_exit,
    executor_grace_secs,
    record_exit,
    spawn,
    state_config_json,
)
from heron_core.proto import packing_plan_pb2
from heron_core.scheduler.base import Scheduler, TopologyRuntime

__all__ = ["LocalScheduler"]

log = logging.getLogger(__name__)


class LocalScheduler(Scheduler):
    """Runs ``python -m heron_core.executor`` for container 0 and each container of the plan.

    One monitor thread per container starts its executor (stdout and stderr to
    ``W/logs/executor-<K>.log``, cwd W, in a session of its own so that a terminal's Ctrl-C
    reaches only this process), waits for it and, unless the topology is being
    killed, restarts it with the back-off of the ``heron.executor.restart.*`` keys (never
    giving up). Executors get ``PR_SET_PDEATHSIG(SIGKILL)`` bound to their monitor thread,
    which lives as long as they do.

    Args:
        command_prefix: the argv that runs a module, followed by ``heron_core.executor``
            (default: this Python with ``-m``); a test seam for fake executors.
        grace_secs: how long executors get between SIGTERM and SIGKILL in `on_kill` (default:
            the topology's ``heron.executor.stop.grace.secs`` plus a margin, see
            `executor_grace_secs`).
        clock: monotonic seconds, for the restart back-off.
    """

    def __init__(
        self,
        *,
        command_prefix: Sequence[str] = (sys.executable, "-m"),
        grace_secs: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._command_prefix = tuple(command_prefix)
        self._grace_override = grace_secs
        self._grace_secs = executor_grace_secs({}) if grace_secs is None else grace_secs
        self._clock = clock
        self._lock = threading.Lock()
        self._killed = threading.Event()
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._restarting: set[int] = set()
        self._retired: set[int] = set()  # containers an update removed: not started again
        self._threads: dict[int, threading.Thread] = {}
        self._runtime: TopologyRuntime | None = None
        self._context: DaemonContext | None = None
        self._policy: RestartPolicy | None = None
        self._failure: str | None = None

    def initialize(self, config: Mapping[str, Any], runtime: TopologyRuntime) -> None:
        """See `Scheduler.initialize`; reads the state-manager, restart and stop-grace keys of
        ``config``."""
        self._runtime = runtime
        self._policy = RestartPolicy.from_config(config)
        if self._grace_override is None:
            self._grace_secs = executor_grace_secs(config)
        self._context = DaemonContext(
            topology_name=runtime.topology_name,
            topology_id=runtime.topology_id,
            cluster=runtime.cluster,
            working_dir=str(runtime.working_dir),
            state_config=state_config_json(config),
            command_prefix=self._command_prefix,
        )

    def on_schedule(self, packing_plan: packing_plan_pb2.PackingPlan) -> None:
        """See `Scheduler.on_schedule`; returns once every executor was started once."""
        if self._context is None or self._runtime is None or self._policy is None:
            raise SchedulerError("LocalScheduler.on_schedule called before initialize")
        if self._threads:
            raise SchedulerError(
                f"topology {self._context.topology_name!r}: the local scheduler already "
                "scheduled a packing plan"
            )
        containers = [0, *sorted(c.id for c in packing_plan.containers)]
        self._start(containers)
        log.info(
            "topology %r: started executors for containers %s",
            self._context.topology_name,
            ", ".join(map(str, containers)),
        )

    def _start(self, containers: Sequence[int]) -> None:
        """Start a monitor thread for each of ``containers``; returns once each executor was
        started once."""
        assert self._context is not None and self._runtime is not None
        assert self._policy is not None
        started = {k: threading.Event() for k in containers}
        for k in containers:
            spec = ProcessSpec(
                f"executor-{k}",
                self._context.command("heron_core.executor", *self._context.common_flags(k)),
            )
            thread = threading.Thread(
                target=self._monitor,
                args=(k, spec, started[k], self._policy, self._runtime.working_dir),
                name=spec.name,
                daemon=True,
            )
            self._threads[k] = thread
            thread.start()
        for event in started.values():
            event.wait()

    def executor_pids(self) -> dict[int, int]:
        """The pid of each container's running executor, by container id."""
        with self._lock:
            return {k: proc.pid for k, proc in self._procs.items()}

    def _monitor(
        self,
        container: int,
        spec: ProcessSpec,
        started: threading.Event,
        policy: RestartPolicy,
        working_dir: Path,
    ) -> None:
        crashes = 0
        while not self._killed.is_set() and container not in self._retired:
            now = self._clock()
            proc = self._launch(container, spec, working_dir)
            started.set()
            if proc is not None:
                log.info("started %s (pid %d)", spec.name, proc.pid)
                code = proc.wait()
                log.info("%s (pid %d) exited with %s", spec.name, proc.pid, describe_exit(code))
            with self._lock:
                self._procs.pop(container, None)
                expected = container in self._restarting
                self._restarting.discard(container)
            if self._killed.is_set() or container in self._retired:
                break
            if not expected:
                self._note_failure(container, spec, working_dir)
            record = record_exit(
                ProcessRecord(spec, None, now, crashes), self._clock(), policy, expected=expected
            )
            crashes = record.crashes
            delay = max(record.restart_at - self._clock(), 0.0)
            log.info("restarting %s in %.1f s", spec.name, delay)
            self._killed.wait(delay)
        started.set()

    def _note_failure(self, container: int, spec: ProcessSpec, working_dir: Path) -> None:
        log_path = working_dir / "logs" / f"{spec.name}.log"
        try:
            lines = [line for line in log_path.read_text(errors="replace").splitlines() if line]
        except OSError:
            lines = []
        last = f": {lines[-1].strip()}" if lines else ""
        with self._lock:
            if self._failure is None:
                self._failure = (
                    f"the executor of container {container} exited; see {log_path}{last}"
                )

    def failure(self) -> str | None:
        """See `Scheduler.failure`: the first exit of an executor nobody asked to stop."""
        with self._lock:
            return self._failure

    def _launch(
        self, container: int, spec: ProcessSpec, working_dir: Path
    ) -> subprocess.Popen[bytes] | None:
        """Start the executor unless the topology is being killed (None then, or on failure)."""
        with self._lock:
            if self._killed.is_set() or container in self._retired:
                return None
            try:
                proc = spawn(
                    spec.argv,
                    working_dir / "logs" / f"{spec.name}.log",
                    working_dir,
                    new_session=True,
                )
            except OSError as exc:
                log.error("cannot start %s (%s): %s", spec.name, spec.argv[0], exc)
                return None
            self._procs[container] = proc
            return proc

    def on_kill(self) -> None:
        """See `Scheduler.on_kill`."""
        with self._lock:
            self._killed.set()
            procs = list(self._procs.values())
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self._grace_secs
        for thread in self._threads.values():
            thread.join(max(deadline - time.monotonic(), 0.0))
        with self._lock:
            stubborn = list(self._procs.values())
        for proc in stubborn:
            log.warning(
                "executor pid %d ignored SIGTERM for %.0f s: SIGKILL", proc.pid, self._grace_secs
            )
            proc.kill()
        for thread in self._threads.values():
            thread.join()

    def on_restart(self, container: int) -> None:
        """See `Scheduler.on_restart`: the executor gets SIGTERM and is started again at once."""
        name = self._runtime.topology_name if self._runtime else "?"
        if not self._threads or self._killed.is_set():
            raise SchedulerError(f"topology {name!r} is not running under this scheduler")
        if container != -1 and container not in self._threads:
            known = ", ".join(map(str, sorted(self._threads)))
            raise SchedulerError(
                f"topology {name!r} has no container {container}; containers: {known} or -1 for all"
            )
        with self._lock:
            targets = list(self._procs) if container == -1 else [container]
            for k in targets:
                proc = self._procs.get(k)
                if proc is not None:
                    self._restarting.add(k)
                    log.info("restarting executor-%d (pid %d) on request", k, proc.pid)
                    proc.send_signal(signal.SIGTERM)

    def on_update(self, packing_plan: packing_plan_pb2.PackingPlan) -> None:
        """See `Scheduler.on_update`: the executors of removed containers get SIGTERM (SIGKILL
        after the grace period) and are not started again; every other executor is restarted
        (SIGTERM, then started again at once); new containers get an executor."""
        name = self._runtime.topology_name if self._runtime else "?"
        if not self._threads or self._killed.is_set():
            raise SchedulerError(f"topology {name!r} is not running under this scheduler")
        wanted = {0, *(c.id for c in packing_plan.containers)}
        running = {k for k in self._threads if k not in self._retired}
        removed, added = sorted(running - wanted), sorted(wanted - running)
        with self._lock:
            self._retired.update(removed)
            self._retired.difference_update(added)
            for k in sorted(running):
                proc = self._procs.get(k)
                if proc is None:
                    continue
                if k in wanted:
                    self._restarting.add(k)
                log.info("update: stopping executor-%d (pid %d)", k, proc.pid)
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self._grace_secs
        for k in removed:
            self._threads[k].join(max(deadline - time.monotonic(), 0.0))
            with self._lock:
                proc = self._procs.get(k)
            if proc is not None:
                log.warning("executor-%d ignored SIGTERM: SIGKILL", k)
                proc.kill()
            self._threads.pop(k).join()
        if added:
            self._start(added)
        log.info(
            "topology %r updated: containers %s removed, %s added, the others restarted",
            name,
            removed or "none",
            added or "none",
        )

    def close(self) -> None:
        """See `Scheduler.close`."""
        if self._threads:
            self.on_kill()
