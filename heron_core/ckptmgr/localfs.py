"""The ``localfs`` state store: one file per task and checkpoint under a directory.

Layout: ``<root>/<topology>/<task>/<checkpoint id>``. On one machine the root defaults to
``<heron.directory.home>/checkpoints``; past one machine it must be a directory every host
mounts (NFS, a mounted HDFS), named by ``heron.statefulstorage.localfs.root.path``.

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> store = LocalFileSystemStore({"heron.statefulstorage.localfs.root.path": tmp.name}, "wc")
>>> store.save("0001-000001", 3, b"state")
>>> store.load("0001-000001", 3), store.load("0001-000002", 3)
(b'state', None)
>>> tmp.cleanup()
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from heron_core.ckptmgr.base import StateStore
from heron_core.config import resolve_path, setting
from heron_core.errors import ConfigurationError

__all__ = ["LocalFileSystemStore"]

ROOT_KEY = "heron.statefulstorage.localfs.root.path"


class LocalFileSystemStore(StateStore):
    """Checkpoints as files (written to a temporary name, then renamed into place)."""

    def __init__(self, config: Mapping[str, Any], topology_name: str) -> None:
        super().__init__(config, topology_name)
        root = config.get(ROOT_KEY) or ""
        if not root:
            home = setting(config, "heron.directory.home")
            root = str(Path(str(home)) / "checkpoints")
        if "/" in topology_name or topology_name in ("", ".", ".."):
            raise ConfigurationError(f"topology name {topology_name!r} cannot name a directory")
        self.root = resolve_path(str(root)).absolute() / topology_name

    def _task_dir(self, task_id: int) -> Path:
        return self.root / str(int(task_id))

    def _file(self, checkpoint_id: str, task_id: int) -> Path:
        """Where ``task_id``'s state of ``checkpoint_id`` lives.

        Raises:
            ValueError: the id cannot be a file name (empty, a path, or hidden like the
                temporaries), naming topology, task and id.
        """
        if not checkpoint_id or "/" in checkpoint_id or checkpoint_id.startswith("."):
            raise ValueError(
                f"topology {self.topology_name!r}, task {task_id}: checkpoint id "
                f"{checkpoint_id!r} cannot name a file"
            )
        return self._task_dir(task_id) / checkpoint_id

    def location(self, checkpoint_id: str, task_id: int) -> str:
        return str(self._file(checkpoint_id, task_id))

    def save(self, checkpoint_id: str, task_id: int, data: bytes) -> None:
        final = self._file(checkpoint_id, task_id)
        directory = final.parent
        # owner-only: mkdir's mode does not reach the parents it makes, so the topology's
        # directory is made on its own
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        directory.mkdir(exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".partial-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, final)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def load(self, checkpoint_id: str, task_id: int) -> bytes | None:
        try:
            return self._file(checkpoint_id, task_id).read_bytes()
        except FileNotFoundError:
            return None

    def dispose(self, task_ids: Iterable[int], oldest_kept: str) -> None:
        for task_id in task_ids:
            directory = self._task_dir(task_id)
            if not oldest_kept:
                shutil.rmtree(directory, ignore_errors=True)
                continue
            try:
                names = os.listdir(directory)
            except FileNotFoundError:
                continue
            for name in names:
                if name < oldest_kept or name.startswith(".partial-"):
                    (directory / name).unlink(missing_ok=True)
