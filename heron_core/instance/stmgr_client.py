"""The instance's one connection: a zmq DEALER to its stream manager's per-task ipc socket.

Sends never block the user's thread: a message the socket cannot take now waits in ``pending``
and the runtime stops producing (spouts) or consuming (bolts) until it drains, which is how
back pressure reaches an instance.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Sequence

import zmq
from google.protobuf.message import Message

from heron_core.network import data_frames, encode
from heron_core.proto import physical_plan_pb2, stmgr_pb2

log = logging.getLogger(__name__)

SEND_HWM = 16
RECV_HWM = 16


class StMgrClient:
    """DEALER socket to the stmgr; frames out, frames in."""

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], endpoint: str) -> None:
        self.endpoint = endpoint
        self.socket: zmq.Socket[bytes] = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.SNDHWM, SEND_HWM)
        self.socket.setsockopt(zmq.RCVHWM, RECV_HWM)
        self.socket.setsockopt(zmq.LINGER, 1000)
        self.socket.connect(endpoint)
        self.pending: deque[Sequence[bytes]] = deque()

    def register(
        self, instance: physical_plan_pb2.Instance, topology_name: str, topology_id: str
    ) -> None:
        request = stmgr_pb2.RegisterInstanceRequest(
            instance=instance,
            topology_name=topology_name,
            topology_id=topology_id,
            pid=os.getpid(),
        )
        self.send(encode(request))

    def send_message(self, message: Message) -> None:
        self.send(encode(message))

    def send_data(self, dest_task: int, batch: bytes) -> None:
        self.send(data_frames(dest_task, batch))

    def send(self, frames: Sequence[bytes]) -> None:
        """Queue ``frames``; they go out now if the socket has room, else on :meth:`drain`."""
        if self.pending:
            self.pending.append(frames)
            self.drain()
            return
        try:
            self.socket.send_multipart(frames, zmq.NOBLOCK, copy=False)
        except zmq.Again:
            self.pending.append(frames)

    def drain(self) -> bool:
        """Send what waits; True when nothing is left waiting."""
        pending = self.pending
        while pending:
            try:
                self.socket.send_multipart(pending[0], zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return False
            pending.popleft()
        return True

    def flush_blocking(self, timeout_s: float) -> bool:
        """At shutdown: wait up to ``timeout_s`` for everything pending to go out."""
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLOUT)
        remaining_ms = int(timeout_s * 1000)
        while self.pending and remaining_ms > 0:
            if poller.poll(50):
                self.drain()
            remaining_ms -= 50
        return not self.pending

    def close(self) -> None:
        self.socket.close()
