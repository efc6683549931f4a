"""The stats port: requests from clients (`heron run`, the tracker, the Storm facade's
``LocalCluster``) over a zmq ROUTER.

A client connects a DEALER, sends one request and reads its answer:

* ``MetricsRequest`` -> ``MetricsResponse``: the all-time value of every metric, one message
  per instance (`MetricsCache.latest`);
* ``MetricRequest`` -> ``MetricResponse``: Heron's metric query (`MetricsCache.metrics`);
* ``ExceptionLogRequest`` -> ``ExceptionLogResponse``: the exception log
  (`MetricsCache.exceptions`);
* ``TopologyStateRequest`` -> ``TopologyStateResponse``: activate or deactivate.

The metrics cache is filled by the metrics managers' ``PublishMetrics`` (see `_stmgr_server`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import zmq

from heron_core.network import Dispatcher, ProtocolError, encode
from heron_core.proto import common_pb2, tmanager_pb2, topology_pb2
from heron_core.tmanager._metrics_cache import MetricsCache

logger = logging.getLogger(__name__)


def drain_router(socket: zmq.Socket[bytes], dispatcher: Dispatcher, port: str) -> None:
    """Dispatch every message waiting on ROUTER ``socket`` (with the peer identity as context);
    a malformed one is logged and skipped. Never blocks."""
    while True:
        try:
            frames = socket.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return
        try:
            dispatcher.dispatch(frames[1:], frames[0])
        except ProtocolError as exc:
            logger.warning("ignoring a malformed message on the %s port: %s", port, exc)


ChangeState = Callable[[topology_pb2.TopologyState.ValueType], common_pb2.Status]
"""Applies a requested run state to the topology and says how it went."""


class StatsServer:
    """Answers the stats port's requests (see the module) on its ROUTER socket.

    Every request gets exactly one answer; a query the cache cannot answer gets status NOTOK
    with a message, never an exception out of `on_readable`.

    Args:
        socket: a bound ROUTER socket; this class reads and writes it, never closes it.
        cache: where metric and exception answers come from.
        change_state: applies the state of a ``TopologyStateRequest``; its status is the answer.
    """

    def __init__(
        self, socket: zmq.Socket[bytes], cache: MetricsCache, change_state: ChangeState
    ) -> None:
        self.socket = socket
        self._cache = cache
        self._change_state = change_state
        self._dispatcher = Dispatcher("tmanager stats server")
        self._dispatcher.register(tmanager_pb2.MetricsRequest, self._on_metrics_request)
        self._dispatcher.register(tmanager_pb2.MetricRequest, self._on_metric_request)
        self._dispatcher.register(tmanager_pb2.ExceptionLogRequest, self._on_exception_request)
        self._dispatcher.register(tmanager_pb2.TopologyStateRequest, self._on_state_request)

    def on_readable(self) -> None:
        """Handle every message waiting on the socket (must not block)."""
        drain_router(self.socket, self._dispatcher, "stats")

    def _on_metrics_request(self, request: tmanager_pb2.MetricsRequest, peer: bytes) -> None:
        response = tmanager_pb2.MetricsResponse(
            status=common_pb2.Status(status=common_pb2.OK),
            messages=self._cache.latest(request.component_name),
        )
        self.socket.send_multipart([peer, *encode(response)])

    def _on_metric_request(self, request: tmanager_pb2.MetricRequest, peer: bytes) -> None:
        self.socket.send_multipart([peer, *encode(self._cache.metrics(request))])

    def _on_exception_request(self, request: tmanager_pb2.ExceptionLogRequest, peer: bytes) -> None:
        self.socket.send_multipart([peer, *encode(self._cache.exceptions(request))])

    def _on_state_request(self, request: tmanager_pb2.TopologyStateRequest, peer: bytes) -> None:
        response = tmanager_pb2.TopologyStateResponse(status=self._change_state(request.state))
        self.socket.send_multipart([peer, *encode(response)])
