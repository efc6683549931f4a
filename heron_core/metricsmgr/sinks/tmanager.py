"""The ``tmanager`` sink: what the container publishes, on to the topology manager's metrics
cache (Heron's TManagerSink). The tmanager aggregates; this sink only batches and sends."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Mapping
from typing import Any

import zmq

from heron_core.errors import ConfigurationError
from heron_core.metricsmgr.sinks.base import MetricsSink, SinkContext
from heron_core.network import encode
from heron_core.proto import metrics_pb2, tmanager_pb2

__all__ = ["TManagerSink"]

log = logging.getLogger(__name__)


class TManagerSink(MetricsSink):
    """Sends the messages taken since the last flush in one ``PublishMetrics`` to the
    tmanager's server port, over a DEALER with the topology's CURVE client keys.

    Until the tmanager's location is known (or while its socket cannot take more), messages
    wait, at most ``max-pending-messages`` of them; past that the oldest are dropped and
    counted in a warning. A new tmanager location (it was restarted) gets a new connection.
    The ``tmanager-metrics-type`` table is read by the tmanager, from the same config.
    """

    OPTIONS = frozenset({"tmanager-metrics-type", "max-pending-messages"})

    @classmethod
    def check(cls, kind: str, options: Mapping[str, Any]) -> None:
        pending = options.get("max-pending-messages", 100_000)
        if isinstance(pending, bool) or not isinstance(pending, int) or pending < 1:
            raise ConfigurationError(
                f"{kind}: max-pending-messages must be a positive integer, got {pending!r}"
            )
        table = options.get("tmanager-metrics-type", {})
        if not isinstance(table, Mapping):
            raise ConfigurationError(f"{kind}: tmanager-metrics-type must be a mapping")

    def __init__(self, name: str, options: Mapping[str, Any], context: SinkContext) -> None:
        super().__init__(name, options, context)
        self._pending: deque[metrics_pb2.MetricPublisherPublishMessage] = deque(
            maxlen=int(options.get("max-pending-messages", 100_000))
        )
        self._socket: zmq.Socket[bytes] | None = None
        self._endpoint = ""
        self._dropped = 0

    def process(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        if len(self._pending) == self._pending.maxlen:
            self._dropped += 1
        self._pending.append(message)

    def _connect(self) -> zmq.Socket[bytes] | None:
        location = self.context.tmanager_location()
        if location is None:
            return None
        endpoint = f"tcp://{location.host}:{location.server_port}"
        if endpoint != self._endpoint:
            if self._socket is not None:
                self._socket.close(linger=0)
            sock = self.context.zmq_context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, 64)
            self._socket = self.context.transport.client(sock)
            self._socket.connect(endpoint)
            self._endpoint = endpoint
            log.info("%s: sending metrics to the tmanager at %s", self.name, endpoint)
        return self._socket

    def flush(self) -> None:
        if self._dropped:
            log.warning(
                "%s: %d metrics messages dropped while the tmanager was unreachable",
                self.name,
                self._dropped,
            )
            self._dropped = 0
        if not self._pending:
            return
        sock = self._connect()
        if sock is None:
            return
        batch = tmanager_pb2.PublishMetrics(messages=list(self._pending))
        try:
            sock.send_multipart(encode(batch), zmq.NOBLOCK)
        except zmq.Again:
            return  # not connected yet, or the tmanager is slow: keep them for the next flush
        self._pending.clear()

    def close(self) -> None:
        self.flush()
        if self._socket is not None:
            self._socket.close(linger=500)
            self._socket = None
