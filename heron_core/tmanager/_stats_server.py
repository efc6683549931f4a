"""The stats port: requests from clients (`heron run`, the tracker, the Storm facade's
``LocalCluster``) over a zmq ROUTER.

A client connects a DEALER, sends ``encode(MetricsRequest)`` and reads one ``MetricsResponse``,
or sends ``encode(TopologyStateRequest)`` and reads one ``TopologyStateResponse``. The metrics
store is filled by the stream managers' ``PublishMetrics`` (see `_stmgr_server`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import zmq

from heron_core.network import Dispatcher, ProtocolError, encode
from heron_core.proto import common_pb2, metrics_pb2, tmanager_pb2, topology_pb2

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


class MetricsStore:
    """The newest published metrics message of every instance.

    >>> from heron_core.proto import metrics_pb2 as m
    >>> store = MetricsStore()
    >>> pub = m.MetricPublisher(component_name="word", instance_id="container_1_word_2")
    >>> store.publish([m.MetricPublisherPublishMessage(publisher=pub, timestamp=5),
    ...                m.MetricPublisherPublishMessage(publisher=pub, timestamp=3)])
    >>> [msg.timestamp for msg in store.query("word")], store.query("other")
    ([5], [])
    """

    def __init__(self) -> None:
        self._newest: dict[str, metrics_pb2.MetricPublisherPublishMessage] = {}

    def publish(self, messages: Iterable[metrics_pb2.MetricPublisherPublishMessage]) -> None:
        """Keep each message unless a newer one (by timestamp) of its instance is held.

        Messages without ``publisher.instance_id`` are dropped with a warning.
        """
        for message in messages:
            key = message.publisher.instance_id
            if not key:
                logger.warning("dropping metrics without publisher.instance_id: %s", message)
                continue
            held = self._newest.get(key)
            if held is None or held.timestamp <= message.timestamp:
                self._newest[key] = message

    def query(self, component_name: str = "") -> list[metrics_pb2.MetricPublisherPublishMessage]:
        """The newest message of every instance of ``component_name`` (all when empty).

        Sorted by instance id; the messages are the store's own, not to be modified.
        """
        return [
            self._newest[key]
            for key in sorted(self._newest)
            if not component_name or self._newest[key].publisher.component_name == component_name
        ]


ChangeState = Callable[[topology_pb2.TopologyState.ValueType], common_pb2.Status]
"""Applies a requested run state to the topology and says how it went."""


class StatsServer:
    """Answers ``MetricsRequest`` and ``TopologyStateRequest`` on the stats port's ROUTER socket.

    Args:
        socket: a bound ROUTER socket; this class reads and writes it, never closes it.
        store: where metric answers come from.
        change_state: applies the state of a ``TopologyStateRequest``; its status is the answer.
    """

    def __init__(
        self, socket: zmq.Socket[bytes], store: MetricsStore, change_state: ChangeState
    ) -> None:
        self.socket = socket
        self._store = store
        self._change_state = change_state
        self._dispatcher = Dispatcher("tmanager stats server")
        self._dispatcher.register(tmanager_pb2.MetricsRequest, self._on_metrics_request)
        self._dispatcher.register(tmanager_pb2.TopologyStateRequest, self._on_state_request)

    def on_readable(self) -> None:
        """Handle every message waiting on the socket (must not block)."""
        drain_router(self.socket, self._dispatcher, "stats")

    def _on_metrics_request(self, request: tmanager_pb2.MetricsRequest, peer: bytes) -> None:
        response = tmanager_pb2.MetricsResponse(
            status=common_pb2.Status(status=common_pb2.OK),
            messages=self._store.query(request.component_name),
        )
        self.socket.send_multipart([peer, *encode(response)])

    def _on_state_request(self, request: tmanager_pb2.TopologyStateRequest, peer: bytes) -> None:
        response = tmanager_pb2.TopologyStateResponse(status=self._change_state(request.state))
        self.socket.send_multipart([peer, *encode(response)])
