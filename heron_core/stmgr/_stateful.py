"""The stream manager's side of effectively-once processing (``EFFECTIVELY_ONCE``).

**Checkpoints.** The topology manager's ``StartStatefulCheckpoint`` goes to the local spouts as
``InitiateStatefulCheckpoint``. An instance that has saved its state sends it back
(``StoreInstanceStateCheckpoint``) behind everything it emitted before; this stream manager
hands the state to its checkpoint manager and sends a marker (``DownstreamStatefulCheckpoint``)
to every task downstream of the instance, on the same path as its tuples (a peer's outbox, or
straight into the gate of a local task), so that the marker stays behind them. The gate of a
local task (`Gate`) holds back the tuples of each input task that has delivered its marker
until every input task has: then the task is told to checkpoint, and what was held back is
replayed in order. Each stored state is reported to the topology manager
(``InstanceStateStored``), which declares the checkpoint consistent once every task's is.

**Rollback.** On ``RestoreTopologyStateRequest`` every gate and every queued tuple is dropped,
a barrier (``RestoreBarrier``) goes to every peer behind whatever was sent to it before, and each
local instance gets its state of the checkpoint rolled back to. Until an instance answers,
what it sends is dropped (it is of the old run); until every peer's barrier has arrived, what
peers send is dropped (a peer sends nothing new before the topology manager's start, which
comes after every stream manager has answered). Then the answer goes to the topology manager,
whose ``StartStmgrStatefulProcessing`` lets the instances run again. An instance that restarts
here makes this stream manager ask for a rollback (``ResetTopologyState``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from heron_core.ckptmgr import CheckpointManager
from heron_core.network import encode
from heron_core.proto import ckptmgr_pb2, common_pb2, physical_plan_pb2, tuple_pb2
from heron_core.stmgr._outbox import Outbox

__all__ = ["Gate", "StatefulStMgr", "Topology"]

log = logging.getLogger(__name__)

_Item = tuple[str, Any]
"""What a gate holds back for one input task: ("data", frames) or ("marker", checkpoint id)."""


@dataclass
class Topology:
    """Who feeds whom, by task, from a physical plan."""

    downstream: dict[int, list[int]] = field(default_factory=dict)
    upstream: dict[int, frozenset[int]] = field(default_factory=dict)
    stmgr_of: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, pplan: physical_plan_pb2.PhysicalPlan) -> Topology:
        """The task graph of ``pplan``: a task feeds every task of every component that
        subscribes to any of its component's streams.

        >>> from heron_core.testing.topologies import word_count_proto
        >>> from heron_core.proto import physical_plan_pb2 as pp
        >>> topology = word_count_proto()
        >>> plan = pp.PhysicalPlan(topology=topology, instances=[
        ...     pp.Instance(stmgr_id="stmgr-1", info=pp.InstanceInfo(
        ...         task_id=t, component_name=c)) for t, c in
        ...     [(1, "word"), (2, "count"), (3, "count")]])
        >>> graph = Topology.of(plan)
        >>> graph.downstream[1], sorted(graph.upstream[2])
        ([2, 3], [1])
        """
        tasks: dict[str, list[int]] = {}
        graph = cls()
        for instance in pplan.instances:
            tasks.setdefault(instance.info.component_name, []).append(instance.info.task_id)
            graph.stmgr_of[instance.info.task_id] = instance.stmgr_id
        consumers: dict[str, set[str]] = {}
        for bolt in pplan.topology.bolts:
            for inp in bolt.inputs:
                consumers.setdefault(inp.stream.component_name, set()).add(bolt.comp.name)
        for component, own in tasks.items():
            feeds = sorted(t for c in consumers.get(component, ()) for t in tasks.get(c, ()))
            for task in own:
                graph.downstream[task] = feeds
        for bolt in pplan.topology.bolts:
            inputs = frozenset(
                t for inp in bolt.inputs for t in tasks.get(inp.stream.component_name, ())
            )
            for task in tasks.get(bolt.comp.name, ()):
                graph.upstream[task] = inputs
        return graph


class Gate:
    """The marker alignment of one local task: which input tasks have delivered the marker of
    the checkpoint being aligned, and what each has sent since (held back, in order).

    Args:
        inputs: the task's input tasks.
        limit_bytes: held-back bytes past which the checkpoint is given up for this task.

    >>> gate = Gate(frozenset({1, 2}), 1 << 20)
    >>> gate.marker(1, "c1")
    False
    >>> gate.holds(1), gate.holds(2)
    (True, False)
    >>> gate.hold(1, ("data", [b"x"]), 1)
    True
    >>> gate.marker(2, "c1")
    True
    >>> gate.take()
    ('c1', {1: deque([('data', [b'x'])]), 2: deque([])})
    """

    __slots__ = ("checkpoint", "held", "held_bytes", "inputs", "limit_bytes")

    def __init__(self, inputs: frozenset[int], limit_bytes: int) -> None:
        self.inputs = inputs
        self.limit_bytes = limit_bytes
        self.checkpoint = ""
        self.held: dict[int, deque[_Item]] = {}
        self.held_bytes = 0

    @property
    def aligning(self) -> bool:
        return bool(self.checkpoint)

    def holds(self, source: int) -> bool:
        """Whether what ``source`` sends now must be held back."""
        return source in self.held

    def hold(self, source: int, item: _Item, nbytes: int) -> bool:
        """Hold ``item`` back; False once past the limit (give the checkpoint up)."""
        self.held[source].append(item)
        self.held_bytes += nbytes
        return self.held_bytes <= self.limit_bytes

    def marker(self, source: int, checkpoint: str) -> bool:
        """``source`` delivered ``checkpoint``'s marker; True when every input has (call
        `take`)."""
        if not self.checkpoint:
            self.checkpoint = checkpoint
        self.held.setdefault(source, deque())
        return len(self.held) >= len(self.inputs)

    def take(self) -> tuple[str, dict[int, deque[_Item]]]:
        """The aligned checkpoint and what was held back; the gate is open again."""
        taken = self.checkpoint, self.held
        self.checkpoint, self.held, self.held_bytes = "", {}, 0
        return taken


@dataclass
class _Restore:
    txid: int
    checkpoint: str
    instances: set[int]
    peers: set[str]
    failed: bool = False  # a state could not be loaded: this rollback never completes


class StatefulStMgr:
    """Checkpoints and rollbacks of one stream manager (see the module's docstring).

    Args:
        stmgr_id: the stream manager's id.
        local_tasks: its local tasks; spout_tasks, those that run spouts.
        checkpoints: its checkpoint manager.
        to_instance: sends a message to a local task.
        to_tmanager: sends a message to the topology manager.
        deliver: routes a tuple batch's frames to its local task (past the gate).
        limit_bytes: ``heron.streammgr.stateful.buffer.size.mb`` in bytes.
        drop_queued: drops the tuple batches queued in every outbox.
    """

    def __init__(
        self,
        stmgr_id: str,
        local_tasks: Sequence[int],
        spout_tasks: set[int],
        checkpoints: CheckpointManager,
        to_instance: Callable[[int, Any], None],
        to_tmanager: Callable[[Any], None],
        deliver: Callable[[int, Sequence[bytes]], None],
        limit_bytes: int,
        drop_queued: Callable[[], int],
    ) -> None:
        self.stmgr_id = stmgr_id
        self.local_tasks = list(local_tasks)
        self.spout_tasks = spout_tasks
        self.checkpoints = checkpoints
        self._to_instance = to_instance
        self._to_tmanager = to_tmanager
        self._deliver = deliver
        self._limit = limit_bytes
        self._drop_queued = drop_queued
        self.graph = Topology()
        self.gates: dict[int, Gate] = {}
        """Local tasks with a checkpoint being aligned (the routing loop reads it)."""
        self._peer_box: Callable[[int], Outbox | None] = lambda task: None
        self._peers: Callable[[], list[str]] = list
        self._send_peer: Callable[[Outbox, Sequence[bytes]], None] = lambda box, frames: None
        self._restore: _Restore | None = None
        self._barriers: dict[str, int] = {}  # peer -> txid of the newest barrier it sent
        self.dropped = 0
        """Tuple batches dropped because they were sent before a rollback, since the last
        `take_counts`."""
        self.given_up = 0
        """Checkpoints given up at a gate (held-back tuples past the limit), since the last
        `take_counts`."""

    def take_counts(self) -> tuple[int, int]:
        """``(dropped, given_up)`` of the interval that ends, both restarting from 0 (the
        stream manager publishes them every metrics interval)."""
        counts = (self.dropped, self.given_up)
        self.dropped = self.given_up = 0
        return counts

    def connect(
        self,
        peer_box: Callable[[int], Outbox | None],
        peers: Callable[[], list[str]],
        send_peer: Callable[[Outbox, Sequence[bytes]], None],
        peer_box_by_id: Callable[[str], Outbox | None],
    ) -> None:
        """How to reach the peers (their outboxes, by remote task or by id)."""
        self._peer_box = peer_box
        self._peers = peers
        self._send_peer = send_peer
        self._peer_box_by_id = peer_box_by_id

    def apply(self, pplan: physical_plan_pb2.PhysicalPlan) -> None:
        self.graph = Topology.of(pplan)

    # --- the data path -----------------------------------------------------------------------
    def accepts_from_instance(self, task: int) -> bool:
        """Whether what local task ``task`` sends now belongs to the current run."""
        restore = self._restore
        return restore is None or task not in restore.instances

    @property
    def accepts_from_peers(self) -> bool:
        """Whether what peers send now belongs to the current run."""
        restore = self._restore
        return restore is None or not restore.peers

    def gate(self, task: int, frames: Sequence[bytes]) -> bool:
        """Called for a batch to local ``task`` while it aligns a checkpoint: True when the
        batch was held back (else route it)."""
        source = tuple_pb2.TupleBatch.FromString(frames[2]).src_task
        if not self.gates[task].holds(source):
            return False
        self._data(source, task, frames)
        return True

    # --- checkpoints -------------------------------------------------------------------------
    def on_start_checkpoint(self, message: ckptmgr_pb2.StartStatefulCheckpoint) -> None:
        if self._restore is not None:
            return
        initiate = ckptmgr_pb2.InitiateStatefulCheckpoint(checkpoint_id=message.checkpoint_id)
        for task in self.spout_tasks:
            self._to_instance(task, initiate)

    def on_instance_state(
        self, message: ckptmgr_pb2.StoreInstanceStateCheckpoint, task: int
    ) -> None:
        """Local ``task`` saved its state: store it, and send its markers downstream."""
        if not self.accepts_from_instance(task):
            return
        checkpoint = message.checkpoint_id
        self.checkpoints.save(checkpoint, task, message.state)
        for dest in self.graph.downstream.get(task, ()):
            if self.graph.stmgr_of.get(dest) == self.stmgr_id:
                self._marker(task, dest, checkpoint)
                continue
            box = self._peer_box(dest)
            if box is None:
                log.warning(
                    "%s: no route for the marker of checkpoint %s from task %d to task %d",
                    self.stmgr_id,
                    checkpoint,
                    task,
                    dest,
                )
                continue
            marker = ckptmgr_pb2.DownstreamStatefulCheckpoint(
                origin_task_id=task, destination_task_id=dest, checkpoint_id=checkpoint
            )
            self._send_peer(box, encode(marker))

    def on_peer_marker(self, message: ckptmgr_pb2.DownstreamStatefulCheckpoint) -> None:
        if not self.accepts_from_peers:
            return
        dest = message.destination_task_id
        if self.graph.stmgr_of.get(dest) != self.stmgr_id:
            log.warning("%s: a checkpoint marker for task %d, not local", self.stmgr_id, dest)
            return
        self._marker(message.origin_task_id, dest, message.checkpoint_id)

    def _marker(self, source: int, task: int, checkpoint: str) -> None:
        inputs = self.graph.upstream.get(task, frozenset())
        if source not in inputs:  # it would count towards the alignment in an input's place
            log.warning(
                "%s: a marker of checkpoint %s from task %d, not an input of task %d",
                self.stmgr_id,
                checkpoint,
                source,
                task,
            )
            return
        gate = self.gates.get(task)
        if gate is None:
            gate = self.gates[task] = Gate(inputs, self._limit)
        elif gate.holds(source):  # a newer marker behind held-back tuples: keep the order
            gate.hold(source, ("marker", checkpoint), 0)
            return
        elif gate.checkpoint and checkpoint != gate.checkpoint:
            if checkpoint < gate.checkpoint:
                return  # an older checkpoint's marker, after a newer one started: obsolete
            # a newer checkpoint while the older one waits for an input that skipped it
            log.info(
                "%s: task %d gives up checkpoint %s for %s",
                self.stmgr_id,
                task,
                gate.checkpoint,
                checkpoint,
            )
            self._release(task, gate, checkpoint=None)
            self._marker(source, task, checkpoint)
            return
        if gate.marker(source, checkpoint):
            self._release(task, gate, checkpoint=gate.checkpoint)

    def _release(self, task: int, gate: Gate, checkpoint: str | None) -> None:
        """Open ``task``'s gate: tell it to checkpoint (unless given up), then replay what was
        held back, input by input, in order (a newer marker among it aligns again)."""
        _, held = gate.take()
        del self.gates[task]
        if checkpoint is not None:
            initiate = ckptmgr_pb2.InitiateStatefulCheckpoint(checkpoint_id=checkpoint)
            self._to_instance(task, initiate)
        for source, items in held.items():
            for kind, value in items:
                if kind == "marker":
                    self._marker(source, task, value)
                else:
                    self._data(source, task, value)

    def _data(self, source: int, task: int, frames: Sequence[bytes]) -> None:
        gate = self.gates.get(task)
        if gate is None or not gate.holds(source):
            self._deliver(task, frames)
        elif not gate.hold(source, ("data", frames), len(frames[2])):
            self._give_up(task, gate)

    def _give_up(self, task: int, gate: Gate) -> None:
        self.given_up += 1
        log.warning(
            "%s: task %d held back %d bytes waiting for the markers of checkpoint %s; "
            "giving it up for this task (heron.streammgr.stateful.buffer.size.mb)",
            self.stmgr_id,
            task,
            gate.held_bytes,
            gate.checkpoint,
        )
        # replayed as it came: a newer checkpoint's marker among it still aligns that one
        self._release(task, gate, checkpoint=None)

    def on_saved(self) -> None:
        """Report the states the checkpoint manager stored since the last call."""
        done = self.checkpoints.done
        while done:
            saved = done.popleft()
            if saved.error is None:
                self._to_tmanager(
                    ckptmgr_pb2.InstanceStateStored(
                        checkpoint_id=saved.checkpoint_id, task_id=saved.task_id
                    )
                )

    def on_consistent(self, message: ckptmgr_pb2.StatefulConsistentCheckpointSaved) -> None:
        saved = message.consistent_checkpoint.checkpoint_id
        oldest = message.oldest_checkpoint_preserved or saved
        self.checkpoints.dispose(self.local_tasks, oldest)

    # --- rollback ----------------------------------------------------------------------------
    def on_restore(self, message: ckptmgr_pb2.RestoreTopologyStateRequest) -> None:
        txid, checkpoint = message.restore_txid, message.checkpoint_id
        peers = set(self._peers())
        self._restore = _Restore(
            txid,
            checkpoint,
            set(self.local_tasks),
            {p for p in peers if self._barriers.get(p) != txid},
        )
        self.gates.clear()
        self.dropped += self._drop_queued()
        barrier = encode(ckptmgr_pb2.RestoreBarrier(stmgr=self.stmgr_id, restore_txid=txid))
        for peer in peers:
            box = self._peer_box_by_id(peer)
            if box is not None:
                self._send_peer(box, barrier)
        log.info(
            "%s: rolling back to checkpoint %s (restore %d)",
            self.stmgr_id,
            checkpoint or "(none: empty state)",
            txid,
        )
        for task in self.local_tasks:
            state = b""
            if checkpoint:
                try:
                    loaded = self.checkpoints.load(checkpoint, task)
                except Exception as exc:  # the store failed: this restore cannot complete
                    log.error(
                        "%s: cannot load task %d's state of checkpoint %s: %s",
                        self.stmgr_id,
                        task,
                        checkpoint,
                        exc,
                    )
                    self._restore.failed = True
                    return
                if loaded is None:  # never starts empty instead: that would lose its state
                    log.error(
                        "%s: the store holds no state of task %d for consistent checkpoint %s "
                        "(was it written to another host's disk? heron.statefulstorage.*); "
                        "this rollback cannot complete",
                        self.stmgr_id,
                        task,
                        checkpoint,
                    )
                    self._restore.failed = True
                    return
                state = loaded
            self._to_instance(
                task,
                ckptmgr_pb2.RestoreInstanceStateRequest(
                    checkpoint_id=checkpoint, restore_txid=txid, state=state
                ),
            )
        self._maybe_restored()

    def on_barrier(self, message: ckptmgr_pb2.RestoreBarrier) -> None:
        self._barriers[message.stmgr] = message.restore_txid
        restore = self._restore
        if restore is not None and message.restore_txid == restore.txid:
            restore.peers.discard(message.stmgr)
            self._maybe_restored()

    def on_instance_restored(
        self, message: ckptmgr_pb2.RestoreInstanceStateResponse, task: int
    ) -> None:
        restore = self._restore
        if restore is not None and message.restore_txid == restore.txid:
            restore.instances.discard(task)
            self._maybe_restored()

    def _maybe_restored(self) -> None:
        restore = self._restore
        if restore is None or restore.instances or restore.peers or restore.failed:
            return
        self._restore = None
        log.info("%s: restore %d done", self.stmgr_id, restore.txid)
        self._to_tmanager(
            ckptmgr_pb2.RestoreTopologyStateResponse(
                status=common_pb2.Status(status=common_pb2.OK),
                checkpoint_id=restore.checkpoint,
                restore_txid=restore.txid,
                stmgr=self.stmgr_id,
            )
        )

    def on_start(self, message: ckptmgr_pb2.StartStmgrStatefulProcessing) -> None:
        start = ckptmgr_pb2.StartInstanceStatefulProcessing(checkpoint_id=message.checkpoint_id)
        for task in self.local_tasks:
            self._to_instance(task, start)

    def on_instance_restarted(self, task: int) -> None:
        """A local instance registered again: the topology must roll back."""
        self._to_tmanager(
            ckptmgr_pb2.ResetTopologyState(
                stmgr=self.stmgr_id, dead_task=task, reason=f"task {task} restarted"
            )
        )
