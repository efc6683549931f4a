"""The stream manager's side of the topology manager: it watches the tmanager's location in the
state manager, connects a DEALER to it, registers (once every local instance has registered
here), heartbeats, and takes the physical plans it sends."""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from typing import Any

import zmq

from heron_core.errors import HeronError
from heron_core.network import Dispatcher, ProtocolError, Transport, encode
from heron_core.proto import common_pb2, physical_plan_pb2, tmanager_pb2

__all__ = ["TManagerLink"]

log = logging.getLogger(__name__)


class TManagerLink:
    """The connection of one stream manager to its topology manager.

    Args:
        stmgr_id: the stream manager's id.
        poller: the stream manager's poller (the tmanager socket is polled for input).
        registration: the registration request to send, or None while some local instance
            has not registered yet.
        on_pplan: called with every physical plan the tmanager sends.
    """

    def __init__(
        self,
        stmgr_id: str,
        poller: zmq.Poller,
        registration: Callable[[], tmanager_pb2.StMgrRegisterRequest | None],
        on_pplan: Callable[[physical_plan_pb2.PhysicalPlan], None],
    ) -> None:
        self.stmgr_id = stmgr_id
        self._poller = poller
        self._registration = registration
        self._on_pplan = on_pplan
        self.socket: zmq.Socket[bytes] | None = None
        self.location: tmanager_pb2.TManagerLocation | None = None
        self.registered = False
        self.events: queue.SimpleQueue[tmanager_pb2.TManagerLocation | None] = queue.SimpleQueue()
        self.dispatcher = Dispatcher(f"{stmgr_id} (tmanager)")
        self.dispatcher.register(tmanager_pb2.StMgrRegisterResponse, self.on_registered)
        self.dispatcher.register(tmanager_pb2.NewPhysicalPlanMessage, self.on_new_pplan)
        self.dispatcher.register(tmanager_pb2.StMgrHeartbeatResponse, self.on_heartbeat)

    def take_events(self, context: zmq.Context[zmq.Socket[bytes]], transport: Transport) -> None:
        """Apply the location changes the state manager's watch queued (``events.put``)."""
        while not self.events.empty():
            self.on_location(self.events.get(), context, transport)

    def on_location(
        self,
        location: tmanager_pb2.TManagerLocation | None,
        context: zmq.Context[zmq.Socket[bytes]],
        transport: Transport,
    ) -> None:
        if location is not None and location == self.location:
            return
        self.close()
        self.location = location
        self.registered = False
        if location is None:
            log.info("%s: the tmanager location is gone; waiting for a new one", self.stmgr_id)
            return
        endpoint = f"tcp://{location.host}:{location.server_port}"
        self.socket = transport.client(context.socket(zmq.DEALER))
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)
        self._poller.register(self.socket, zmq.POLLIN)
        log.info("%s: tmanager at %s", self.stmgr_id, endpoint)
        self.maybe_register()

    def send(self, message: Any) -> None:
        if self.socket is not None:
            self.socket.send_multipart(encode(message))

    def maybe_register(self) -> None:
        """Register with the tmanager if connected, not registered, and every local instance
        has registered here."""
        if self.socket is None or self.registered:
            return
        request = self._registration()
        if request is None:
            return
        self.send(request)
        self.registered = True
        log.info(
            "%s: all %d instances registered; registering with the tmanager",
            self.stmgr_id,
            len(request.instances),
        )

    def heartbeat(self, wall_ms: int) -> None:
        if self.registered:
            self.send(
                tmanager_pb2.StMgrHeartbeatRequest(stmgr_id=self.stmgr_id, heartbeat_time=wall_ms)
            )

    def read(self) -> None:
        """Handle one message from the tmanager (its socket polled readable); one that is not
        a message of the protocol is logged with the tmanager's address and dropped.

        Raises:
            HeronError: the tmanager refused the registration.
        """
        if self.socket is None:
            return
        frames = self.socket.recv_multipart()
        try:
            self.dispatcher.dispatch(frames)
        except ProtocolError as exc:
            where = "" if self.location is None else f" at {self.location.host}"
            port = "" if self.location is None else f":{self.location.server_port}"
            log.warning(
                "%s: dropped a malformed message of %d frames from the tmanager%s%s: %s",
                self.stmgr_id,
                len(frames),
                where,
                port,
                exc,
            )

    def on_registered(self, response: tmanager_pb2.StMgrRegisterResponse) -> None:
        if response.status.status != common_pb2.OK:
            raise HeronError(
                f"{self.stmgr_id}: the tmanager refused the registration: "
                f"{common_pb2.StatusCode.Name(response.status.status)} {response.status.message}"
            )
        if response.HasField("pplan"):
            self._on_pplan(response.pplan)

    def on_heartbeat(self, response: tmanager_pb2.StMgrHeartbeatResponse) -> None:
        if response.status.status != common_pb2.OK:
            log.warning(
                "%s: the tmanager does not know this stmgr (%s); registering again",
                self.stmgr_id,
                response.status.message,
            )
            self.registered = False
            self.maybe_register()

    def on_new_pplan(self, message: tmanager_pb2.NewPhysicalPlanMessage) -> None:
        self._on_pplan(message.new_pplan)

    def close(self) -> None:
        if self.socket is not None:
            self._poller.unregister(self.socket)
            self.socket.close(linger=0)
            self.socket = None
