"""The executor's loop: start the desired processes, reap them, restart them by the policy."""

from __future__ import annotations

import logging
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from heron_core.config import REGISTRY, setting
from heron_core.executor._children import describe_exit, spawn, stop_processes
from heron_core.executor._exception import last_exception_in
from heron_core.executor._processes import ProcessSpec
from heron_core.executor._reconcile import (
    ProcessRecord,
    RestartPolicy,
    Verb,
    reconcile,
    record_exit,
)
from heron_core.executor._signals import StopSignals
from heron_core.executor._status import StatusFile

__all__ = ["Supervisor", "executor_grace_secs", "stop_grace_secs"]

log = logging.getLogger(__name__)
exits_log = logging.getLogger("heron_core.executor.exits")
"""Every exit of a child and giving up on one: what the status file reports too (readers
that show the status file skip this logger's records)."""

_GRACE_KEY = "heron.executor.stop.grace.secs"
"""How long a stopped process gets between SIGTERM and SIGKILL."""

_EXECUTOR_MARGIN_SECS = 5.0
"""What a scheduler gives an executor on top of the grace the executor gives its children,
so that it can stop them (and log it) itself."""


def stop_grace_secs(config: Mapping[str, Any]) -> float:
    """Seconds an executor gives each process it stops between SIGTERM and SIGKILL:
    ``heron.executor.stop.grace.secs`` of a topology's config (its default when unset)."""
    return float(setting(config, _GRACE_KEY))


def executor_grace_secs(config: Mapping[str, Any]) -> float:
    """Seconds a scheduler gives each executor it stops between SIGTERM and SIGKILL: the
    executor's own grace for its children plus a margin."""
    return stop_grace_secs(config) + _EXECUTOR_MARGIN_SECS


_MAX_IDLE_SECS = 1.0


class Supervisor:
    """Keeps one container's processes running until SIGTERM or SIGINT.

    Each process is started in its spec's ``cwd`` (default: ``working_dir``) with stdout and
    stderr appended to ``working_dir/logs/<name>.log``; every exit is logged with name, pid
    and status; a process that dies is restarted by `reconcile` under ``policy``, and the
    instances bound to a stream manager are restarted with it. Children get
    ``PR_SET_PDEATHSIG(SIGKILL)``. Starts, crashes and exits are also counted in ``status``
    (written after every loop that changed them).

    Args:
        desired: the processes to keep running, by name (see `desired_processes`).
        working_dir: the topology's working directory W.
        policy: the restart policy.
        grace_secs: how long a stopped process gets between SIGTERM and SIGKILL.
        clock: monotonic seconds; injectable for tests.
        status: where starts, crashes and exits are counted (default: in memory only).
    """

    def __init__(
        self,
        desired: Mapping[str, ProcessSpec],
        working_dir: Path,
        policy: RestartPolicy,
        *,
        grace_secs: float = REGISTRY[_GRACE_KEY].default,
        clock: Callable[[], float] = time.monotonic,
        status: StatusFile | None = None,
    ) -> None:
        self._desired = dict(desired)
        self._working_dir = working_dir
        self._policy = policy
        self._grace_secs = grace_secs
        self._clock = clock
        self._records: dict[str, ProcessRecord] = {}
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._kill_deadlines: dict[str, float] = {}
        self.status = status if status is not None else StatusFile(None)

    def run(self, stop: StopSignals | None = None) -> int:
        """Supervise until SIGTERM/SIGINT (returns 0) or until a process exhausts its restarts
        (returns 1). Every child has exited when this returns. Must run on the main thread.

        Args:
            stop: an entered ``StopSignals(wake_on_child_exit=True)`` to use (so that a signal
                that arrived before this call is honoured); by default one is entered here.
        """
        if stop is None:
            with StopSignals(wake_on_child_exit=True) as own:
                return self.run(own)
        try:
            code = self._loop(stop)
        finally:
            self.status.flush()
        self._stop_all()
        return code

    def _loop(self, stop: StopSignals) -> int:
        while not stop.requested:
            now = self._clock()
            self._reap(now)
            for name, record in self._records.items():
                if record.running and now - record.started_at >= self._policy.max_secs:
                    self.status.steady(name)
            due = [now + _MAX_IDLE_SECS, *self._kill_deadlines.values()]
            for action in reconcile(self._desired, self._records, now, self._policy):
                if action.verb is Verb.GIVE_UP:
                    exits_log.error(
                        "giving up on %s: %s; stopping the container", action.name, action.reason
                    )
                    self.status.gave_up(action.name)
                    return 1
                if action.verb is Verb.START:
                    self._start(action.name, now)
                elif action.verb is Verb.KILL:
                    self._request_stop(action.name, action.reason, now)
                elif action.verb is Verb.WAIT and action.at is not None:
                    due.append(action.at)
            self._escalate(now)
            self.status.flush()
            stop.wait(min(due) - self._clock())
        log.info("received %s: stopping %d processes", stop.name, len(self._procs))
        return 0

    def _start(self, name: str, now: float) -> None:
        spec = self._desired[name]
        previous = self._records.get(name)
        crashes = previous.crashes if previous is not None else 0
        try:
            cwd = Path(spec.cwd) if spec.cwd is not None else self._working_dir
            proc = spawn(
                spec.argv, self._working_dir / "logs" / f"{name}.log", cwd, pass_fds=spec.pass_fds
            )
        except OSError as exc:
            log.error("cannot start %s (%s): %s", name, spec.argv[0], exc)
            failed = ProcessRecord(spec, None, now, crashes)
            self._records[name] = record_exit(failed, now, self._policy, expected=False)
            return
        self._procs[name] = proc
        self._records[name] = ProcessRecord(spec, proc.pid, now, crashes)
        self.status.started(name, proc.pid)
        log.info("started %s (pid %d)", name, proc.pid)

    def _request_stop(self, name: str, reason: str, now: float) -> None:
        if name in self._kill_deadlines:
            return
        proc = self._procs[name]
        log.info("stopping %s (pid %d): %s", name, proc.pid, reason)
        proc.send_signal(signal.SIGTERM)
        self._kill_deadlines[name] = now + self._grace_secs

    def _escalate(self, now: float) -> None:
        for name, deadline in self._kill_deadlines.items():
            proc = self._procs[name]
            if now >= deadline and proc.poll() is None:
                log.warning("%s (pid %d) ignored SIGTERM: SIGKILL", name, proc.pid)
                proc.kill()

    def _reap(self, now: float) -> None:
        for name, proc in list(self._procs.items()):
            code = proc.poll()
            if code is None:
                continue
            del self._procs[name]
            expected = self._kill_deadlines.pop(name, None) is not None
            record = record_exit(self._records[name], now, self._policy, expected=expected)
            crashed = not expected and name in self._desired
            self.status.exited(
                name,
                describe_exit(code),
                crashed=crashed,
                in_a_row=record.crashes,
                exception=last_exception_in(self._working_dir / "logs" / f"{name}.log")
                if crashed
                else None,
                at=time.time(),
            )
            if name not in self._desired:
                exits_log.info("%s (pid %d) exited with %s", name, proc.pid, describe_exit(code))
                del self._records[name]
            elif expected:
                exits_log.info(
                    "%s (pid %d) exited with %s; it will be restarted",
                    name,
                    proc.pid,
                    describe_exit(code),
                )
                self._records[name] = record
            else:
                exits_log.warning(
                    "%s (pid %d) exited with %s (crash %d in a row, %d restarts allowed)",
                    name,
                    proc.pid,
                    describe_exit(code),
                    record.crashes,
                    self._policy.max_attempts,
                )
                self._records[name] = record

    def _stop_all(self) -> None:
        # Dependents (instances) first, while their stream manager still takes what they
        # flush on the way out; then everything else.
        dependents = {
            name: proc
            for name, proc in self._procs.items()
            if self._desired.get(name) is not None and self._desired[name].depends_on
        }
        # Both phases share one grace period (the scheduler gives the executor a little more).
        start = time.monotonic()
        stop_processes(dependents, self._grace_secs)
        floor = min(self._grace_secs, 1.0)  # the rest get a moment even when phase 1 took all
        remaining = max(self._grace_secs - (time.monotonic() - start), floor)
        stop_processes({n: p for n, p in self._procs.items() if n not in dependents}, remaining)
        for name, proc in self._procs.items():
            log.info("%s (pid %d) exited with %s", name, proc.pid, describe_exit(proc.wait()))
        self._procs.clear()
