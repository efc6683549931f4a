"""The scheduler as a service: ``python -m heron_core.scheduler``.

A detached daemon started by ``heron submit``: it reads the topology and its packing plan
from the state manager, runs the scheduler its config names (``heron.class.scheduler``:
`LocalScheduler` for the ``local`` clusters, `SparkScheduler` for ``spark``), publishes its
``SchedulerLocation`` (ephemeral, with its pid), waits until the containers run (the
topology's physical plan is written), and on SIGTERM/SIGINT kills the containers and exits 0.
On SIGHUP it carries out the requests filed for it (``heron restart``, see
``heron_core.scheduler._requests``).

With ``--report-fd N`` it tells whoever started it how the start goes, as JSON lines on file
descriptor N (`ServiceReport`): progress, then ``running`` once the physical plan exists, or
``error`` with the message and the error's class; then it closes N. An error while the
containers start (`Scheduler.failure`) ends the service.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil

from heron_core import errors
from heron_core._daemon_flags import DaemonFlags, add_topology_flags, parse_state_config
from heron_core.config import config_from_proto
from heron_core.errors import HeronError, SchedulerError, StateManagerError
from heron_core.executor import StopSignals, configure_daemon_logging, read_plans
from heron_core.proto import scheduler_pb2
from heron_core.scheduler import Scheduler, TopologyRuntime, create_scheduler
from heron_core.scheduler._requests import (
    RequestAnswer,
    RestartRequest,
    pending_requests,
    write_answer,
)
from heron_core.scheduler._update import apply_update
from heron_core.statemgr import StateKey, StateManager, create_state_manager

__all__ = ["MODULE", "ServiceReport", "main", "parse_report", "service_argv"]

log = logging.getLogger("heron_core.scheduler.service")

MODULE = "heron_core.scheduler"

_PLAN_POLL_SECS = 0.25
_SUPERVISE = "--supervise"
_RESTART_DELAY_SECS = 1.0
_MAX_RESTARTS = 10
"""How many times in a row the supervisor starts a service that was killed again (a
service that then ran for ``_STEADY_SECS`` ends the streak)."""
_STEADY_SECS = 60.0


def service_argv(
    runtime: TopologyRuntime,
    state_config: str,
    command_prefix: Sequence[str] = (sys.executable, "-m"),
    report_fd: int | None = None,
    supervise: bool = False,
) -> list[str]:
    """The command line of the scheduler service for ``runtime``'s topology; with
    ``supervise``, of its supervisor (see `main`).

    >>> rt = TopologyRuntime("wc", "wc-1", "local", Path("/w"))
    >>> service_argv(rt, "{}", ("py", "-m"))[:4]
    ['py', '-m', 'heron_core.scheduler', '--topology-name']
    >>> service_argv(rt, "{}", ("py", "-m"), report_fd=5)[-2:]
    ['--report-fd', '5']
    """
    flags = DaemonFlags(
        runtime.topology_name,
        runtime.topology_id,
        runtime.cluster,
        runtime.working_dir,
        state_config=state_config,
    )
    argv = [*command_prefix, MODULE, *flags.argv()]
    if report_fd is not None:
        argv += ["--report-fd", str(report_fd)]
    if supervise:
        argv.append(_SUPERVISE)
    return argv


@dataclass(frozen=True)
class ServiceReport:
    """One line the service writes on its report descriptor.

    Attributes:
        event: ``"progress"``, ``"running"`` (the physical plan exists) or ``"error"``.
        message: what happened, for the user.
        error_type: for an error, the name of its `heron_core.errors` class.

    >>> parse_report(ServiceReport("error", "boom", "ConfigurationError").encode())
    ServiceReport(event='error', message='boom', error_type='ConfigurationError')
    >>> parse_report(b"not json").event
    'progress'
    """

    event: str
    message: str
    error_type: str = ""

    def encode(self) -> bytes:
        """One JSON line."""
        fields = {"event": self.event, "message": self.message, "error_type": self.error_type}
        return (json.dumps(fields) + "\n").encode()

    def error(self) -> HeronError:
        """The error this report carries, as its `heron_core.errors` class (default
        `SchedulerError`)."""
        kind = getattr(errors, self.error_type, None)
        if isinstance(kind, type) and issubclass(kind, HeronError):
            try:
                error: HeronError = kind(self.message)
                return error
            except TypeError:  # a class whose constructor takes more than a message
                pass
        return SchedulerError(self.message)


def parse_report(line: bytes) -> ServiceReport:
    """Decode one report line (anything unreadable is progress text)."""
    try:
        fields = json.loads(line)
        return ServiceReport(
            str(fields["event"]), str(fields["message"]), str(fields.get("error_type", ""))
        )
    except (ValueError, KeyError, TypeError):
        return ServiceReport("progress", line.decode(errors="replace").strip())


class _Reporter:
    """Writes `ServiceReport` lines on a descriptor; a no-op without one, and after the
    reader went away."""

    def __init__(self, fd: int | None) -> None:
        self._file: IO[bytes] | None = os.fdopen(fd, "wb", buffering=0) if fd is not None else None

    def send(self, event: str, message: str, error_type: str = "") -> None:
        if self._file is None:
            return
        try:
            self._file.write(ServiceReport(event, message, error_type).encode())
        except OSError:  # the submitting client is gone
            self.close()

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"python -m {MODULE}",
        description="Run a topology's containers with its scheduler until SIGTERM.",
    )
    add_topology_flags(parser, container=None)
    parser.add_argument(
        "--report-fd",
        type=int,
        default=None,
        help="a file descriptor to report progress, running and errors on (JSON lines)",
    )
    parser.add_argument(
        _SUPERVISE,
        action="store_true",
        help="run the service as a child and start a new one whenever a signal other than "
        "SIGTERM/SIGINT kills it (kill -9): the new service starts the containers again",
    )
    return parser


def _wait_until_running(
    state: StateManager,
    scheduler: Scheduler,
    name: str,
    topology_id: str,
    stop: StopSignals,
) -> bool:
    """Wait until the topology's physical plan exists (True) or a stop signal came (False).

    Raises:
        SchedulerError: the scheduler reports that the containers cannot start.
    """
    while not stop.requested:
        try:
            plan = state.get_physical_plan(name)
        except StateManagerError as exc:  # ZooKeeper down for longer than the session timeout
            log.warning("cannot read the physical plan of %r yet: %s", name, exc)
            plan = None
        if plan is not None and plan.topology.id == topology_id:
            return True
        failure = scheduler.failure()
        if failure is not None:
            raise SchedulerError(failure)
        stop.wait(_PLAN_POLL_SECS)
    return False


def _answer_requests(
    scheduler: Scheduler, state: StateManager, name: str, working_dir: Path
) -> None:
    """Carry out and answer the requests filed in ``W/scheduler-requests`` (see
    `heron_core.scheduler._requests`; SIGHUP says one is there)."""
    for path, request in pending_requests(working_dir):
        if request is None:
            unreadable = f"{path.name} is not a request this service reads"
            write_answer(path, RequestAnswer(False, unreadable))
            continue
        try:
            if isinstance(request, RestartRequest):
                scheduler.on_restart(request.container)
                which = (
                    "every container"
                    if request.container == -1
                    else (f"container {request.container}")
                )
                done = f"restarted {which}"
            else:
                done = apply_update(state, scheduler, name, request.topology, request.packing_plan)
        except HeronError as exc:
            kind = "restart" if isinstance(request, RestartRequest) else "update"
            log.warning("cannot carry out the %s request: %s", kind, exc)
            write_answer(path, RequestAnswer(False, str(exc)))
        else:
            log.info("on request: %s", done)
            write_answer(path, RequestAnswer(True, done))


def _serve(args: argparse.Namespace, reporter: _Reporter) -> int:
    name = args.topology_name
    runtime = TopologyRuntime(name, args.topology_id, args.cluster, args.working_dir.resolve())
    with (
        StopSignals(also_wake=(signal.SIGHUP,)) as stop,
        create_state_manager(
            parse_state_config(args.state_config),
            args.cluster,
            key=StateKey.load(name, runtime.working_dir),
        ) as state,
    ):
        topology, plan = read_plans(state, name, args.topology_id)
        config = config_from_proto(topology.topology_config)
        kind = config["heron.class.scheduler"]
        scheduler = create_scheduler(kind)
        try:
            reporter.send("progress", f"starting the containers with the {kind} scheduler")
            scheduler.initialize(config, runtime)
            scheduler.on_schedule(plan)
            location = scheduler_pb2.SchedulerLocation(topology_name=name, pid=os.getpid())
            stale = state.get_scheduler_location(name)
            if stale is not None and stale.pid and not psutil.pid_exists(stale.pid):
                # a killed predecessor's, whose ZooKeeper session has not expired yet
                log.info("removing the location of a scheduler that is gone (pid %d)", stale.pid)
                state.delete_scheduler_location(name)
            state.set_scheduler_location(name, location)
            log.info("scheduler of %r is up (pid %d)", name, os.getpid())
            reporter.send("progress", "waiting for every container to run")
            if _wait_until_running(state, scheduler, name, args.topology_id, stop):
                log.info("every container of %r runs (the physical plan exists)", name)
                reporter.send("running", f"every container of {name!r} runs")
                reporter.close()
            while not stop.requested:
                _answer_requests(scheduler, state, name, runtime.working_dir)
                stop.wait(3600.0)
            log.info("received %s: killing the containers of %r", stop.name, name)
        finally:
            scheduler.close()
    return 0


def _without_report_fd(argv: Sequence[str]) -> list[str]:
    """``argv`` without ``--report-fd N``.

    >>> _without_report_fd(["--cluster", "local", "--report-fd", "5", "--supervise"])
    ['--cluster', 'local', '--supervise']
    """
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--report-fd":
            skip = True
        else:
            out.append(arg)
    return out


def _supervise(argv: Sequence[str], name: str, report_fd: int | None) -> int:
    """Run the service (``argv`` without ``--supervise``) as a child; when a signal other
    than SIGTERM/SIGINT kills it (its executors die with it), start a new one, which starts
    the containers again (with acking on, the trees they held are replayed) and publishes its
    own location. Only the first child gets ``--report-fd``. SIGTERM/SIGINT are passed on;
    returns the child's exit code once it ends by itself."""
    service = [a for a in argv if a != _SUPERVISE]
    command = [sys.executable, "-m", MODULE]
    streak = 0
    with StopSignals(wake_on_child_exit=True) as stop:
        while True:
            started = time.monotonic()
            proc = subprocess.Popen([*command, *service], stdin=subprocess.DEVNULL, close_fds=False)
            log.info("supervising the scheduler service of %r (pid %d)", name, proc.pid)
            if report_fd is not None:  # the first service reports; the client reads its EOF
                os.close(report_fd)
                report_fd = None
            service = _without_report_fd(service)
            while proc.poll() is None:
                if stop.requested:
                    proc.send_signal(signal.SIGTERM)
                    return proc.wait()
                stop.wait(1.0)
            code = proc.returncode
            if stop.requested or code >= 0 or -code in (signal.SIGTERM, signal.SIGINT):
                return code if code >= 0 else 0
            streak = 1 if time.monotonic() - started >= _STEADY_SECS else streak + 1
            if streak > _MAX_RESTARTS:
                log.error(
                    "the scheduler service of %r was killed %d times in a row: giving up",
                    name,
                    streak,
                )
                return 1
            log.warning(
                "the scheduler service of %r (pid %d) was killed by %s: starting a new one",
                name,
                proc.pid,
                signal.Signals(-code).name,
            )
            stop.wait(_RESTART_DELAY_SECS * streak)
            if stop.requested:
                return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the service; returns 0 after SIGTERM/SIGINT, 1 when it cannot start. With
    ``--supervise``, supervise it instead (`_supervise`)."""
    args = _parser().parse_args(argv)
    if args.supervise:
        configure_daemon_logging(args.topology_name, "scheduler-supervisor")
        given = sys.argv[1:] if argv is None else list(argv)
        return _supervise(given, args.topology_name, args.report_fd)
    configure_daemon_logging(args.topology_name, "scheduler")
    reporter = _Reporter(args.report_fd)
    try:
        return _serve(args, reporter)
    except HeronError as exc:
        log.error("cannot run the scheduler of %r: %s", args.topology_name, exc)
        reporter.send("error", str(exc), type(exc).__name__)
        return 1
    except Exception as exc:
        log.exception("the scheduler of %r failed", args.topology_name)
        reporter.send("error", f"the scheduler failed: {type(exc).__name__}: {exc}")
        return 1
    finally:
        reporter.close()
