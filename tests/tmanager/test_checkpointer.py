"""The topology manager's Checkpointer, on an injected clock: when it rolls back, when it
checkpoints, when a checkpoint is consistent, and the order of its checkpoint ids."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from google.protobuf.message import Message

from heron_core.proto import ckptmgr_pb2, common_pb2
from heron_core.tmanager._checkpointer import (
    CHECKPOINT_TIMEOUT_S,
    RESTORE_TIMEOUT_S,
    Checkpointer,
    Phase,
)

TASKS = (1, 2, 3)
STMGRS = ("stmgr-1", "stmgr-2")


def consistent(*ids: str) -> list[ckptmgr_pb2.StatefulConsistentCheckpoint]:
    return [
        ckptmgr_pb2.StatefulConsistentCheckpoint(checkpoint_id=i, packing_plan_id="p1") for i in ids
    ]


@dataclass
class Harness:
    """A Checkpointer with a settable clock and the messages it sent and stored."""

    stored_ids: Sequence[str] = ()
    keep: int = 2
    wall: float = 1_700_000_000.0
    now: float = 100.0
    sent: list[Message] = field(default_factory=list)
    stored: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.c = Checkpointer(
            "wc",
            1.0,
            TASKS,
            "p1",
            consistent(*self.stored_ids),
            self.keep,
            self.sent.append,
            lambda msg: self.stored.append([c.checkpoint_id for c in msg.consistent_checkpoints]),
            clock=lambda: self.now,
            wall_clock=lambda: self.wall,
        )

    def last(self, kind: type[Message]) -> Message:
        found = [m for m in self.sent if isinstance(m, kind)]
        assert found, f"no {kind.__name__} sent: {self.sent}"
        return found[-1]

    def kinds(self) -> list[str]:
        return [type(m).__name__ for m in self.sent]

    def answer(
        self, stmgrs: Iterable[str] = STMGRS, txid: int | None = None, ok: bool = True
    ) -> None:
        request = self.last(ckptmgr_pb2.RestoreTopologyStateRequest)
        assert isinstance(request, ckptmgr_pb2.RestoreTopologyStateRequest)
        for stmgr in stmgrs:
            self.c.on_restored(
                ckptmgr_pb2.RestoreTopologyStateResponse(
                    status=common_pb2.Status(status=common_pb2.OK if ok else common_pb2.NOTOK),
                    checkpoint_id=request.checkpoint_id,
                    restore_txid=request.restore_txid if txid is None else txid,
                    stmgr=stmgr,
                )
            )

    def running(self) -> Harness:
        self.c.on_registered(STMGRS)
        self.answer()
        assert self.c.phase is Phase.RUNNING
        return self

    def checkpoint(self) -> str:
        """Advance to the next checkpoint's start; its id."""
        deadline = self.c.next_deadline()
        assert deadline is not None
        self.now = deadline
        self.c.tick()
        start = self.last(ckptmgr_pb2.StartStatefulCheckpoint)
        assert isinstance(start, ckptmgr_pb2.StartStatefulCheckpoint)
        return start.checkpoint_id

    def completed(self) -> str:
        """Start the next checkpoint and report every task's state stored; its id."""
        checkpoint_id = self.checkpoint()
        self.report(checkpoint_id)
        return checkpoint_id

    def report(self, checkpoint_id: str, tasks: Iterable[int] = TASKS) -> None:
        for task in tasks:
            self.c.on_stored(
                ckptmgr_pb2.InstanceStateStored(checkpoint_id=checkpoint_id, task_id=task)
            )


def test_nothing_happens_before_every_stream_manager_registered() -> None:
    h = Harness(stored_ids=["1600000000000-000001"])
    for now in (100.0, 101.0, 100.0 + 2 * RESTORE_TIMEOUT_S):
        h.now = now
        h.c.tick()
    h.c.on_reset(ckptmgr_pb2.ResetTopologyState(stmgr="stmgr-1", dead_task=1, reason="x"))
    h.c.on_restored(ckptmgr_pb2.RestoreTopologyStateResponse(stmgr="stmgr-1", restore_txid=0))
    h.report("1600000000000-000001")
    h.report("")
    assert h.sent == [] and h.stored == []
    assert h.c.phase is Phase.WAITING and h.c.next_deadline() is None


def test_first_registration_rolls_back_to_the_newest_stored() -> None:
    h = Harness(stored_ids=["1600000000000-000002", "1600000000000-000001"])
    h.c.on_registered(STMGRS)
    assert h.kinds() == ["RestoreTopologyStateRequest"]
    request = h.last(ckptmgr_pb2.RestoreTopologyStateRequest)
    assert request.checkpoint_id == "1600000000000-000002"  # type: ignore[attr-defined]
    assert h.c.phase is Phase.RESTORING and h.c.next_deadline() == 100.0 + RESTORE_TIMEOUT_S


def test_first_registration_without_stored_checkpoints_starts_empty() -> None:
    h = Harness()
    h.c.on_registered(STMGRS)
    request = h.last(ckptmgr_pb2.RestoreTopologyStateRequest)
    assert request.checkpoint_id == ""  # type: ignore[attr-defined]


def test_start_only_once_every_stream_manager_answered_the_current_restore() -> None:
    h = Harness(stored_ids=["1600000000000-000002"])
    h.c.on_registered(STMGRS)
    first = h.last(ckptmgr_pb2.RestoreTopologyStateRequest).restore_txid  # type: ignore[attr-defined]
    h.c.on_registered(STMGRS)  # one registered again before the first restore finished
    txid = h.last(ckptmgr_pb2.RestoreTopologyStateRequest).restore_txid  # type: ignore[attr-defined]
    assert txid > first
    h.answer(STMGRS, txid=first)  # answers to the superseded restore
    h.answer(["stmgr-1"])
    h.answer(["stmgr-2"], ok=False)  # failed: still waiting (the timeout restarts it)
    h.answer(["stmgr-3"])  # not one of them
    assert h.c.phase is Phase.RESTORING
    assert "StartStmgrStatefulProcessing" not in h.kinds()
    h.answer(["stmgr-2"])
    start = h.last(ckptmgr_pb2.StartStmgrStatefulProcessing)
    assert (start.checkpoint_id, start.restore_txid) == ("1600000000000-000002", txid)  # type: ignore[attr-defined]
    assert h.c.phase is Phase.RUNNING and h.kinds().count("StartStmgrStatefulProcessing") == 1
    h.answer()  # a duplicate answer once running changes nothing
    assert h.kinds().count("StartStmgrStatefulProcessing") == 1


def test_checkpoints_every_interval_only_while_running() -> None:
    h = Harness().running()
    assert h.c.next_deadline() == 101.0
    h.now = 100.9
    h.c.tick()
    assert "StartStatefulCheckpoint" not in h.kinds()
    first = h.completed()
    h.now = 101.5
    h.c.tick()
    assert h.kinds().count("StartStatefulCheckpoint") == 1
    second = h.checkpoint()
    assert h.now == 102.0 and first < second and h.c.checkpoints_started == 2
    h.c.on_reset(ckptmgr_pb2.ResetTopologyState(stmgr="stmgr-2", dead_task=2, reason="x"))
    for now in (103.0, 104.0, 100.0 + RESTORE_TIMEOUT_S):
        h.now = now
        h.c.tick()
    assert h.kinds().count("StartStatefulCheckpoint") == 2, "checkpoint started while restoring"


def test_a_checkpoint_in_progress_holds_the_next_back_until_it_times_out() -> None:
    """Under load a checkpoint can take longer than the interval: the next one waits for it
    (else no checkpoint would ever complete), up to CHECKPOINT_TIMEOUT_S."""
    h = Harness().running()
    slow = h.checkpoint()
    h.report(slow, [1, 2])
    for _ in range(int(CHECKPOINT_TIMEOUT_S) - 2):
        h.now += 1.0
        h.c.tick()
    assert h.kinds().count("StartStatefulCheckpoint") == 1
    h.report(slow, [3])  # late, but consistent
    assert h.c.newest == slow
    stuck = h.checkpoint()
    h.report(stuck, [1])
    h.now += CHECKPOINT_TIMEOUT_S
    h.c.tick()
    given_up = h.last(ckptmgr_pb2.StartStatefulCheckpoint)
    assert isinstance(given_up, ckptmgr_pb2.StartStatefulCheckpoint)
    assert given_up.checkpoint_id > stuck and h.c.checkpoints_started == 3
    h.report(stuck, [2, 3])  # reports of the given-up one count no more
    assert h.c.newest == slow


def test_consistent_once_every_task_reported() -> None:
    h = Harness().running()
    older = h.checkpoint()
    h.now += CHECKPOINT_TIMEOUT_S  # given up: a new one starts
    h.c.tick()
    start = h.last(ckptmgr_pb2.StartStatefulCheckpoint)
    assert isinstance(start, ckptmgr_pb2.StartStatefulCheckpoint)
    current = start.checkpoint_id
    assert current > older
    h.report(current, [1, 2, 2, 99])  # a duplicate and a task the topology does not have
    h.report(older, [3])  # only the checkpoint in progress counts
    h.report("", [3])
    assert h.stored == [] and "StatefulConsistentCheckpointSaved" not in h.kinds()
    h.report(current, [3])
    assert h.stored == [[current]] and h.c.newest == current and h.c.checkpoints_completed == 1
    saved = h.last(ckptmgr_pb2.StatefulConsistentCheckpointSaved)
    assert saved.consistent_checkpoint.checkpoint_id == current  # type: ignore[attr-defined]
    assert saved.consistent_checkpoint.packing_plan_id == "p1"  # type: ignore[attr-defined]
    assert saved.oldest_checkpoint_preserved == current  # type: ignore[attr-defined]
    h.report(current, TASKS)  # late duplicates of a completed checkpoint
    assert h.stored == [[current]]


def test_reports_with_no_checkpoint_in_progress_are_ignored() -> None:
    """An empty id is no checkpoint: reports of it never make one consistent."""
    h = Harness().running()
    h.report("")
    assert h.stored == [] and h.c.newest == ""


def test_stored_list_is_newest_first_trimmed_to_keep() -> None:
    h = Harness(stored_ids=["1600000000000-000003", "1600000000000-000002", "1600000000000-000001"])
    assert [c.checkpoint_id for c in h.c.consistent] == [
        "1600000000000-000003",
        "1600000000000-000002",
    ]
    h.running()
    ids = []
    for _ in range(3):
        ids.append(h.checkpoint())
        h.report(ids[-1])
    assert h.stored == [[ids[0], "1600000000000-000003"], [ids[1], ids[0]], [ids[2], ids[1]]]
    preserved = [
        m.oldest_checkpoint_preserved
        for m in h.sent
        if isinstance(m, ckptmgr_pb2.StatefulConsistentCheckpointSaved)
    ]
    assert preserved == ["1600000000000-000003", ids[0], ids[1]]


def test_reset_while_running_rolls_back_and_drops_the_partial_checkpoint() -> None:
    h = Harness().running()
    done = h.checkpoint()
    h.report(done)
    partial = h.checkpoint()
    h.report(partial, [1, 2])
    h.c.on_reset(
        ckptmgr_pb2.ResetTopologyState(stmgr="stmgr-1", dead_task=2, reason="task 2 restarted")
    )
    request = h.last(ckptmgr_pb2.RestoreTopologyStateRequest)
    assert request.checkpoint_id == done and h.c.phase is Phase.RESTORING  # type: ignore[attr-defined]
    h.report(partial, [3])  # the last report of the dropped checkpoint
    assert h.stored == [[done]]
    h.answer()
    after = h.checkpoint()
    assert after > partial
    h.report(after)
    assert h.stored == [[done], [after, done]]


def test_registration_while_running_rolls_back() -> None:
    h = Harness().running()
    partial = h.checkpoint()
    h.c.on_registered(STMGRS)  # a stream manager restarted and registered again
    assert h.c.phase is Phase.RESTORING and h.c.restores == 2
    h.report(partial)
    assert h.stored == []


def test_a_restore_not_answered_in_time_starts_again_with_a_new_txid() -> None:
    h = Harness()
    h.c.on_registered(STMGRS)
    first = h.last(ckptmgr_pb2.RestoreTopologyStateRequest).restore_txid  # type: ignore[attr-defined]
    h.answer(["stmgr-1"])
    h.now = 100.0 + RESTORE_TIMEOUT_S - 0.001
    h.c.tick()
    assert h.kinds().count("RestoreTopologyStateRequest") == 1
    h.now = 100.0 + RESTORE_TIMEOUT_S
    h.c.tick()
    assert h.kinds().count("RestoreTopologyStateRequest") == 2
    second = h.last(ckptmgr_pb2.RestoreTopologyStateRequest).restore_txid  # type: ignore[attr-defined]
    assert second > first and h.c.next_deadline() == h.now + RESTORE_TIMEOUT_S
    h.answer(["stmgr-2"])  # stmgr-1's answer was to the first restore: it must answer again
    assert h.c.phase is Phase.RESTORING
    h.answer(["stmgr-1"], txid=first)
    assert h.c.phase is Phase.RESTORING
    h.answer(["stmgr-1"])
    assert h.c.phase is Phase.RUNNING


def test_checkpoint_ids_sort_in_creation_order_across_checkpointers() -> None:
    """Within one Checkpointer, past 10 and past the six-digit sequence, and for a second one
    made a millisecond later (the topology manager restarted)."""
    h = Harness(wall=1_700_000_000.0).running()
    ids = [h.completed() for _ in range(12)]
    assert ids[0] == "1700000000000-000001" and ids[11] == "1700000000000-000012"
    h.wall += 86_400.0 * 12  # a long run, without starting a million checkpoints:
    h.c._seq = 999_998  # (white box) the sequence as it is then
    ids += [h.completed() for _ in range(3)]
    assert ids[-2:] == ["1701036800000-000001", "1701036800000-000002"]
    later = Harness(wall=h.wall + 0.001).running()
    ids += [later.completed() for _ in range(3)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids), ids


def test_checkpoint_ids_sort_after_the_stored_ones_when_the_clock_is_behind() -> None:
    """A topology manager restarted on a host whose clock is behind the one that made the
    stored checkpoints: its ids still sort after them (else the stores would delete its
    checkpoints as older than the oldest kept)."""
    h = Harness(stored_ids=["1700000005000-000042"], wall=1_700_000_000.0).running()
    new = h.checkpoint()
    h.report(new)
    assert new > "1700000005000-000042"
    saved = h.last(ckptmgr_pb2.StatefulConsistentCheckpointSaved)
    assert saved.oldest_checkpoint_preserved < new  # type: ignore[attr-defined]
