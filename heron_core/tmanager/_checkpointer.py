"""The topology manager's side of effectively-once processing: when to checkpoint, when a
checkpoint is consistent, and rollbacks (Heron's ``StatefulController``).

Phases: until every stream manager has registered nothing happens. Then, and whenever a stream
manager registers again (it restarted, and lost what it held) or asks for it
(``ResetTopologyState``: one of its instances restarted), the whole topology rolls back to the
newest consistent checkpoint: ``RestoreTopologyStateRequest`` to every stream manager; once all
have answered, ``StartStmgrStatefulProcessing``. While running, every
``topology.stateful.checkpoint.interval.seconds`` a new checkpoint starts at the spouts
(``StartStatefulCheckpoint``), unless the previous one is still in progress (unlike Heron,
which would start it and drop the older one: see `CHECKPOINT_TIMEOUT_S`); once every task
has reported its state stored (``InstanceStateStored``), the checkpoint is consistent: it is
stored under ``statefulcheckpoints/<topology>`` (newest first,
``heron.statefulstorage.max.checkpoints`` of them) and announced, so that the stores delete
older ones. One checkpoint is tracked at a time.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable
from enum import Enum

from google.protobuf.message import Message

from heron_core.proto import ckptmgr_pb2, common_pb2

__all__ = ["Checkpointer", "Phase"]

log = logging.getLogger(__name__)

RESTORE_TIMEOUT_S = 60.0
"""A rollback not answered by every stream manager in this time starts again."""

CHECKPOINT_TIMEOUT_S = 60.0
"""A checkpoint not consistent after this time is given up for a new one. Until then no new
checkpoint starts: under load a checkpoint can take longer than the interval, and starting the
next one would make the older one's states useless (only the newest partial one is tracked),
so that none would ever complete."""


_MAX_SEQUENCE = 999_999
"""Checkpoint ids are ``<13-digit start ms>-<6-digit sequence>``; past this sequence the
start part moves on (so that ids keep sorting in the order they were made)."""


def _start_ms(checkpoint_id: str) -> int:
    """The start part of a checkpoint id (0 when it has none).

    >>> _start_ms("1700000000000-000042"), _start_ms("x")
    (1700000000000, 0)
    """
    head = checkpoint_id.partition("-")[0]
    return int(head) if head.isascii() and head.isdigit() else 0


class Phase(Enum):
    WAITING = "waiting for every stream manager"
    RESTORING = "rolling back"
    RUNNING = "running"


class Checkpointer:
    """Checkpoints and rollbacks of one topology.

    Args:
        topology_name: in log lines.
        interval_s: seconds between checkpoints.
        tasks: every task id of the topology.
        packing_plan_id: stored with each consistent checkpoint.
        consistent: the consistent checkpoints to start from (newest first; empty: empty
            state).
        keep: consistent checkpoints kept.
        broadcast: sends a message to every registered stream manager.
        store: persists the consistent checkpoints (newest first).
        clock: monotonic seconds.
        wall_clock: seconds since the epoch (checkpoint ids and restore ids).

    >>> sent = []
    >>> c = Checkpointer("wc", 1.0, [1, 2], "p1", [], 2, sent.append, lambda s: None,
    ...                  clock=lambda: 0.0, wall_clock=lambda: 1.0)
    >>> c.on_registered(["stmgr-1"])
    >>> type(sent[-1]).__name__, sent[-1].checkpoint_id
    ('RestoreTopologyStateRequest', '')
    >>> c.on_restored(ckptmgr_pb2.RestoreTopologyStateResponse(
    ...     stmgr="stmgr-1", restore_txid=sent[-1].restore_txid))
    >>> type(sent[-1]).__name__, c.phase.name
    ('StartStmgrStatefulProcessing', 'RUNNING')
    """

    def __init__(
        self,
        topology_name: str,
        interval_s: float,
        tasks: Iterable[int],
        packing_plan_id: str,
        consistent: Iterable[ckptmgr_pb2.StatefulConsistentCheckpoint],
        keep: int,
        broadcast: Callable[[Message], None],
        store: Callable[[ckptmgr_pb2.StatefulConsistentCheckpoints], None],
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._name = topology_name
        self._interval = interval_s
        self._tasks = frozenset(tasks)
        self._packing_plan_id = packing_plan_id
        self.consistent = list(consistent)[:keep]
        self._keep = keep
        self._broadcast = broadcast
        self._store = store
        self._clock = clock
        self._wall_clock = wall_clock
        start_ms = int(wall_clock() * 1000)
        self._txid = start_ms << 20
        # ids must sort after the stored ones even if this host's clock is behind the one
        # that made them: the stores delete what sorts before the oldest kept
        for stored in self.consistent:
            start_ms = max(start_ms, _start_ms(stored.checkpoint_id) + 1)
        self._start_ms = start_ms
        self._seq = 0
        self.phase = Phase.WAITING
        self._stmgrs: set[str] = set()
        self._pending: set[str] = set()  # stream managers yet to answer the rollback
        self._restore_deadline = math.inf
        self._next_checkpoint = math.inf
        self._partial = ""  # the checkpoint in progress
        self._partial_since = -math.inf  # when it started
        self._reported: set[int] = set()
        self.checkpoints_started = 0
        self.checkpoints_completed = 0
        self.restores = 0

    @property
    def newest(self) -> str:
        """The newest consistent checkpoint's id ('' before the first)."""
        return self.consistent[0].checkpoint_id if self.consistent else ""

    def next_deadline(self) -> float | None:
        """When `tick` has something to do (for the poll loop)."""
        due = min(self._next_checkpoint, self._restore_deadline)
        return None if due == math.inf else due

    # --- rollbacks -------------------------------------------------------------------------------
    def on_registered(self, stmgrs: Iterable[str]) -> None:
        """Every stream manager is registered, and ``stmgrs`` are they; one has just
        (re-)registered: roll back."""
        self._stmgrs = set(stmgrs)
        self._restore("a stream manager registered")

    def on_reset(self, message: ckptmgr_pb2.ResetTopologyState) -> None:
        if self.phase is Phase.WAITING:
            return
        self._restore(f"{message.stmgr} asked: {message.reason}")

    def _restore(self, why: str) -> None:
        self._txid += 1
        self.restores += 1
        self.phase = Phase.RESTORING
        self._pending = set(self._stmgrs)
        self._partial, self._reported = "", set()
        self._next_checkpoint = math.inf
        self._restore_deadline = self._clock() + RESTORE_TIMEOUT_S
        log.info(
            "topology %r: rolling back to checkpoint %s (restore %d): %s",
            self._name,
            self.newest or "(none: empty state)",
            self._txid,
            why,
        )
        self._broadcast(
            ckptmgr_pb2.RestoreTopologyStateRequest(
                checkpoint_id=self.newest, restore_txid=self._txid
            )
        )

    def on_restored(self, message: ckptmgr_pb2.RestoreTopologyStateResponse) -> None:
        if self.phase is not Phase.RESTORING or message.restore_txid != self._txid:
            return
        if message.status.status not in (common_pb2.OK, 0):
            log.warning("topology %r: %s failed its rollback", self._name, message.stmgr)
            return
        self._pending.discard(message.stmgr)
        if self._pending:
            return
        self.phase = Phase.RUNNING
        self._restore_deadline = math.inf
        self._next_checkpoint = self._clock() + self._interval
        log.info("topology %r: rolled back (restore %d); running", self._name, self._txid)
        self._broadcast(
            ckptmgr_pb2.StartStmgrStatefulProcessing(
                checkpoint_id=self.newest, restore_txid=self._txid
            )
        )

    # --- checkpoints -----------------------------------------------------------------------------
    def tick(self) -> None:
        """Start the next checkpoint, or roll back again, when due."""
        now = self._clock()
        if now >= self._restore_deadline:
            self._restore(f"not every stream manager answered in {RESTORE_TIMEOUT_S:g} s")
        elif now >= self._next_checkpoint:
            self._next_checkpoint = now + self._interval
            if self._partial and now < self._partial_since + CHECKPOINT_TIMEOUT_S:
                return  # the one in progress first (see CHECKPOINT_TIMEOUT_S)
            if self._partial:
                log.warning(
                    "topology %r: checkpoint %s not consistent after %g s (%d of %d tasks); "
                    "starting another",
                    self._name,
                    self._partial,
                    CHECKPOINT_TIMEOUT_S,
                    len(self._reported),
                    len(self._tasks),
                )
            self._partial_since = now
            self._seq += 1
            if self._seq > _MAX_SEQUENCE:  # the id would stop sorting: a new prefix
                self._start_ms = max(int(self._wall_clock() * 1000), self._start_ms + 1)
                self._seq = 1
            self._partial = f"{self._start_ms:013d}-{self._seq:06d}"
            self._reported = set()
            self.checkpoints_started += 1
            self._broadcast(ckptmgr_pb2.StartStatefulCheckpoint(checkpoint_id=self._partial))

    def on_stored(self, message: ckptmgr_pb2.InstanceStateStored) -> None:
        if (
            not self._partial
            or message.checkpoint_id != self._partial
            or message.task_id not in self._tasks
        ):
            return  # no checkpoint in progress (an empty id is none), an older one, or no task
        self._reported.add(message.task_id)
        if len(self._reported) < len(self._tasks):
            return
        done = ckptmgr_pb2.StatefulConsistentCheckpoint(
            checkpoint_id=self._partial, packing_plan_id=self._packing_plan_id
        )
        self._partial, self._reported = "", set()
        self.checkpoints_completed += 1
        self.consistent = [done, *self.consistent][: self._keep]
        self._store(
            ckptmgr_pb2.StatefulConsistentCheckpoints(consistent_checkpoints=self.consistent)
        )
        self._broadcast(
            ckptmgr_pb2.StatefulConsistentCheckpointSaved(
                consistent_checkpoint=done,
                oldest_checkpoint_preserved=self.consistent[-1].checkpoint_id,
            )
        )
