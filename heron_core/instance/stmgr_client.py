"""The instance's connections to its stream manager: a zmq DEALER to the per-task ipc socket
(``<prefix>task-<T>``) for everything but metrics, and a PUSH to the shared metrics socket
(``<prefix>metrics``).

Sends never block the user's thread: a message the socket cannot take now waits in ``pending``
and the runtime stops producing (spouts) or consuming (bolts) until it drains, which is how
back pressure reaches an instance. Metrics do not wait there: under back pressure the stream
manager stops reading its spouts' task sockets, and a spout's counters queued behind its data
would reach no one for as long (a client would read its rate as 0). They go out on their own
socket, and one the stream manager cannot take at once is dropped: the next one carries the
same cumulative counters.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Sequence

import zmq
from google.protobuf.message import Message

from heron_core.network import data_frames, encode, metrics_endpoint
from heron_core.proto import metrics_pb2, physical_plan_pb2, stmgr_pb2

log = logging.getLogger(__name__)

SEND_HWM = 16
RECV_HWM = 16
METRICS_HWM = 4


class StMgrClient:
    """DEALER socket to the stmgr (frames out, frames in) and PUSH socket for metrics.

    Args:
        context: the instance's zmq context.
        endpoint: the task's socket (``heron_core.network.task_endpoint``); metrics go to its
            stream manager's `metrics_endpoint`.
    """

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], endpoint: str) -> None:
        self.endpoint = endpoint
        self.socket: zmq.Socket[bytes] = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.SNDHWM, SEND_HWM)
        self.socket.setsockopt(zmq.RCVHWM, RECV_HWM)
        self.socket.setsockopt(zmq.LINGER, 1000)
        self.socket.connect(endpoint)
        self.pending: deque[Sequence[bytes]] = deque()
        self.metrics_socket: zmq.Socket[bytes] = context.socket(zmq.PUSH)
        self.metrics_socket.setsockopt(zmq.SNDHWM, METRICS_HWM)
        self.metrics_socket.setsockopt(zmq.LINGER, 1000)
        self.metrics_socket.connect(metrics_endpoint(endpoint))
        self.metrics_dropped = 0

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
        """Send ``message``: metrics on the metrics socket (dropped if it is full), anything
        else after what is pending."""
        if isinstance(message, metrics_pb2.MetricPublisherPublishMessage):
            try:
                self.metrics_socket.send_multipart(encode(message), zmq.NOBLOCK)
            except zmq.Again:
                self.metrics_dropped += 1
            return
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
        self.metrics_socket.close()
