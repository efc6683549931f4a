"""The checkpoint manager of one container: a thread between its stream manager and the
topology's state store."""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from heron_core.ckptmgr.base import StateStore

__all__ = ["CheckpointManager", "Saved"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Saved:
    """The outcome of one save: ``error`` is None when the state is stored."""

    checkpoint_id: str
    task_id: int
    error: str | None = None


class CheckpointManager:
    """Saves and deletes checkpoints on its own thread; loads on the caller's.

    Store calls never overlap (one lock), so a store need not be thread-safe.

    Args:
        store: the topology's state store (closed by `close`).
        wake: called from the thread after each save (e.g. to wake a poll loop); the outcome
            is in `done`.

    >>> import tempfile
    >>> from heron_core.ckptmgr.localfs import LocalFileSystemStore
    >>> tmp = tempfile.TemporaryDirectory()
    >>> manager = CheckpointManager(LocalFileSystemStore(
    ...     {"heron.statefulstorage.localfs.root.path": tmp.name}, "wc"))
    >>> manager.save("0001-000001", 7, b"s")
    >>> manager.close()
    >>> list(manager.done), manager.load("0001-000001", 7)
    ([Saved(checkpoint_id='0001-000001', task_id=7, error=None)], b's')
    >>> tmp.cleanup()
    """

    def __init__(self, store: StateStore, wake: Callable[[], None] | None = None) -> None:
        self.store = store
        self._wake = wake
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self.done: deque[Saved] = deque()
        """Outcomes of saves, oldest first (the owner pops them)."""
        self._thread = threading.Thread(target=self._work, name="ckptmgr", daemon=True)
        self._thread.start()

    def save(self, checkpoint_id: str, task_id: int, data: bytes) -> None:
        """Store ``data`` as ``task_id``'s state of ``checkpoint_id``; the outcome comes in
        `done`."""

        def job() -> None:
            error = None
            try:
                with self._lock:
                    self.store.save(checkpoint_id, task_id, data)
            except Exception as exc:  # any store failure fails this checkpoint, not the daemon
                error = f"{type(exc).__name__}: {exc}"
                log.error("checkpoint %s of task %d not stored: %s", checkpoint_id, task_id, error)
            self.done.append(Saved(checkpoint_id, task_id, error))
            if self._wake is not None:
                self._wake()

        self._jobs.put(job)

    def dispose(self, task_ids: Iterable[int], oldest_kept: str) -> None:
        """Delete the checkpoints of ``task_ids`` older than ``oldest_kept``, in the background
        (after the saves queued before)."""
        tasks = list(task_ids)

        def job() -> None:
            try:
                with self._lock:
                    self.store.dispose(tasks, oldest_kept)
            except Exception as exc:  # old checkpoints stay; the next dispose tries again
                log.warning("cannot delete checkpoints older than %s: %s", oldest_kept, exc)

        self._jobs.put(job)

    def load(self, checkpoint_id: str, task_id: int) -> bytes | None:
        """``task_id``'s state of ``checkpoint_id`` (None: none stored), read now.

        Raises:
            Exception: whatever the store raises.
        """
        with self._lock:
            return self.store.load(checkpoint_id, task_id)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job()

    def close(self, timeout_s: float = 10.0) -> None:
        """Finish the queued work (up to ``timeout_s``), then close the store; a store call
        still running then (a hung mount) is left to itself and the store is not closed, so
        that close never takes much longer than ``timeout_s``."""
        self._jobs.put(None)
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.warning("the checkpoint manager did not finish its queued work in %gs", timeout_s)
        if not self._lock.acquire(timeout=0 if self._thread.is_alive() else -1):
            log.warning("a state store call is still running; the store is left open")
            return
        try:
            self.store.close()
        finally:
            self._lock.release()
