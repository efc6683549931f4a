"""The shell of a container (Heron's heron-shell role): its files and its processes' pids, for
the tracker. Served by the container's metrics manager on a ROUTER socket (CURVE server), port
``StMgr.shell_port`` of the physical plan."""

from __future__ import annotations

import logging
import os
from pathlib import Path, PurePosixPath

import zmq
from google.protobuf.message import Message

from heron_core.executor import read_status, status_path
from heron_core.network import Dispatcher, ProtocolError, encode
from heron_core.proto import common_pb2, metrics_pb2

__all__ = ["MAX_CHUNK", "Shell", "path_refusal"]

log = logging.getLogger(__name__)

MAX_CHUNK = 1 << 20
"""The most bytes one file request answers."""


def path_refusal(path: str) -> str | None:
    """Why a shell refuses ``path`` before looking at the disk (absolute, or with ``..``), or
    None. The tracker refuses the same paths up front.

    >>> path_refusal("logs/x.log") is None, path_refusal("../x")
    (True, "path '../x' must be relative to the working directory, without '..'")
    """
    if path.startswith("/") or ".." in PurePosixPath(path).parts:
        return f"path {path!r} must be relative to the working directory, without '..'"
    return None


def _status(ok: bool, message: str = "") -> common_pb2.Status:
    return common_pb2.Status(status=common_pb2.OK if ok else common_pb2.NOTOK, message=message)


class Shell:
    """Answers shell requests on ``socket`` for the files under ``working_dir`` of container
    ``container``.

    A path is relative to the working directory; an absolute path, one with ``..``, or one
    that leaves the directory through a link is refused with a message.
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

    def resolve(self, path: str) -> Path | str:
        """The file ``path`` names, or why it is refused."""
        refused = path_refusal(path)
        if refused is not None:
            return refused
        target = (self._root / path).resolve()
        if target != self._root and self._root not in target.parents:
            return f"path {path!r} leaves the working directory"
        return target

    def _on_file(self, request: metrics_pb2.ShellFileRequest, peer: bytes) -> None:
        target = self.resolve(request.path)
        if isinstance(target, str):
            self._answer(peer, metrics_pb2.ShellFileResponse(status=_status(False, target)))
            return
        try:
            with target.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                length = min(max(request.length, 0) or MAX_CHUNK, MAX_CHUNK)
                offset = request.offset
                if offset < 0:
                    offset = max(size - length, 0)
                handle.seek(offset)
                data = handle.read(length)
        except IsADirectoryError:
            message = f"{request.path!r} is a directory in container {self._container}"
            self._answer(peer, metrics_pb2.ShellFileResponse(status=_status(False, message)))
            return
        except OSError as exc:
            message = f"cannot read {request.path!r} in container {self._container}: " + (
                exc.strerror or str(exc)
            )
            self._answer(peer, metrics_pb2.ShellFileResponse(status=_status(False, message)))
            return
        self._answer(
            peer,
            metrics_pb2.ShellFileResponse(
                status=_status(True), data=data, offset=offset, length=len(data), size=size
            ),
        )

    def _on_list(self, request: metrics_pb2.ShellListRequest, peer: bytes) -> None:
        target = self.resolve(request.path)
        if isinstance(target, str):
            self._answer(peer, metrics_pb2.ShellListResponse(status=_status(False, target)))
            return
        try:
            entries = sorted(os.scandir(target), key=lambda e: e.name)
            files = []
            for entry in entries:
                stat = entry.stat(follow_symlinks=False)
                files.append(
                    metrics_pb2.ShellFileStat(
                        name=entry.name,
                        is_dir=entry.is_dir(follow_symlinks=False),
                        size=stat.st_size,
                        mtime=int(stat.st_mtime),
                    )
                )
        except OSError as exc:
            message = f"cannot list {request.path!r} in container {self._container}: " + (
                exc.strerror or str(exc)
            )
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
