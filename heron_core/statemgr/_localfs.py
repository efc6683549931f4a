"""The local-filesystem state manager: one file per node under ``<root>/<cluster>``.

File format: a header line, then the serialized message. The header is
``heron-state 1 -`` for a persistent node and ``heron-state 1 <pid> <start> <session>`` for an
ephemeral one, naming the owning process (pid and start time, so a reused pid is not mistaken
for the owner) and the owning manager (a random token per manager).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from heron_core.config import setting
from heron_core.errors import StateManagerError
from heron_core.statemgr.base import StateManager

__all__ = ["LocalFileSystemStateManager"]

logger = logging.getLogger(__name__)

_MAGIC = b"heron-state 1"
_POLL_INTERVAL_S = 0.1


@dataclass(frozen=True)
class _Owner:
    pid: int
    started: str  # the process's start time, "%.2f" seconds since the epoch
    session: str

    @classmethod
    def of_this_process(cls) -> _Owner:
        return cls(os.getpid(), _start_time(psutil.Process()), uuid.uuid4().hex)

    def alive(self) -> bool:
        try:
            process = psutil.Process(self.pid)
            return _start_time(process) == self.started and process.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False
        except psutil.AccessDenied:  # it exists; we may not look at it
            return True


def _start_time(process: psutil.Process) -> str:
    return f"{process.create_time():.2f}"


@dataclass(frozen=True)
class _Node:
    signature: tuple[int, int, int]  # inode, mtime_ns, size: changes on every write
    owner: _Owner | None  # None for a persistent node
    payload: bytes

    @property
    def present(self) -> bool:
        return self.owner is None or self.owner.alive()


class LocalFileSystemStateManager(StateManager):
    """State in local files: ``<root>/<cluster>/<kind>/<name>``, for one machine.

    ``root`` is ``heron.statemgr.root.path`` (``~`` expanded; default
    ``~/.herondata/repository/state``). Writes are atomic (a temporary file renamed over the
    node); node files are owner-only (0600) and the directories this manager makes too
    (0700): the file system's permissions are this store's access control. An ephemeral
    node records its owner; it reads as absent once the owning process is gone, and closing
    the owning manager deletes it. Watches poll every 0.1 s.

    >>> import tempfile
    >>> from heron_core.proto import topology_pb2
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with LocalFileSystemStateManager({"heron.statemgr.root.path": tmp.name}, "local") as sm:
    ...     sm.set_topology("wc", topology_pb2.Topology(name="wc"))
    ...     sm.get_topology("wc").name
    'wc'
    >>> tmp.cleanup()
    """

    def __init__(self, config: Mapping[str, Any], cluster: str) -> None:
        super().__init__(config, cluster)
        root = str(setting(config, "heron.statemgr.root.path"))
        self.root = Path(os.path.expanduser(root)) / cluster
        self._owner: _Owner | None = None
        self._owned: set[str] = set()

    # ----------------------------------------------------------------------------- primitives

    def _start(self) -> None:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StateManagerError(
                f"cannot create the state directory {self.root} "
                f"(heron.statemgr.root.path / cluster): {exc}"
            ) from exc
        self._owner = _Owner.of_this_process()

    def _close(self) -> None:
        for path in sorted(self._owned):
            file = self._file(path)
            try:
                with self._locked(file.parent):
                    node = self._load(file)
                    if node is not None and node.owner == self._owner:
                        file.unlink()
            except (OSError, StateManagerError) as exc:
                logger.warning("could not remove the ephemeral node %s on close: %s", file, exc)
        self._owned.clear()

    def _put(self, path: str, data: bytes, ephemeral: bool) -> None:
        file = self._file(path)
        try:
            file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StateManagerError(f"cannot create the directory {file.parent}: {exc}") from exc
        if not ephemeral:
            self._write(file, _MAGIC + b" -\n" + data)
            return
        me = self._owner
        assert me is not None  # set by _start
        with self._locked(file.parent):
            node = self._load(file)
            if node is not None and node.owner not in (None, me) and node.present:
                owner = node.owner
                assert owner is not None
                raise StateManagerError(
                    f"{file} belongs to another live owner (pid {owner.pid}, manager "
                    f"{owner.session}); this manager (pid {me.pid}) must not take it over"
                )
            header = f" {me.pid} {me.started} {me.session}\n".encode()
            self._write(file, _MAGIC + header + data)
        self._owned.add(path)

    def _get(self, path: str) -> bytes | None:
        node = self._load(self._file(path))
        return node.payload if node is not None and node.present else None

    def _delete(self, path: str) -> None:
        file = self._file(path)
        try:
            file.unlink(missing_ok=True)
        except OSError as exc:
            raise StateManagerError(f"cannot delete {file}: {exc}") from exc
        self._owned.discard(path)

    def _children(self, directory: str) -> list[str]:
        try:
            names = os.listdir(self.root / directory)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StateManagerError(f"cannot list {self.root / directory}: {exc}") from exc
        return [name for name in names if not name.startswith(".")]

    def _watch(self, path: str, callback: Callable[[bytes | None], None]) -> Callable[[], None]:
        stopped = threading.Event()
        thread = threading.Thread(
            target=self._poll,
            args=(self._file(path), callback, stopped),
            name=f"statemgr-watch-{path}",
            daemon=True,
        )
        thread.start()

        def stop() -> None:
            stopped.set()
            if threading.current_thread() is not thread:
                thread.join()

        return stop

    def _location(self, path: str) -> str:
        return str(self._file(path))

    # ----------------------------------------------------------------------------- helpers

    def _file(self, path: str) -> Path:
        return self.root / path

    def _poll(
        self, file: Path, callback: Callable[[bytes | None], None], stopped: threading.Event
    ) -> None:
        delivered: tuple[tuple[int, int, int] | None, bytes | None] | None = None
        failure = ""
        while not stopped.is_set():
            try:
                node = self._load(file)
            except StateManagerError as exc:
                if str(exc) != failure:
                    logger.warning("watch on %s: %s", file, exc)
                failure = str(exc)
            else:
                failure = ""
                signature = None if node is None else node.signature
                data = node.payload if node is not None and node.present else None
                # Deliver a change of value, and every rewrite of a present node.
                if (
                    delivered is None
                    or data != delivered[1]
                    or (data is not None and signature != delivered[0])
                ):
                    delivered = (signature, data)
                    callback(data)
            stopped.wait(_POLL_INTERVAL_S)

    @staticmethod
    def _load(file: Path) -> _Node | None:
        try:
            with open(file, "rb") as stream:
                stat = os.fstat(stream.fileno())
                raw = stream.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateManagerError(f"cannot read {file}: {exc}") from exc
        header, newline, payload = raw.partition(b"\n")
        fields = header.split(b" ")
        try:
            if not newline or b" ".join(fields[:2]) != _MAGIC:
                raise ValueError("bad magic")
            if fields[2:] == [b"-"]:
                owner = None
            else:
                pid, started, session = (field.decode("ascii") for field in fields[2:])
                owner = _Owner(int(pid), started, session)
        except ValueError:
            raise StateManagerError(
                f"{file} is not a heron state file: expected a first line "
                f"'heron-state 1 -' or 'heron-state 1 <pid> <start> <session>', "
                f"found {header[:60]!r}"
            ) from None
        return _Node((stat.st_ino, stat.st_mtime_ns, stat.st_size), owner, payload)

    @staticmethod
    def _write(file: Path, blob: bytes) -> None:
        temporary = file.with_name(f".{file.name}.{uuid.uuid4().hex}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with open(fd, "wb") as stream:
                stream.write(blob)
            os.replace(temporary, file)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise StateManagerError(f"cannot write {file}: {exc}") from exc

    @staticmethod
    @contextmanager
    def _locked(directory: Path) -> Iterator[None]:
        """Hold an exclusive lock on ``directory`` (against other threads and processes)."""
        try:
            stream = open(directory / ".lock", "a+b")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise StateManagerError(f"cannot lock {directory}: {exc}") from exc
        with stream:
            fcntl.flock(stream, fcntl.LOCK_EX)
            yield
