"""The instance's connections to its container: a zmq DEALER to its stream manager's per-task
ipc socket (``<prefix>task-<T>``) for everything but metrics, and a PUSH to the metrics
manager's socket (``heron_core.network.metrics_endpoint``).

Sends never block the user's thread: a message the socket cannot take now waits in ``pending``
and the runtime stops producing (spouts) or consuming (bolts) until it drains, which is how
back pressure reaches an instance. Metrics go out on their own socket, so that back pressure
never holds them behind data. Each metrics message covers one interval (counts are deltas), so
one the socket cannot take at once waits in a short backlog, sent before the next; only when
the backlog overflows (the metrics manager gone for minutes) is the oldest dropped, and counted
in `StMgrClient.metrics_dropped`, which the runtime publishes as ``__metrics-messages-dropped``.
At shutdown `flush_metrics` waits for the backlog, and the socket lingers so the final message
is delivered.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Sequence

import zmq
from google.protobuf.message import Message

from heron_core.network import ACKS, DATA, data_frames, encode, metrics_endpoint
from heron_core.proto import metrics_pb2, physical_plan_pb2, stmgr_pb2

log = logging.getLogger(__name__)

SEND_HWM = 16
RECV_HWM = 16
METRICS_HWM = 4
METRICS_BACKLOG = 256
"""Metrics messages kept while the socket is full (minutes at the default export interval)."""
METRICS_LINGER_MS = 2000


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
        self.metrics_socket.setsockopt(zmq.LINGER, METRICS_LINGER_MS)
        self.metrics_socket.connect(metrics_endpoint(endpoint))
        self.metrics_backlog: deque[Sequence[bytes]] = deque()
        self.metrics_dropped = 0
        """Metrics messages dropped so far (the backlog overflowed)."""
        # One poller per kind of wait, built once: ``Socket.poll`` builds a poller and an enum
        # flag at every call, over half the cost of an idle spout's round (1 kHz by default).
        self._in = self._poller(zmq.POLLIN)
        self._out = self._poller(zmq.POLLOUT)
        self._in_out = self._poller(zmq.POLLIN | zmq.POLLOUT)

    def _poller(self, events: int) -> zmq.Poller:
        poller = zmq.Poller()
        poller.register(self.socket, events)
        return poller

    def readable(self, timeout_ms: int) -> bool:
        """Wait up to ``timeout_ms`` (0: just look) for a message to read; True when one is
        there."""
        return bool(self._in.poll(timeout_ms))

    def writable(self, timeout_ms: int) -> None:
        """Wait up to ``timeout_ms`` for room to send what is pending."""
        self._out.poll(timeout_ms)

    def wait(self, timeout_ms: int) -> bool:
        """Wait up to ``timeout_ms`` for a message to read or, while sends are pending, for
        room to send them; True when a message is there to read."""
        if not self.pending:
            return bool(self._in.poll(timeout_ms))
        return any(event & zmq.POLLIN for _, event in self._in_out.poll(timeout_ms))

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
        """Send ``message``: metrics on the metrics socket (after its backlog), anything else
        after what is pending."""
        if isinstance(message, metrics_pb2.MetricPublisherPublishMessage):
            backlog = self.metrics_backlog
            backlog.append(encode(message))
            if len(backlog) > METRICS_BACKLOG:
                backlog.popleft()
                self.metrics_dropped += 1
            self.drain_metrics()
            return
        self.send(encode(message))

    def drain_metrics(self) -> bool:
        """Send the metrics backlog; True when nothing is left in it."""
        backlog = self.metrics_backlog
        while backlog:
            try:
                self.metrics_socket.send_multipart(backlog[0], zmq.NOBLOCK)
            except zmq.Again:
                return False
            backlog.popleft()
        return True

    def flush_metrics(self, timeout_s: float) -> bool:
        """At shutdown: wait up to ``timeout_s`` for the metrics backlog to go out (the socket
        then lingers to deliver it); True when it did."""
        poller = zmq.Poller()
        poller.register(self.metrics_socket, zmq.POLLOUT)
        deadline = time.monotonic() + timeout_s
        while not self.drain_metrics():
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                return False
            poller.poll(min(left_ms, 50))
        return True

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

    def drop_data(self) -> None:
        """Drop the tuple and ack batches waiting to be sent (a rollback: they belong to the
        run before it); control messages stay, in order."""
        self.pending = deque(f for f in self.pending if f[0] not in (DATA, ACKS))

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
