"""The shell of a container (Heron's heron-shell role): its logs and its processes' pids, for
the tracker. Served by the container's metrics manager on a ROUTER socket (CURVE server), port
``StMgr.shell_port`` of the physical plan.

Only the container's logs are served: the regular files directly in ``W/logs`` (each process's
``<process>.log``, the executor's status file), and listings of ``W/logs`` and of ``W`` (which
shows ``logs`` alone). Nothing else of the working directory ``W`` (its ``keys/``, ``code/``,
state) is read, whatever the spelling of the path; `path_refusal` is the rule on the text of a
path, and the shell also refuses a ``logs`` directory that is a link, a file that is a link,
not a regular file, or hard-linked elsewhere.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import zmq
from google.protobuf.message import Message

from heron_core.executor import read_status, status_path
from heron_core.network import Dispatcher, ProtocolError, encode
from heron_core.proto import common_pb2, metrics_pb2

__all__ = ["LOGS_DIR", "MAX_CHUNK", "SERVED", "Shell", "path_refusal"]

log = logging.getLogger(__name__)

MAX_CHUNK = 1 << 20
"""The most bytes one file request answers."""

LOGS_DIR = "logs"
"""The one directory of a container's working directory whose files the shell serves."""

SERVED = (
    f"only the container's logs are served: a file '{LOGS_DIR}/<name>', or the listing of "
    f"'{LOGS_DIR}' or of '.'"
)
"""The rule a refusal names."""

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_LINKED = (errno.ELOOP, errno.ENOTDIR)


def path_refusal(path: str, *, listing: bool = False) -> str | None:
    """Why the shell refuses ``path`` (a file to read, or with ``listing`` a directory to
    list) before looking at the disk, or None: the text must be exactly ``logs/<name>`` for a
    file (``<name>`` one path component, not ``.`` or ``..``, without a backslash or a NUL),
    or ``logs``, ``.`` or ``""`` for a listing. Any other spelling (``./logs/x``,
    ``logs/../keys/x``, an absolute path, ``LOGS/x``, ``logs/x/``) is refused, naming the
    path and the rule. The tracker refuses the same paths up front.

    >>> path_refusal("logs/x.log") is None, path_refusal(".", listing=True) is None
    (True, True)
    >>> path_refusal("keys/topology.key_secret")
    "path 'keys/topology.key_secret' is not served: only the container's logs are served: \
a file 'logs/<name>', or the listing of 'logs' or of '.'"
    """
    if listing:
        allowed = path in ("", ".", LOGS_DIR)
    else:
        folder, slash, name = path.partition("/")
        allowed = (
            folder == LOGS_DIR
            and bool(slash)
            and name not in ("", ".", "..")
            and not any(c in name for c in "/\\\x00")
        )
    return None if allowed else f"path {path!r} is not served: {SERVED}"


def _status(ok: bool, message: str = "") -> common_pb2.Status:
    return common_pb2.Status(status=common_pb2.OK if ok else common_pb2.NOTOK, message=message)


class _Refused(Exception):
    """A request the shell does not serve; the message says why."""


class Shell:
    """Answers shell requests on ``socket`` for the logs under ``working_dir`` of container
    ``container`` (see the module's doc for what is served).
    """

    def __init__(self, socket: zmq.Socket[bytes], working_dir: Path, container: int) -> None:
        self.socket = socket
        self._root = working_dir.resolve()
        self._container = container
        self._dispatcher = Dispatcher(f"shell of container {container}")
        self._dispatcher.register(metrics_pb2.ShellFileRequest, self._on_file)
        self._dispatcher.register(metrics_pb2.ShellListRequest, self._on_list)
        self._dispatcher.register(metrics_pb2.ShellPidRequest, self._on_pid)

    def on_readable(self) -> None:
        """Answer every request waiting (never blocks)."""
        while True:
            try:
                frames = self.socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                self._dispatcher.dispatch(frames[1:], frames[0])
            except ProtocolError as exc:
                log.warning("shell: ignoring a malformed request: %s", exc)

    def _answer(self, peer: bytes, message: Message) -> None:
        self.socket.send_multipart([peer, *encode(message)])

    def _where(self, path: str) -> str:
        return f"{path!r} in container {self._container}"

    def _logs_fd(self, path: str) -> int:
        """An open descriptor of ``W/logs``, refused when it is a link or not a directory."""
        try:
            return os.open(self._root / LOGS_DIR, _OPEN_DIR)
        except OSError as exc:
            if exc.errno in _LINKED:
                raise _Refused(
                    f"refused {self._where(path)}: the container's {LOGS_DIR!r} is a link or "
                    f"not a directory; {SERVED}"
                ) from exc
            raise

    def _open_log(self, path: str) -> int:
        """An open descriptor of the log file ``path`` (already passed `path_refusal`): a
        regular file directly in ``W/logs``, not a link and with no other hard link."""
        logs = self._logs_fd(path)
        try:
            fd = os.open(path.partition("/")[2], _OPEN_FILE, dir_fd=logs)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _Refused(
                    f"refused {self._where(path)}: it is a symbolic link; {SERVED}"
                ) from exc
            raise
        finally:
            os.close(logs)
        info = os.fstat(fd)
        why = ""
        if stat.S_ISDIR(info.st_mode):
            why = "it is a directory"
        elif not stat.S_ISREG(info.st_mode):
            why = "it is not a regular file"
        elif info.st_nlink != 1:
            why = "it has another hard link"
        if why:
            os.close(fd)
            raise _Refused(f"refused {self._where(path)}: {why}; {SERVED}")
        return fd

    def _on_file(self, request: metrics_pb2.ShellFileRequest, peer: bytes) -> None:
        path = request.path
        try:
            refused = path_refusal(path)
            if refused is not None:
                raise _Refused(refused)
            with os.fdopen(self._open_log(path), "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                length = min(max(request.length, 0) or MAX_CHUNK, MAX_CHUNK)
                offset = request.offset
                if offset < 0:
                    offset = max(size - length, 0)
                handle.seek(offset)
                data = handle.read(length)
        except _Refused as exc:
            self._answer(peer, metrics_pb2.ShellFileResponse(status=_status(False, str(exc))))
            return
        except OSError as exc:
            message = f"cannot read {self._where(path)}: {exc.strerror or exc}"
            self._answer(peer, metrics_pb2.ShellFileResponse(status=_status(False, message)))
            return
        self._answer(
            peer,
            metrics_pb2.ShellFileResponse(
                status=_status(True), data=data, offset=offset, length=len(data), size=size
            ),
        )

    def _listing(self, path: str) -> Iterator[metrics_pb2.ShellFileStat]:
        """The served entries of ``path`` (already passed `path_refusal`): ``logs`` alone for
        the working directory; the regular files served in ``logs``."""
        logs = self._logs_fd(path)
        try:
            if path != LOGS_DIR:
                info = os.fstat(logs)
                yield metrics_pb2.ShellFileStat(
                    name=LOGS_DIR, is_dir=True, size=info.st_size, mtime=int(info.st_mtime)
                )
                return
            with os.scandir(logs) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                        yield metrics_pb2.ShellFileStat(
                            name=entry.name,
                            is_dir=False,
                            size=info.st_size,
                            mtime=int(info.st_mtime),
                        )
        finally:
            os.close(logs)

    def _on_list(self, request: metrics_pb2.ShellListRequest, peer: bytes) -> None:
        path = request.path
        try:
            refused = path_refusal(path, listing=True)
            if refused is not None:
                raise _Refused(refused)
            files = list(self._listing(path))
        except _Refused as exc:
            self._answer(peer, metrics_pb2.ShellListResponse(status=_status(False, str(exc))))
            return
        except OSError as exc:
            message = f"cannot list {self._where(path)}: {exc.strerror or exc}"
            self._answer(peer, metrics_pb2.ShellListResponse(status=_status(False, message)))
            return
        self._answer(peer, metrics_pb2.ShellListResponse(status=_status(True), files=files))

    def _on_pid(self, request: metrics_pb2.ShellPidRequest, peer: bytes) -> None:
        processes = read_status(status_path(self._root, self._container))
        found = processes.get(request.instance_id)
        if found is None or not found.pid:
            known = ", ".join(sorted(processes)) or "none yet"
            message = (
                f"container {self._container} runs no process {request.instance_id!r} "
                f"(it runs: {known})"
            )
            self._answer(peer, metrics_pb2.ShellPidResponse(status=_status(False, message)))
            return
        self._answer(peer, metrics_pb2.ShellPidResponse(status=_status(True), pid=found.pid))
