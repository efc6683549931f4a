"""The tmanager keeps serving while its state manager fails (a ZooKeeper server restarting, a
session expiring): plans still reach the stream managers, and the writes are made once the
state manager answers again. The daemon runs on a thread of this process with an injected
clock, so the retries happen exactly when the test moves the clock."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zmq

from heron_core.errors import StateManagerError
from heron_core.network import encode
from heron_core.proto import common_pb2, physical_plan_pb2, tmanager_pb2, topology_pb2
from heron_core.statemgr import LocalFileSystemStateManager
from heron_core.tmanager import TManager
from heron_core.tmanager._state_writes import PendingWrites


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_pending_writes_back_off_keep_the_newest_value_and_keep_their_order() -> None:
    clock, calls, down = Clock(), [], [True]

    def write(node: str, value: str) -> Callable[[], None]:
        def attempt() -> None:
            calls.append((node, value))
            if down[0]:
                raise StateManagerError("unreachable")

        return attempt

    writes = PendingWrites(clock, retry_interval=1.0, max_interval=3.0)
    assert writes.put("pplans/wc", write("pplans/wc", "v1")) is False
    assert writes.put("topologies/wc", write("topologies/wc", "v1")) is False  # waits its turn
    assert writes.put("pplans/wc", write("pplans/wc", "v2")) is False
    assert calls == [("pplans/wc", "v1")]
    assert writes.pending == ["topologies/wc", "pplans/wc"]
    dues = []
    for _ in range(3):  # each failed turn doubles the back-off, up to max_interval
        dues.append(writes.next_due)
        assert writes.flush() is False  # not due yet: nothing is tried
        clock.now = writes.next_due or 0.0
        assert writes.flush() is False
    assert dues == [1.0, 3.0, 6.0]
    down[0] = False
    clock.now = writes.next_due or 0.0
    calls.clear()
    assert writes.flush() is True
    assert calls == [("topologies/wc", "v1"), ("pplans/wc", "v2")]
    assert (writes.pending, writes.next_due) == ([], None)
    assert writes.put("pplans/wc", write("pplans/wc", "v3")) is True  # made at once again
    down[0] = True
    assert writes.put("pplans/wc", write("pplans/wc", "v4")) is False
    assert writes.next_due == clock.now + 1.0  # the back-off starts over


def test_the_plan_flows_while_its_write_fails_and_is_stored_once_the_store_answers(
    working_dir: Path,
    submitted: LocalFileSystemStateManager,
    stmgr: Callable[[int, str], Any],
    dealer: Callable[[int], zmq.Socket[bytes]],
    receive: Callable[..., Any],
    wait_until: Callable[[str, Callable[[], Any]], Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = threading.Event()
    down.set()
    store_plan = submitted.set_physical_plan

    def flaky_store_plan(name: str, plan: physical_plan_pb2.PhysicalPlan) -> None:
        if down.is_set():
            raise StateManagerError("zookeeper://127.0.0.1:1/pplans/wc: ZooKeeper restarting")
        store_plan(name, plan)

    monkeypatch.setattr(submitted, "set_physical_plan", flaky_store_plan)
    clock = Clock()
    tmanager = TManager(submitted, "wc", "wc-1", working_dir=working_dir, clock=clock)
    status: list[int] = []
    thread = threading.Thread(target=lambda: status.append(tmanager.run()), name="tmanager")
    thread.start()
    try:
        location = wait_until("tmanager location", lambda: submitted.get_tmanager_location("wc"))
        s1, s2 = stmgr(location.server_port, "stmgr-1"), stmgr(location.server_port, "stmgr-2")
        assert s1.register(data_port=1).status.status == common_pb2.OK
        response = s2.register(data_port=2)
        assert response.status.status == common_pb2.OK
        assert [s.id for s in response.pplan.stmgrs] == ["stmgr-1", "stmgr-2"]
        assert s1.next_plan() == response.pplan  # sent although not stored
        assert submitted.get_physical_plan("wc") is None
        assert any("could not store pplans/wc" in m for m in caplog.messages)

        stats = dealer(location.stats_port)
        stats.send_multipart(encode(tmanager_pb2.TopologyStateRequest(state=topology_pb2.PAUSED)))
        answer = receive(stats, tmanager_pb2.TopologyStateResponse).status
        assert answer.status == common_pb2.OK
        assert answer.message.endswith("PAUSED (stored once the state manager answers)")
        paused = s1.next_plan()
        assert paused.topology.state == topology_pb2.PAUSED
        assert submitted.get_topology("wc").state != topology_pb2.PAUSED  # waits its turn

        down.clear()
        clock.now = 100.0
        stats.send_multipart(encode(tmanager_pb2.MetricsRequest()))  # wakes the loop
        receive(stats, tmanager_pb2.MetricsResponse)
        wait_until("the plan stored", lambda: submitted.get_physical_plan("wc") == paused)
        assert submitted.get_topology("wc").state == topology_pb2.PAUSED
        assert thread.is_alive()
    finally:
        tmanager.stop()
        thread.join(30)
    assert status == [0]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
