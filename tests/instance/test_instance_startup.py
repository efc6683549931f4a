"""An instance's start-up against its stream manager (a bare socket here): a refused
registration ends the instance with the reason, and a long wait for the plan is logged."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from heron_core.errors import HeronError
from heron_core.instance import InstanceArgs, InstanceRuntime
from heron_core.network import decode, encode, task_endpoint
from heron_core.proto import common_pb2, stmgr_pb2

WAIT_MS = 30_000


class SteppingClock:
    """A clock that moves ``step`` seconds at every reading."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture
def stmgr(tmp_path: Path) -> Iterator[tuple[zmq.Socket[bytes], str]]:
    """The stream manager's socket of task 7 and the endpoint prefix the instance uses."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    prefix = f"ipc://{tmp_path}/"
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(task_endpoint(prefix, 7))
    yield sock, prefix
    context.destroy(linger=0)


def _runtime(prefix: str, tmp_path: Path, clock: Any) -> InstanceRuntime:
    args = InstanceArgs("wc", "wc-1", 1, 7, "count", 0, tmp_path, prefix)
    return InstanceRuntime(args, clock=clock)


def _start(runtime: InstanceRuntime) -> tuple[threading.Thread, list[BaseException]]:
    raised: list[BaseException] = []

    def wait() -> None:
        try:
            runtime._wait_for_plan()
        except BaseException as exc:  # SystemExit included: what the thread ended with
            raised.append(exc)

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread, raised


def _registration(sock: zmq.Socket[bytes]) -> stmgr_pb2.RegisterInstanceRequest:
    assert sock.poll(WAIT_MS), "the instance did not register"
    request = decode(sock.recv_multipart())
    assert isinstance(request, stmgr_pb2.RegisterInstanceRequest)
    return request


def test_a_refused_registration_ends_the_instance_with_the_reason(
    stmgr: tuple[zmq.Socket[bytes], str], tmp_path: Path
) -> None:
    sock, prefix = stmgr
    runtime = _runtime(prefix, tmp_path, SteppingClock(0.0))
    try:
        thread, raised = _start(runtime)
        assert _registration(sock).instance.info.task_id == 7
        refusal = common_pb2.Status(status=common_pb2.NOTOK, message="task 7 of wc-0")
        sock.send_multipart(encode(stmgr_pb2.RegisterInstanceResponse(status=refusal)))
        thread.join(WAIT_MS / 1000)
        assert not thread.is_alive()
        assert len(raised) == 1 and isinstance(raised[0], HeronError)
        message = str(raised[0])
        assert "component 'count', task 7" in message
        assert "refused the registration: task 7 of wc-0" in message
    finally:
        runtime.stop()
        runtime._zmq.destroy(linger=0)


def test_a_long_wait_for_the_plan_is_logged(
    stmgr: tuple[zmq.Socket[bytes], str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sock, prefix = stmgr
    runtime = _runtime(prefix, tmp_path, SteppingClock(10.0))  # 10 s a reading
    caplog.set_level(logging.WARNING, logger="heron_core.instance._runtime")
    try:
        thread, raised = _start(runtime)
        _registration(sock)  # and no answer
        for _ in range(300):
            if any("still waiting for the physical plan" in r.message for r in caplog.records):
                break
            time.sleep(0.1)
        runtime.stop()
        thread.join(WAIT_MS / 1000)
        assert not thread.is_alive()
        assert [type(exc) for exc in raised] == [SystemExit]
        lines = [r.message for r in caplog.records if "still waiting" in r.message]
        assert lines, "no line about the wait"
        assert "component 'count', task 7: still waiting for the physical plan" in lines[0]
        assert prefix in lines[0]
    finally:
        runtime._zmq.destroy(linger=0)
