"""Shared by the tmanager tests: a small topology, its 2-container packing plan, a localfs
state manager, fake stream managers and deadline-bounded waits."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import zmq
from google.protobuf.message import Message

from heron_core.network import KEYS_DIR, TopologyKeys, Transport, decode, encode
from heron_core.proto import (
    common_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.statemgr import LocalFileSystemStateManager, StateKey
from heron_core.testing.topologies import word_count_proto


def small_topology(name: str = "wc", topology_id: str = "wc-1") -> topology_pb2.Topology:
    """A spout "word" (2 tasks) feeding a bolt "count" (2 tasks) by shuffle grouping."""
    return word_count_proto(name, topology_id, spouts=2)


def two_container_plan() -> packing_plan_pb2.PackingPlan:
    """Container 2 listed first, tasks out of order, to exercise the sorting."""

    def inst(component: str, task: int, index: int) -> packing_plan_pb2.InstancePlan:
        return packing_plan_pb2.InstancePlan(
            component_name=component, task_id=task, component_index=index
        )

    return packing_plan_pb2.PackingPlan(
        id="wc-plan",
        containers=[
            packing_plan_pb2.ContainerPlan(
                id=2, instances=[inst("count", 4, 1), inst("word", 2, 1)]
            ),
            packing_plan_pb2.ContainerPlan(
                id=1, instances=[inst("word", 1, 0), inst("count", 3, 0)]
            ),
        ],
    )


@pytest.fixture
def topology() -> topology_pb2.Topology:
    return small_topology()


@pytest.fixture
def packing_plan() -> packing_plan_pb2.PackingPlan:
    return two_container_plan()


DEADLINE_S = 30.0
M = TypeVar("M", bound=Message)


def _wait_until(what: str, condition: Callable[[], Any]) -> Any:
    end = time.monotonic() + DEADLINE_S
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"no {what} within {DEADLINE_S:g} s")
        time.sleep(0.02)


def _receive(sock: zmq.Socket[bytes], expected: type[M]) -> M:
    if not sock.poll(int(DEADLINE_S * 1000)):
        pytest.fail(f"no {expected.__name__} within {DEADLINE_S:g} s")
    message = decode(sock.recv_multipart())
    assert isinstance(message, expected), f"expected {expected.__name__}, got {message}"
    return message


class FakeStMgr:
    """A DEALER speaking the stream manager's side of the tmanager's server port."""

    def __init__(self, sock: zmq.Socket[bytes], sid: str) -> None:
        self.sid = sid
        self.sock = sock

    def register(self, data_port: int) -> tmanager_pb2.StMgrRegisterResponse:
        stmgr = physical_plan_pb2.StMgr(
            id=self.sid, host_name="127.0.0.1", data_port=data_port, pid=os.getpid()
        )
        self.sock.send_multipart(encode(tmanager_pb2.StMgrRegisterRequest(stmgr=stmgr)))
        return _receive(self.sock, tmanager_pb2.StMgrRegisterResponse)

    def heartbeat(self) -> common_pb2.StatusCode.ValueType:
        """Send a heartbeat and return its status; fails if another message comes first."""
        request = tmanager_pb2.StMgrHeartbeatRequest(stmgr_id=self.sid, heartbeat_time=1)
        self.sock.send_multipart(encode(request))
        return _receive(self.sock, tmanager_pb2.StMgrHeartbeatResponse).status.status

    def next_plan(self) -> physical_plan_pb2.PhysicalPlan:
        return _receive(self.sock, tmanager_pb2.NewPhysicalPlanMessage).new_pplan


@pytest.fixture
def wait_until() -> Callable[[str, Callable[[], Any]], Any]:
    """``wait_until(what, condition)``: poll until truthy and return it; fail after 30 s."""
    return _wait_until


@pytest.fixture
def receive() -> Callable[[zmq.Socket[bytes], type[M]], M]:
    """``receive(sock, Type)``: the next message on ``sock``, which must be a ``Type``."""
    return _receive


@pytest.fixture
def working_dir(tmp_path: Path) -> Path:
    """The topology's working directory: ``tmp_path``, holding a fresh key pair in ``keys/``."""
    TopologyKeys.create(tmp_path / KEYS_DIR)
    return tmp_path


@pytest.fixture
def dealer(working_dir: Path) -> Iterator[Callable[[int], zmq.Socket[bytes]]]:
    """``dealer(port)``: a new DEALER connected to 127.0.0.1:port with the topology's key pair
    (as the stream managers and the CLI connect), closed after the test."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    sockets: list[zmq.Socket[bytes]] = []
    keys = TopologyKeys.load(working_dir / KEYS_DIR)
    transport = Transport(context, keys, "a test client")

    def connect(port: int) -> zmq.Socket[bytes]:
        sock = transport.client(context.socket(zmq.DEALER))
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://127.0.0.1:{port}")
        sockets.append(sock)
        return sock

    yield connect
    for sock in sockets:
        sock.close()
    context.term()


@pytest.fixture
def stmgr(dealer: Callable[[int], zmq.Socket[bytes]]) -> Callable[[int, str], FakeStMgr]:
    """``stmgr(server_port, "stmgr-K")``: a fake stream manager on a new connection."""
    return lambda port, sid: FakeStMgr(dealer(port), sid)


@pytest.fixture
def state(working_dir: Path) -> Iterator[LocalFileSystemStateManager]:
    """A started, empty localfs state manager rooted in ``working_dir`` (cluster "local"),
    holding topology "wc"'s key (its nodes are sealed, as a submit writes them)."""
    config = {"heron.statemgr.root.path": str(working_dir)}
    with LocalFileSystemStateManager(config, "local") as sm:
        sm.add_key(StateKey.load("wc", working_dir))
        yield sm


@pytest.fixture
def submitted(
    state: LocalFileSystemStateManager,
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
) -> LocalFileSystemStateManager:
    """``state`` holding topology "wc" (id "wc-1") and its 2-container packing plan."""
    state.set_topology("wc", topology)
    state.set_packing_plan("wc", packing_plan)
    return state
