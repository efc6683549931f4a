"""Following a running topology's logs on this machine: the lines its components write, and
the crashes and restarts its executors report.

Every process of a topology appends its stdout and stderr to ``W/logs/<process>.log``, daemons
in the one format of ``heron_core._logging``. A `LogFollower` reads what is appended and passes
the user's lines on, each prefixed with where it comes from (``count_bolt:3 | hello``):

* in an instance's log (``container_<K>_<component>_<task>.log``): every record of a logger
  outside ``heron_core`` (the component's own loggers, pystorm's ``self.logger``, the
  ``log`` commands of multilang subprocesses, logged as ``heron.multilang``), every record
  at WARNING or above (with its traceback), and every line that is not a record (``print``,
  a subprocess's stderr, Python's report of an uncaught exception, ``warnings``). The kernel's
  routine records (``heron_core.*`` below WARNING) are skipped;
* in a daemon's log (executor, stream manager, topology manager, scheduler): records at
  WARNING or above and lines that are not records.

The executors' exit records (logger ``heron_core.executor.exits``) are skipped too: the
follower reports crashes from the executors' status files instead (``executor-<K>.status.json``,
see ``heron_core.executor``), one line per crash with the restart it leads to, and keeps the
restarts per component for the summary.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from heron_core._logging import CONTINUATION, LogRecordLine, parse_record
from heron_core.executor import ProcessStatus, read_status

__all__ = ["LogFollower", "instance_of", "user_text"]

Echo = Callable[[str], None]

_INSTANCE = re.compile(r"container_(?P<container>\d+)_(?P<component>.+)_(?P<task>\d+)")
_STATUS = re.compile(r"executor-(?P<container>\d+)\.status\.json")
_SHELL_LOG = re.compile(r"ShellLog pid \S+: (?P<text>.*)", re.DOTALL)
_QUIET_LEVELS = frozenset({"DEBUG", "INFO", "NOTSET"})
_EXITS_LOGGER = "heron_core.executor.exits"
_MAX_READ = 1 << 20  # bytes read from one log per poll
_MAX_BACKLOG = 8 << 20  # unread bytes past which a log is skipped ahead to its last _MAX_READ
_MAX_LINES = 1000  # lines passed on per poll; the rest are counted


def instance_of(process: str) -> tuple[str, int] | None:
    """``(component, task)`` of an instance's process name (``container_<K>_<component>_<task>``,
    see ``heron_core.executor.instance_name``), None for a daemon's.

    >>> instance_of("container_1_count_bolt_3"), instance_of("stmgr-1")
    (('count_bolt', 3), None)
    """
    match = _INSTANCE.fullmatch(process)
    return None if match is None else (match["component"], int(match["task"]))


def _is_kernel(logger: str) -> bool:
    return logger == "heron_core" or logger.startswith("heron_core.")


def user_text(record: LogRecordLine, instance: bool) -> str | None:
    """What to show of a record's first line, or None when it is not for the user (see the
    module): the message, after the level unless it is INFO (a multilang ``log`` command's
    text without the host's preamble).

    >>> from heron_core._logging import LogRecordLine as R
    >>> user_text(R("INFO", "pystorm.component.count", "instance", "3", "counted 5"), True)
    'counted 5'
    >>> user_text(R("INFO", "heron_core.instance._runtime", "instance", "3", "started"), True)
    >>> user_text(R("ERROR", "heron_core.instance._runtime", "instance", "3", "raised"), True)
    'ERROR raised'
    >>> user_text(R("INFO", "kazoo.client", "stmgr", "1", "Connecting"), False)
    """
    if record.logger == _EXITS_LOGGER:
        return None
    quiet = record.level in _QUIET_LEVELS
    if quiet and (not instance or _is_kernel(record.logger)):
        return None
    message = record.message
    if record.logger == "heron.multilang":
        shell = _SHELL_LOG.search(message)
        message = shell["text"] if shell is not None else message
    return message if record.level == "INFO" else f"{record.level} {message}"


@dataclass
class _Log:
    """What is known of one log file."""

    path: Path
    label: str
    instance: bool
    offset: int = 0
    partial: bytes = b""
    shown: bool = False  # whether the record being read is passed on


@dataclass
class _Status:
    """One executor status file: the processes' status as last read."""

    container: int
    seen: dict[str, ProcessStatus] = field(default_factory=dict)
    stamp: tuple[int, int] = (0, 0)


class LogFollower:
    """Passes the user's lines of a topology's logs to ``echo`` as they are written, and the
    crashes its executors report (see the module). Not thread-safe: one thread calls `poll`
    (see `start_thread` for a background one).

    Args:
        logs_dir: the topology's ``W/logs``.
        echo: called with each line to show (no line end).
        show_logs: pass log lines on; False keeps only the crash reports.
        from_start: read logs that exist already from their start (default: from their
            current end; logs created later are always read from their start).
    """

    def __init__(
        self, logs_dir: Path, echo: Echo, *, show_logs: bool = True, from_start: bool = False
    ) -> None:
        self.logs_dir = logs_dir
        self._echo = echo
        self._show_logs = show_logs
        self._logs: dict[Path, _Log] = {}
        self._statuses: dict[Path, _Status] = {}
        self._budget = _MAX_LINES
        self._skipped: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        if not from_start and logs_dir.is_dir():
            for path in logs_dir.glob("*.log"):
                self._log(path).offset = path.stat().st_size

    def _log(self, path: Path) -> _Log:
        log = self._logs.get(path)
        if log is None:
            instance = instance_of(path.stem)
            label = path.stem if instance is None else f"{instance[0]}:{instance[1]}"
            log = self._logs[path] = _Log(path, label, instance is not None)
        return log

    def poll(self) -> None:
        """Pass on what was appended to the logs and the crashes reported since the last
        call. Never raises for a log that vanished or cannot be read."""
        with self._lock:
            self._budget = _MAX_LINES
            if self._show_logs:
                for path in sorted(self.logs_dir.glob("*.log")):
                    self._read(self._log(path), final=False)
            self._read_statuses()
            self._report_skipped()

    def restarts(self) -> dict[str, int]:
        """Restarts so far per component (of its instances), from the executors' status files
        as last read."""
        totals: dict[str, int] = {}
        with self._lock:
            for status in self._statuses.values():
                for name, process in status.seen.items():
                    instance = instance_of(name)
                    if instance is not None:
                        totals[instance[0]] = totals.get(instance[0], 0) + process.restarts
        return totals

    def close(self) -> None:
        """Stop the background thread (if any), then pass on everything left, unfinished last
        lines included. Call once the topology's processes have stopped."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()
        with self._lock:
            self._budget = _MAX_LINES
            if self._show_logs and self.logs_dir.is_dir():
                for path in sorted(self.logs_dir.glob("*.log")):
                    self._read(self._log(path), final=True)
            self._read_statuses()
            self._report_skipped()

    def start_thread(self, interval: float = 0.2) -> None:
        """Call `poll` every ``interval`` seconds on a daemon thread until `close`."""
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    self.poll()
                except Exception:  # a report must never take the caller down
                    continue

        self._thread = threading.Thread(target=loop, name="heron-log-follower", daemon=True)
        self._thread.start()

    # --- internals ---------------------------------------------------------------------------
    def _read(self, log: _Log, *, final: bool) -> None:
        skipped = 0
        try:
            with log.path.open("rb") as file:
                size = file.seek(0, 2)
                if size < log.offset:  # truncated or replaced: start over
                    log.offset, log.partial, log.shown = 0, b"", False
                if size - log.offset > _MAX_BACKLOG:  # far behind: jump to the end's last MiB
                    skipped = size - _MAX_READ - log.offset
                    log.offset, log.partial, log.shown = size - _MAX_READ, b"", False
                file.seek(log.offset)
                data = file.read(_MAX_READ)
        except OSError:
            return
        log.offset += len(data)
        if skipped:
            cut = data.find(b"\n") + 1  # from the first whole line on
            self._emit(log, f"... {skipped + cut:,} bytes not shown (see {log.path})")
            data = data[cut:]
        lines = (log.partial + data).split(b"\n")
        log.partial = lines.pop()
        if final and log.partial:
            lines.append(log.partial)
            log.partial = b""
        for raw in lines:
            self._line(log, raw.decode(errors="replace").rstrip("\r"))

    def _line(self, log: _Log, line: str) -> None:
        record = parse_record(line)
        if record is not None:
            text = user_text(record, log.instance)
            log.shown = text is not None
            if text is not None:
                self._emit(log, text)
        elif line.startswith(CONTINUATION):
            if log.shown:
                self._emit(log, line[len(CONTINUATION) :])
        elif line:
            self._emit(log, line)

    def _emit(self, log: _Log, text: str) -> None:
        if self._budget > 0:
            self._budget -= 1
            self._echo(f"{log.label} | {text}")
        else:
            self._skipped[log.label] = self._skipped.get(log.label, 0) + 1

    def _report_skipped(self) -> None:
        for label, count in self._skipped.items():
            self._echo(f"{label} | ... {count:,} more lines not shown (see {self.logs_dir})")
        self._skipped.clear()

    def _read_statuses(self) -> None:
        if not self.logs_dir.is_dir():
            return
        for path in sorted(self.logs_dir.glob("executor-*.status.json")):
            match = _STATUS.fullmatch(path.name)
            if match is None:
                continue
            status = self._statuses.setdefault(path, _Status(int(match["container"])))
            try:
                info = path.stat()
            except OSError:
                continue
            stamp = (info.st_mtime_ns, info.st_size)
            if stamp == status.stamp:
                continue
            status.stamp = stamp
            current = read_status(path)
            for name, now in current.items():
                before = status.seen.get(name, ProcessStatus())
                if now.crashes > before.crashes or (now.gave_up and not before.gave_up):
                    self._echo(self._crash_line(name, now, status.container))
            status.seen.update(current)

    @staticmethod
    def _crash_line(name: str, status: ProcessStatus, container: int) -> str:
        instance = instance_of(name)
        label = name if instance is None else f"{instance[0]}:{instance[1]}"
        how = status.last_exit or "an unknown status"
        if status.gave_up:
            return (
                f"{label} | exited with {how}; it crashed too often in a row: executor-"
                f"{container} gives up and container {container} is started again"
            )
        return f"{label} | exited with {how} (crash {status.crashes}); the executor restarts it"
