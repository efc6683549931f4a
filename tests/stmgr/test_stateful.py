"""The stream manager's side of effectively-once processing (`StatefulStMgr`, `Gate`,
`Topology`), driven with fakes: no sockets, no processes.

The plan has two stream managers: spout "word" (tasks 1 on stmgr-1, 2 on stmgr-2) feeds bolt
"relay" (3 on stmgr-1, 4 on stmgr-2), which feeds bolt "count" (5 on stmgr-1, 6 on stmgr-2).
The stream manager under test is stmgr-1; `Harness.data` routes a batch the way its routing
loop does (through the gate of a local task that aligns a checkpoint, else on).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.message import Message
from hypothesis import event, given, settings
from hypothesis import strategies as st

from heron_core.ckptmgr import CheckpointManager, Saved
from heron_core.ckptmgr.localfs import LocalFileSystemStore
from heron_core.network import DATA, data_frames, decode
from heron_core.proto import ckptmgr_pb2, common_pb2, physical_plan_pb2, topology_pb2, tuple_pb2
from heron_core.statemgr import Seal
from heron_core.stmgr._stateful import Gate, StatefulStMgr, Topology

C1, C2, C3 = "1700000000000-000001", "1700000000000-000002", "1700000000000-000003"
PLACEMENT = {1: "stmgr-1", 2: "stmgr-2", 3: "stmgr-1", 4: "stmgr-2", 5: "stmgr-1", 6: "stmgr-2"}
COMPONENTS = {1: "word", 2: "word", 3: "relay", 4: "relay", 5: "count", 6: "count"}


def plan(
    chain: Sequence[str] = ("word", "relay", "count"),
    components: dict[int, str] = COMPONENTS,
    placement: dict[int, str] = PLACEMENT,
) -> physical_plan_pb2.PhysicalPlan:
    """A pipeline of components, each subscribing to the one before by shuffle grouping."""

    def stream(component: str) -> topology_pb2.StreamId:
        return topology_pb2.StreamId(id="default", component_name=component)

    topology = topology_pb2.Topology(
        id="wc-1",
        name="wc",
        spouts=[
            topology_pb2.Spout(
                comp=topology_pb2.Component(name=chain[0]),
                outputs=[topology_pb2.OutputStream(stream=stream(chain[0]))],
            )
        ],
        bolts=[
            topology_pb2.Bolt(
                comp=topology_pb2.Component(name=bolt),
                inputs=[
                    topology_pb2.InputStream(stream=stream(before), gtype=topology_pb2.SHUFFLE)
                ],
                outputs=[topology_pb2.OutputStream(stream=stream(bolt))],
            )
            for before, bolt in itertools.pairwise(chain)
        ],
    )
    return physical_plan_pb2.PhysicalPlan(
        topology=topology,
        instances=[
            physical_plan_pb2.Instance(
                stmgr_id=placement[task],
                info=physical_plan_pb2.InstanceInfo(task_id=task, component_name=component),
            )
            for task, component in components.items()
        ],
    )


class FakeCheckpoints:
    """A synchronous checkpoint manager over a dict (``fail`` tasks' saves fail)."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, int], bytes] = {}
        self.done: deque[Saved] = deque()
        self.calls: list[tuple[Any, ...]] = []
        self.fail: set[int] = set()

    def save(self, checkpoint_id: str, task_id: int, data: bytes) -> None:
        self.calls.append(("save", checkpoint_id, task_id, data))
        if task_id in self.fail:
            self.done.append(Saved(checkpoint_id, task_id, "OSError: disk full"))
        else:
            self.states[checkpoint_id, task_id] = data
            self.done.append(Saved(checkpoint_id, task_id))

    def load(self, checkpoint_id: str, task_id: int) -> bytes | None:
        self.calls.append(("load", checkpoint_id, task_id))
        if task_id in self.fail:
            raise OSError(5, "Input/output error")
        return self.states.get((checkpoint_id, task_id))

    def dispose(self, task_ids: Iterable[int], oldest_kept: str) -> None:
        self.calls.append(("dispose", sorted(task_ids), oldest_kept))


class FakeBox:
    """A peer's outbox: what was sent to it, in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.frames: list[Sequence[bytes]] = []

    def messages(self) -> list[Any]:
        """Data batches as ("data", label), control messages decoded."""
        return [
            ("data", tuple_pb2.TupleBatch.FromString(f[2]).values.decode())
            if f[0] == DATA
            else decode(f)
            for f in self.frames
        ]


def batch(source: int, dest: int, label: str, padding: int = 0) -> list[bytes]:
    """The frames of a tuple batch from ``source`` to ``dest``, told apart by ``label``."""
    message = tuple_pb2.TupleBatch(
        src_task=source, dest_task=dest, values=label.encode() + b" " * padding
    )
    return data_frames(dest, message.SerializeToString())


class Harness:
    """stmgr-1 with recording fakes: ``log`` holds, in order, what reached local instances
    (("initiate", task, id), ("data", task, label), or the message) and ``tmanager`` what went
    to the topology manager."""

    def __init__(
        self,
        checkpoints: Any = None,
        limit_bytes: int = 1 << 20,
        pplan: physical_plan_pb2.PhysicalPlan | None = None,
        stmgr: str = "stmgr-1",
        peers: Sequence[str] = ("stmgr-2",),
    ) -> None:
        pplan = plan() if pplan is None else pplan
        local = [i.info.task_id for i in pplan.instances if i.stmgr_id == stmgr]
        spouts = {c.comp.name for c in pplan.topology.spouts}
        self.checkpoints = FakeCheckpoints() if checkpoints is None else checkpoints
        self.log: list[Any] = []
        self.tmanager: list[Message] = []
        self.boxes = {peer: FakeBox(peer) for peer in peers}
        self.s = StatefulStMgr(
            stmgr,
            local,
            {
                i.info.task_id
                for i in pplan.instances
                if i.stmgr_id == stmgr and i.info.component_name in spouts
            },
            self.checkpoints,
            self._to_instance,
            self.tmanager.append,
            self._deliver,
            limit_bytes,
            self._drop_queued,
        )
        stmgr_of = {i.info.task_id: i.stmgr_id for i in pplan.instances}
        self.s.connect(
            lambda task: self.boxes.get(stmgr_of.get(task, "")),
            lambda: list(self.boxes),
            lambda box, frames: box.frames.append(frames),
            self.boxes.get,
        )
        self.s.apply(pplan)

    def _to_instance(self, task: int, message: Any) -> None:
        if isinstance(message, ckptmgr_pb2.InitiateStatefulCheckpoint):
            self.log.append(("initiate", task, message.checkpoint_id))
        else:
            self.log.append((task, message))

    def _deliver(self, task: int, frames: Sequence[bytes]) -> None:
        self.log.append(
            ("data", task, tuple_pb2.TupleBatch.FromString(frames[2]).values.decode().rstrip())
        )

    def _drop_queued(self) -> int:
        dropped = 0
        for box in self.boxes.values():
            kept = [f for f in box.frames if f[0] != DATA]
            dropped += len(box.frames) - len(kept)
            box.frames = kept
        return dropped + 1  # and one batch queued for a local instance

    def data(self, source: int, dest: int, label: str, padding: int = 0) -> None:
        """Route a batch as the stream manager's loop does."""
        frames = batch(source, dest, label, padding)
        if PLACEMENT.get(dest) == "stmgr-2":
            self.boxes["stmgr-2"].frames.append(frames)
        elif not (dest in self.s.gates and self.s.gate(dest, frames)):
            self._deliver(dest, frames)

    def marker(self, source: int, dest: int, checkpoint: str) -> None:
        """A marker from a peer's task."""
        self.s.on_peer_marker(
            ckptmgr_pb2.DownstreamStatefulCheckpoint(
                origin_task_id=source, destination_task_id=dest, checkpoint_id=checkpoint
            )
        )

    def stored(self, task: int, checkpoint: str, state: bytes = b"s") -> None:
        """Local ``task`` sends its state of ``checkpoint``."""
        self.s.on_instance_state(
            ckptmgr_pb2.StoreInstanceStateCheckpoint(checkpoint_id=checkpoint, state=state), task
        )

    def restore(self, checkpoint: str, txid: int, complete: bool = True) -> None:
        """Roll back to ``checkpoint``; ``complete``: as a consistent checkpoint is, it holds
        a state of every local task (empty where the test stored none)."""
        if checkpoint and complete and isinstance(self.checkpoints, FakeCheckpoints):
            for task in (1, 3, 5):
                self.checkpoints.states.setdefault((checkpoint, task), b"")
        self.s.on_restore(
            ckptmgr_pb2.RestoreTopologyStateRequest(checkpoint_id=checkpoint, restore_txid=txid)
        )

    def restored(self, task: int, txid: int) -> None:
        self.s.on_instance_restored(
            ckptmgr_pb2.RestoreInstanceStateResponse(restore_txid=txid, task_id=task), task
        )

    def barrier(self, stmgr: str, txid: int) -> None:
        self.s.on_barrier(ckptmgr_pb2.RestoreBarrier(stmgr=stmgr, restore_txid=txid))

    def responses(self) -> list[ckptmgr_pb2.RestoreTopologyStateResponse]:
        return [m for m in self.tmanager if isinstance(m, ckptmgr_pb2.RestoreTopologyStateResponse)]


# --- the task graph and the gate ------------------------------------------------------------------
def test_topology_of_a_plan() -> None:
    graph = Topology.of(plan())
    assert graph.downstream == {1: [3, 4], 2: [3, 4], 3: [5, 6], 4: [5, 6], 5: [], 6: []}
    assert graph.upstream == {
        3: frozenset({1, 2}),
        4: frozenset({1, 2}),
        5: frozenset({3, 4}),
        6: frozenset({3, 4}),
    }
    assert graph.stmgr_of == PLACEMENT


def test_gate_counts_each_input_once() -> None:
    gate = Gate(frozenset({1, 2}), 100)
    assert not gate.marker(1, C1) and not gate.marker(1, C1)
    assert gate.hold(1, ("data", [b"", b"", b"x" * 60]), 60)
    assert not gate.hold(1, ("data", [b"", b"", b"x" * 41]), 41)  # 101 > 100
    assert gate.marker(2, C1)
    checkpoint, held = gate.take()
    assert checkpoint == C1 and list(held) == [1, 2] and not gate.aligning and gate.held_bytes == 0


# --- checkpoints ----------------------------------------------------------------------------------
def test_start_checkpoint_goes_to_the_local_spouts_only() -> None:
    h = Harness()
    h.s.on_start_checkpoint(ckptmgr_pb2.StartStatefulCheckpoint(checkpoint_id=C1))
    assert h.log == [("initiate", 1, C1)]


def test_a_stored_state_is_saved_and_its_markers_go_to_every_downstream_task() -> None:
    h = Harness()
    h.data(1, 4, "before")  # to the remote relay: the marker must come after it
    h.stored(1, C1, b"spout state")
    assert h.checkpoints.calls == [("save", C1, 1, b"spout state")]
    assert h.boxes["stmgr-2"].messages() == [
        ("data", "before"),
        ckptmgr_pb2.DownstreamStatefulCheckpoint(
            origin_task_id=1, destination_task_id=4, checkpoint_id=C1
        ),
    ]
    assert h.s.gates[3].holds(1) and not h.s.gates[3].holds(2)  # the local relay's gate
    assert h.log == []  # relay 3 waits for spout 2's marker
    h.marker(2, 3, C1)
    assert h.log == [("initiate", 3, C1)] and not h.s.gates
    h.stored(3, C1, b"relay state")  # relay 3 feeds count 5 (local, one of two inputs) and 6
    assert h.s.gates[5].holds(3)
    assert h.boxes["stmgr-2"].messages()[-1] == ckptmgr_pb2.DownstreamStatefulCheckpoint(
        origin_task_id=3, destination_task_id=6, checkpoint_id=C1
    )
    h.stored(5, C1)  # a sink: saved, no markers
    assert [c[2] for c in h.checkpoints.calls] == [1, 3, 5] and len(h.boxes["stmgr-2"].frames) == 3


def test_gate_holds_back_exactly_the_inputs_that_delivered_the_marker() -> None:
    h = Harness()
    h.stored(1, C1)
    h.data(1, 3, "a1")
    h.data(2, 3, "b1")  # spout 2 has not delivered its marker: on at once
    h.data(1, 3, "a2")
    h.data(1, 5, "other task")  # no gate there
    assert h.log == [("data", 3, "b1"), ("data", 5, "other task")]
    h.marker(2, 3, C1)
    h.data(2, 3, "b2")
    assert h.log[2:] == [
        ("initiate", 3, C1),
        ("data", 3, "a1"),
        ("data", 3, "a2"),
        ("data", 3, "b2"),
    ]


def test_a_newer_marker_behind_held_back_data_aligns_again_on_replay() -> None:
    h = Harness()
    h.stored(1, C1)
    h.data(1, 3, "a1")
    h.stored(1, C2)  # spout 1 is already at the next checkpoint: its marker waits its turn
    h.data(1, 3, "a2")
    h.marker(2, 3, C1)
    assert h.log == [("initiate", 3, C1), ("data", 3, "a1")]
    assert h.s.gates[3].checkpoint == C2 and h.s.gates[3].holds(1)
    h.data(2, 3, "b1")
    h.marker(2, 3, C2)
    assert h.log[2:] == [("data", 3, "b1"), ("initiate", 3, C2), ("data", 3, "a2")]


def test_a_newer_checkpoint_while_an_older_waits_gives_the_older_up() -> None:
    h = Harness()
    h.stored(1, C1)
    h.data(1, 3, "a1")
    h.marker(2, 3, C2)  # spout 2 never took checkpoint C1 (given up upstream)
    assert h.log == [("data", 3, "a1")] and h.s.gates[3].checkpoint == C2
    h.data(2, 3, "b1")
    h.stored(1, C2)
    assert h.log[1:] == [("initiate", 3, C2), ("data", 3, "b1")]
    assert ("initiate", 3, C1) not in h.log


def test_an_older_marker_after_a_newer_started_is_ignored() -> None:
    h = Harness()
    h.stored(1, C2)
    h.marker(2, 3, C1)
    h.data(2, 3, "b1")
    assert h.log == [("data", 3, "b1")] and h.s.gates[3].checkpoint == C2
    h.marker(2, 3, C2)
    assert h.log[1:] == [("initiate", 3, C2)]


def test_the_buffer_limit_gives_the_checkpoint_up_and_delivers_what_was_held() -> None:
    h = Harness(limit_bytes=100)
    h.stored(1, C1)
    h.data(1, 3, "a1", padding=40)
    h.data(1, 3, "a2", padding=40)
    assert h.log == [] and h.s.given_up == 0
    h.data(1, 3, "a3", padding=40)  # past 100 held-back bytes
    assert h.log == [("data", 3, "a1"), ("data", 3, "a2"), ("data", 3, "a3")]
    assert h.s.given_up == 1 and 3 not in h.s.gates


def test_the_buffer_limit_keeps_a_newer_marker_that_was_held() -> None:
    """What was held back past the limit is replayed as it came: a newer checkpoint's marker
    among it still aligns that checkpoint."""
    h = Harness(limit_bytes=100)
    h.stored(1, C1)
    h.data(1, 3, "a1", padding=60)
    h.stored(1, C2)
    h.data(1, 3, "a2", padding=60)  # past the limit: C1 is given up
    assert h.log == [("data", 3, "a1")] and h.s.given_up == 1
    assert h.s.gates[3].checkpoint == C2 and h.s.gates[3].holds(1)
    h.marker(2, 3, C2)
    assert h.log[1:] == [("initiate", 3, C2), ("data", 3, "a2")]


def test_on_saved_reports_only_stored_states() -> None:
    h = Harness()
    h.checkpoints.fail = {3}
    h.stored(1, C1)
    h.marker(2, 3, C1)
    h.stored(3, C1)
    h.s.on_saved()
    assert h.tmanager == [ckptmgr_pb2.InstanceStateStored(checkpoint_id=C1, task_id=1)]
    assert not h.checkpoints.done
    h.s.on_saved()
    assert len(h.tmanager) == 1


def test_on_consistent_disposes_the_older_checkpoints_of_the_local_tasks() -> None:
    h = Harness()
    saved = ckptmgr_pb2.StatefulConsistentCheckpoint(checkpoint_id=C3)
    h.s.on_consistent(
        ckptmgr_pb2.StatefulConsistentCheckpointSaved(
            consistent_checkpoint=saved, oldest_checkpoint_preserved=C2
        )
    )
    h.s.on_consistent(ckptmgr_pb2.StatefulConsistentCheckpointSaved(consistent_checkpoint=saved))
    assert h.checkpoints.calls == [("dispose", [1, 3, 5], C2), ("dispose", [1, 3, 5], C3)]


def test_a_marker_for_a_task_that_is_not_local_is_dropped() -> None:
    h = Harness()
    h.marker(1, 4, C1)
    assert not h.s.gates and h.log == []


def test_a_marker_from_a_task_that_is_not_an_input_is_ignored() -> None:
    """Relay 3's inputs are spouts 1 and 2: a marker from elsewhere (a peer on another
    physical plan) neither counts towards the alignment nor holds anything back."""
    h = Harness()
    h.marker(4, 3, C1)
    h.data(4, 3, "x")
    h.marker(2, 3, C1)
    assert h.log == [("data", 3, "x")] and h.s.gates[3].holds(2)
    h.stored(1, C1)
    assert h.log[1:] == [("initiate", 3, C1)]


# --- rollback -------------------------------------------------------------------------------------
def test_rollback_clears_drops_sends_barriers_and_restores_every_local_task() -> None:
    h = Harness()
    for task, state in ((1, b"spout"), (3, b"relay"), (5, b"")):  # count 5: an empty state
        h.checkpoints.states[C1, task] = state
    h.stored(1, C2)  # a checkpoint under way: relay 3 aligns it
    h.data(1, 3, "held")
    h.data(1, 4, "queued for the peer")
    h.restore(C1, 7)
    assert not h.s.gates and h.s.dropped == 2  # the peer's queued batch and the local one
    assert h.boxes["stmgr-2"].messages()[-1] == ckptmgr_pb2.RestoreBarrier(
        stmgr="stmgr-1", restore_txid=7
    )
    assert ("data", "queued for the peer") not in h.boxes["stmgr-2"].messages()
    assert h.log == [
        (
            task,
            ckptmgr_pb2.RestoreInstanceStateRequest(checkpoint_id=C1, restore_txid=7, state=state),
        )
        for task, state in ((1, b"spout"), (3, b"relay"), (5, b""))
    ]
    assert h.responses() == []


def test_rollback_to_no_checkpoint_restores_empty_state_without_loading() -> None:
    h = Harness()
    h.restore("", 7)
    assert [m for _, m in h.log] == [
        ckptmgr_pb2.RestoreInstanceStateRequest(checkpoint_id="", restore_txid=7)
    ] * 3
    assert h.checkpoints.calls == []


def test_a_rollback_to_a_checkpoint_missing_a_task_state_never_completes() -> None:
    """A consistent checkpoint always holds every task's state; if the store lost one (or it
    was written where this host cannot read it), the task must not start empty: the rollback
    stops there, unanswered (the topology manager tries again after its timeout)."""
    h = Harness()
    h.checkpoints.states[C1, 1] = b"spout"  # relay 3 and count 5 are missing
    h.restore(C1, 7, complete=False)
    assert [task for task, _ in h.log] == [1]
    for task in (1, 3, 5):
        h.restored(task, 7)
    h.barrier("stmgr-2", 7)
    assert h.responses() == []


def test_during_rollback_old_data_is_refused_until_each_answer_and_every_barrier() -> None:
    h = Harness()
    h.restore(C1, 7)
    assert not any(h.s.accepts_from_instance(t) for t in (1, 3, 5)) and not h.s.accepts_from_peers
    h.stored(1, C1)  # an old run's state, and markers from the old run: dropped
    h.marker(2, 3, C1)
    h.s.on_start_checkpoint(ckptmgr_pb2.StartStatefulCheckpoint(checkpoint_id=C2))
    assert h.checkpoints.calls == [("load", C1, t) for t in (1, 3, 5)] and not h.s.gates
    assert len(h.log) == 3  # the three restore requests, nothing else
    h.restored(3, 7)
    assert h.s.accepts_from_instance(3) and not h.s.accepts_from_instance(1)
    h.restored(1, 6)  # an answer to an older restore
    assert not h.s.accepts_from_instance(1)
    h.barrier("stmgr-2", 6)  # an older restore's barrier
    assert not h.s.accepts_from_peers
    h.restored(1, 7)
    h.barrier("stmgr-2", 7)
    assert h.s.accepts_from_peers and h.responses() == []  # task 5 has not answered
    h.restored(5, 7)
    assert h.responses() == [
        ckptmgr_pb2.RestoreTopologyStateResponse(
            status=common_pb2.Status(status=common_pb2.OK),
            checkpoint_id=C1,
            restore_txid=7,
            stmgr="stmgr-1",
        )
    ]
    assert all(h.s.accepts_from_instance(t) for t in (1, 3, 5))
    h.restored(5, 7)  # a late duplicate
    assert len(h.responses()) == 1


def test_barriers_that_arrive_before_the_restore_request_count() -> None:
    h = Harness()
    h.barrier("stmgr-2", 7)  # the peer got the tmanager's request first
    h.restore(C1, 7)
    assert h.s.accepts_from_peers
    for task in (1, 3, 5):
        h.restored(task, 7)
    assert [r.restore_txid for r in h.responses()] == [7]


def test_a_newer_restore_replaces_one_under_way() -> None:
    h = Harness()
    h.restore(C1, 7)
    h.restored(1, 7)
    h.barrier("stmgr-2", 7)
    h.restore(C2, 8)  # the tmanager timed out, or another failure
    for task in (3, 5):
        h.restored(task, 7)
    assert h.responses() == [] and not h.s.accepts_from_peers
    for task in (1, 3, 5):
        h.restored(task, 8)
    h.barrier("stmgr-2", 8)
    assert [(r.checkpoint_id, r.restore_txid) for r in h.responses()] == [(C2, 8)]


def test_a_store_that_cannot_load_leaves_the_restore_unanswered() -> None:
    """The topology manager's restore timeout then starts a new one."""
    h = Harness()
    h.checkpoints.fail = {3}
    h.restore(C1, 7)
    h.barrier("stmgr-2", 7)
    h.restored(1, 7)
    assert h.responses() == [] and not h.s.accepts_from_instance(5)


def test_start_and_restart() -> None:
    h = Harness()
    h.s.on_start(ckptmgr_pb2.StartStmgrStatefulProcessing(checkpoint_id=C1, restore_txid=7))
    assert h.log == [
        (t, ckptmgr_pb2.StartInstanceStatefulProcessing(checkpoint_id=C1)) for t in (1, 3, 5)
    ]
    h.s.on_instance_restarted(3)
    assert h.tmanager == [
        ckptmgr_pb2.ResetTopologyState(stmgr="stmgr-1", dead_task=3, reason="task 3 restarted")
    ]


SEAL = Seal(b"k" * 32, "wc")


def test_with_a_real_checkpoint_manager(tmp_path: Path) -> None:
    """Saves through the checkpoint manager thread, reported once stored; the states come
    back at a rollback."""
    store = LocalFileSystemStore({"heron.statefulstorage.localfs.root.path": str(tmp_path)}, "wc")
    checkpoints = CheckpointManager(store, SEAL)
    try:
        h = Harness(checkpoints=checkpoints)
        h.stored(1, C1, b"spout")
        h.marker(2, 3, C1)
        h.stored(3, C1, b"relay")
        h.stored(5, C1, b"")
    finally:
        checkpoints.close()
    h.s.on_saved()
    assert h.tmanager == [
        ckptmgr_pb2.InstanceStateStored(checkpoint_id=C1, task_id=t) for t in (1, 3, 5)
    ]
    h.checkpoints = checkpoints = CheckpointManager(
        LocalFileSystemStore({"heron.statefulstorage.localfs.root.path": str(tmp_path)}, "wc"),
        SEAL,
    )
    try:
        h.s.checkpoints = checkpoints
        h.log.clear()
        h.restore(C1, 9)
    finally:
        checkpoints.close()
    assert [m.state for _, m in h.log] == [b"spout", b"relay", b""]


# --- the property: what a gate delivers is the Chandy-Lamport cut --------------------------------
@st.composite
def runs(draw: st.DrawFn) -> tuple[list[list[Any]], list[int], bool, int]:
    """Each input's sequence (data labels, and the markers of checkpoints 1..k in order, some
    skipped when ``skips``: an input that gave a checkpoint up upstream; then every input's
    marker of checkpoint k + 1, so that nothing stays held), an interleaving of the inputs,
    whether any marker was skipped, and a buffer limit in bytes."""
    inputs = draw(st.integers(1, 4))
    checkpoints = draw(st.integers(1, 3))
    skips = draw(st.booleans())
    sequences: list[list[Any]] = []
    skipped = False
    for source in range(inputs):
        sequence: list[Any] = []
        for n in range(checkpoints + 1):
            sequence += [f"{source}:{n}:{i}" for i in range(draw(st.integers(0, 3)))]
            if n < checkpoints:
                if skips and draw(st.booleans()):
                    skipped = True
                else:
                    sequence.append(n + 1)
        sequences.append([*sequence, checkpoints + 1])  # a last checkpoint every input takes
    order = draw(st.permutations([s for s, seq in enumerate(sequences) for _ in seq]))
    limit = draw(st.sampled_from([1 << 20, 16, 30]))  # a batch is about 14 bytes
    return sequences, order, skipped, limit


@settings(max_examples=200, deadline=None)
@given(runs())
def test_a_gate_delivers_the_chandy_lamport_cut(
    run: tuple[list[list[Any]], list[int], bool, int],
) -> None:
    """Whatever the interleaving: every batch reaches the task once, in its input's order;
    checkpoints start in order, only those every input took; and at each Initiate, every batch
    an input sent before its marker is delivered before it, every batch after, after it. With
    no skipped marker and no limit reached, every checkpoint starts."""
    sequences, order, skipped, limit = run
    sources = list(range(101, 101 + len(sequences)))
    components = {**{t: "src" for t in sources}, 100: "sink"}
    placement = {**{t: "stmgr-2" for t in sources}, 100: "stmgr-1"}
    h = Harness(limit_bytes=limit, pplan=plan(("src", "sink"), components, placement))
    position = [0] * len(sequences)
    for index in order:
        item = sequences[index][position[index]]
        position[index] += 1
        if isinstance(item, int):
            h.marker(sources[index], 100, f"c{item}")
            continue
        frames = batch(sources[index], 100, item)
        if not (100 in h.s.gates and h.s.gate(100, frames)):
            h.log.append(("data", 100, item))
    event(f"skipped a marker: {skipped}, gave up: {h.s.given_up > 0}")
    labels = [entry[2] for entry in h.log if entry[0] == "data"]
    at = {entry[2]: n for n, entry in enumerate(h.log) if entry[0] == "data"}
    assert sorted(labels) == sorted(i for seq in sequences for i in seq if isinstance(i, str))
    for seq in sequences:
        mine = [i for i in seq if isinstance(i, str)]
        assert [label for label in labels if label in set(mine)] == mine, "an input's order"
    started = [(n, int(entry[2][1:])) for n, entry in enumerate(h.log) if entry[0] == "initiate"]
    assert [c for _, c in started] == sorted({c for _, c in started}), "checkpoints out of order"
    for n, checkpoint in started:
        for seq in sequences:
            assert checkpoint in seq, f"c{checkpoint} started though an input skipped it"
            cut = seq.index(checkpoint)
            assert all(at[i] < n for i in seq[:cut] if isinstance(i, str)), f"c{checkpoint}: late"
            assert all(at[i] > n for i in seq[cut:] if isinstance(i, str)), f"c{checkpoint}: early"
    if not skipped and h.s.given_up == 0:
        every = [i for i in sequences[0] if isinstance(i, int)]
        assert [c for _, c in started] == every, "a checkpoint every input took did not start"
