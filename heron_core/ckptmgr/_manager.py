"""The checkpoint manager of one container: a thread between its stream manager and the
topology's state store.

Every state it saves is sealed (``heron_core.statemgr.Seal``: an HMAC-SHA256 keyed from the
topology's secret with the label `CHECKPOINT_LABEL`, over the topology, the task, the
checkpoint id and the state), and every state it loads must carry that seal: a state written
into the store by anyone without the topology's key pair, or moved from another task or
checkpoint, is refused (`CheckpointAuthenticationError`) before it reaches an instance, which
would unpickle it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from heron_core.ckptmgr.base import StateStore
from heron_core.errors import HeronError
from heron_core.statemgr import Seal, SealBroken

__all__ = [
    "CHECKPOINT_LABEL",
    "CheckpointAuthenticationError",
    "CheckpointManager",
    "Saved",
    "checkpoint_context",
    "checkpoint_seal",
]

log = logging.getLogger(__name__)

CHECKPOINT_LABEL = b"heron checkpoint v1"
"""The `TopologyKeys.derive` label of the key that seals a topology's checkpoints."""


class CheckpointAuthenticationError(HeronError):
    """A stored state carries no MAC, or one that does not match: it is not restored."""


def checkpoint_seal(topology: str, working_dir: Path) -> Seal:
    """The seal of topology ``topology``'s checkpoints, keyed from its key pair in
    ``working_dir/keys`` (W).

    Raises:
        ConfigurationError: the key pair cannot be read (naming the directory).
    """
    from heron_core.network import KEYS_DIR, TopologyKeys  # zmq.auth: loaded on first use

    keys = TopologyKeys.load(Path(working_dir) / KEYS_DIR)
    return Seal(keys.derive(CHECKPOINT_LABEL), topology)


def checkpoint_context(topology: str, checkpoint_id: str, task_id: int) -> bytes:
    """What a checkpointed state is, for its MAC: its topology, task and checkpoint (the
    ``context`` of `Seal.seal` and `Seal.open`).

    >>> checkpoint_context("wc", "0001-000001", 7)
    b'checkpoint/wc/7/0001-000001'
    """
    return f"checkpoint/{topology}/{int(task_id)}/{checkpoint_id}".encode()


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
        seal: the topology's checkpoint seal (`checkpoint_seal`): what is saved is sealed
            with it, what is loaded must open with it.
        wake: called from the thread after each save (e.g. to wake a poll loop); the outcome
            is in `done`.

    >>> import tempfile
    >>> from heron_core.ckptmgr.localfs import LocalFileSystemStore
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = LocalFileSystemStore({"heron.statefulstorage.localfs.root.path": tmp.name}, "wc")
    >>> manager = CheckpointManager(store, Seal(b"k" * 32, "wc"))
    >>> manager.save("0001-000001", 7, b"s")
    >>> manager.close()
    >>> list(manager.done), manager.load("0001-000001", 7)
    ([Saved(checkpoint_id='0001-000001', task_id=7, error=None)], b's')
    >>> store.save("0001-000001", 7, b"written without the key")
    >>> manager.load("0001-000001", 7)
    Traceback (most recent call last):
    ...
    heron_core.ckptmgr._manager.CheckpointAuthenticationError: topology 'wc': task 7's state \
of checkpoint 0001-000001 (.../wc/7/0001-000001) fails authentication: it carries no MAC \
(written without the topology's key); it is not restored (nothing of it is unpickled)
    >>> tmp.cleanup()
    """

    def __init__(
        self, store: StateStore, seal: Seal, wake: Callable[[], None] | None = None
    ) -> None:
        self.store = store
        self.seal = seal
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

        context = checkpoint_context(self.store.topology_name, checkpoint_id, task_id)
        sealed = self.seal.seal(context, data)

        def job() -> None:
            error = None
            try:
                with self._lock:
                    self.store.save(checkpoint_id, task_id, sealed)
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
        """``task_id``'s state of ``checkpoint_id`` (None: none stored), read now and opened
        with the seal.

        Raises:
            CheckpointAuthenticationError: the stored state carries no MAC or one that does
                not match (the message names the topology, the task, the checkpoint and
                where the store keeps it).
            Exception: whatever the store raises.
        """
        with self._lock:
            data = self.store.load(checkpoint_id, task_id)
        if data is None:
            return None
        topology = self.store.topology_name
        try:
            return self.seal.open(checkpoint_context(topology, checkpoint_id, task_id), data)
        except SealBroken as exc:
            raise CheckpointAuthenticationError(
                f"topology {topology!r}: task {task_id}'s state of checkpoint {checkpoint_id} "
                f"({self.store.location(checkpoint_id, task_id)}) fails authentication: {exc}; "
                "it is not restored (nothing of it is unpickled)"
            ) from None

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
