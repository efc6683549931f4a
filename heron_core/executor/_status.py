"""What an executor reports about its processes: ``W/logs/executor-<K>.status.json``.

The executor is the only writer. The file holds, per process name, how often the process was
started, how often it exited without being asked to (a crash), how its last exit went and
whether the executor gave up on it. It is rewritten (atomically: a temporary file, then a
rename) after a loop of the executor that changed it, and read back when an executor of the
same container starts again, so that the counts cover the whole run. Readers (``heron run``,
``LocalCluster``) poll it with `read_status`.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from heron_core.executor._exception import LastException

__all__ = ["ProcessStatus", "StatusFile", "read_status", "status_path"]

log = logging.getLogger(__name__)

STATUS_SUFFIX = ".status.json"


def status_path(working_dir: Path, container: int) -> Path:
    """The status file of container ``container``'s executor.

    >>> status_path(Path("/w"), 1)
    PosixPath('/w/logs/executor-1.status.json')
    """
    return working_dir / "logs" / f"executor-{container}{STATUS_SUFFIX}"


@dataclass(frozen=True)
class ProcessStatus:
    """What the executor did with one process so far.

    Attributes:
        starts: times it was started (a restart is ``starts - 1``).
        crashes: times it exited without the executor asking it to.
        last_exit: how it last exited (``"exit status 1"``, ``"signal SIGKILL"``), "" before.
        gave_up: the executor gave up on it after too many crashes in a row (and exited).
        pid: the pid of its newest start (0 before; the tracker's ``/topologies/pid``).
        crashes_in_a_row: crashes since it last ran steadily (the restart policy's count).
        last_exception: the exception line of the newest traceback in its log when it last
            crashed (``"ValueError: bad input"``), "" when there was none.
        last_traceback: that traceback (see ``heron_core.executor._exception``).
        last_crash: when it last crashed (unix seconds), 0 before.
    """

    starts: int = 0
    crashes: int = 0
    last_exit: str = ""
    gave_up: bool = False
    pid: int = 0
    crashes_in_a_row: int = 0
    last_exception: str = ""
    last_traceback: str = ""
    last_crash: float = 0.0

    @property
    def restarts(self) -> int:
        """Times it was started again."""
        return max(self.starts - 1, 0)


def _status(value: Any) -> ProcessStatus | None:
    if not isinstance(value, dict):
        return None
    try:
        return ProcessStatus(
            starts=int(value.get("starts", 0)),
            crashes=int(value.get("crashes", 0)),
            last_exit=str(value.get("last_exit", "")),
            gave_up=bool(value.get("gave_up", False)),
            pid=int(value.get("pid", 0)),
            crashes_in_a_row=int(value.get("crashes_in_a_row", 0)),
            last_exception=str(value.get("last_exception", "")),
            last_traceback=str(value.get("last_traceback", "")),
            last_crash=float(value.get("last_crash", 0.0)),
        )
    except (TypeError, ValueError):
        return None


def read_status(path: Path) -> dict[str, ProcessStatus]:
    """The processes of a status file by name; empty when it is missing or unreadable (it
    may not be written yet). Never raises for a bad file.

    >>> read_status(Path("/nonexistent.status.json"))
    {}
    """
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    processes = raw.get("processes") if isinstance(raw, dict) else None
    if not isinstance(processes, dict):
        return {}
    found = {str(name): _status(value) for name, value in processes.items()}
    return {name: status for name, status in found.items() if status is not None}


class StatusFile:
    """The executor's side of the status file (see the module).

    Args:
        path: the file (see `status_path`); None keeps the counts in memory only.

    >>> status = StatusFile(None)
    >>> status.started("stmgr-1"); status.exited("stmgr-1", "exit status 1", crashed=True)
    >>> status.processes["stmgr-1"]
    ProcessStatus(starts=1, crashes=1, last_exit='exit status 1', gave_up=False, pid=0, \
crashes_in_a_row=0, last_exception='', last_traceback='', last_crash=0.0)
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.processes: dict[str, ProcessStatus] = read_status(path) if path else {}
        self._dirty = False

    def _update(self, name: str, **changes: Any) -> None:
        self.processes[name] = replace(self.processes.get(name, ProcessStatus()), **changes)
        self._dirty = True

    def started(self, name: str, pid: int = 0) -> None:
        """Process ``name`` was started (again; an executor that gave up on it was
        replaced) as process ``pid``."""
        starts = self.processes.get(name, ProcessStatus()).starts + 1
        self._update(name, starts=starts, gave_up=False, pid=pid)

    def exited(
        self,
        name: str,
        how: str,
        *,
        crashed: bool,
        in_a_row: int = 0,
        exception: LastException | None = None,
        at: float = 0.0,
    ) -> None:
        """Process ``name`` exited as ``how`` says; ``crashed``: unasked, the ``in_a_row``-th
        crash since it last ran steadily, at unix time ``at``, with ``exception`` the newest
        in its log."""
        if not crashed:
            self._update(name, last_exit=how)
            return
        self._update(
            name,
            crashes=self.processes.get(name, ProcessStatus()).crashes + 1,
            last_exit=how,
            crashes_in_a_row=in_a_row,
            last_exception=exception.line if exception else "",
            last_traceback=exception.traceback if exception else "",
            last_crash=at,
        )

    def steady(self, name: str) -> None:
        """Process ``name`` ran long enough that its crashes in a row start again at 0."""
        if self.processes.get(name, ProcessStatus()).crashes_in_a_row:
            self._update(name, crashes_in_a_row=0)

    def gave_up(self, name: str) -> None:
        """The executor gives up on process ``name``."""
        self._update(name, gave_up=True)

    def flush(self) -> None:
        """Write the file if anything changed since the last write. A write that fails is
        logged, not raised (the status is a report; supervising matters more)."""
        if not self._dirty or self.path is None:
            return
        self._dirty = False
        body = {"processes": {name: asdict(s) for name, s in sorted(self.processes.items())}}
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(body, indent=1))
            os.replace(temporary, self.path)
        except OSError as exc:
            log.warning("cannot write the status file %s: %s", self.path, exc)
