"""The stream manager's side of the other stream managers: a PULL socket on a tcp port (the
"data port") for what every peer sends here, one PUSH socket per peer (from the physical plan)
for what goes there, the hello on each new connection and the back-pressure announcements."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

import zmq

from heron_core.network import Dispatcher, Transport, encode
from heron_core.proto import physical_plan_pb2, stmgr_pb2
from heron_core.stmgr._backpressure import BackPressure, Transition
from heron_core.stmgr._outbox import Outbox, Outboxes

__all__ = ["PEER_HWM", "Peers"]

log = logging.getLogger(__name__)

PEER_HWM = 64


class Peers:
    """The connections of one stream manager to the others.

    Args:
        stmgr_id: this stream manager's id.
        topology_name: the topology's name (in the messages to peers).
        topology_id: the topology's id (in the messages to peers).
        outboxes: where the peers' outboxes live.
        back_pressure: told of the peers' announcements.
        react: called with each `Transition` an announcement causes.
    """

    def __init__(
        self,
        stmgr_id: str,
        topology_name: str,
        topology_id: str,
        outboxes: Outboxes,
        back_pressure: BackPressure,
        react: Callable[[Transition], None],
    ) -> None:
        self.stmgr_id = stmgr_id
        self.topology_name = topology_name
        self.topology_id = topology_id
        self._outboxes = outboxes
        self._bp = back_pressure
        self._react = react
        self.peers: dict[str, tuple[str, Outbox]] = {}  # peer id -> (endpoint, outbox)
        self.remote_box: dict[int, Outbox] = {}  # remote task -> its stream manager's outbox
        self.server: zmq.Socket[bytes] | None = None
        self.data_port = 0
        self.dispatcher = Dispatcher(f"{stmgr_id} (peers)")
        self.dispatcher.register(stmgr_pb2.StrMgrHelloRequest, self.on_hello)
        self.dispatcher.register(stmgr_pb2.StartBackPressureMessage, self.on_start)
        self.dispatcher.register(stmgr_pb2.StopBackPressureMessage, self.on_stop)

    def bind(
        self, context: zmq.Context[zmq.Socket[bytes]], transport: Transport, host: str
    ) -> zmq.Socket[bytes]:
        """Bind the data port (a free port on ``host``); return its socket."""
        server = transport.server(context.socket(zmq.PULL), "data port")
        server.setsockopt(zmq.RCVHWM, PEER_HWM)
        server.setsockopt(zmq.LINGER, 0)
        self.data_port = server.bind_to_random_port(f"tcp://{host}")
        self.server = server
        return server

    def apply(
        self,
        pplan: physical_plan_pb2.PhysicalPlan,
        context: zmq.Context[zmq.Socket[bytes]],
        transport: Transport,
    ) -> None:
        """Connect to the stream managers of ``pplan`` (and close those it no longer names or
        names at another address), then route each remote task to its stream manager."""
        wanted = {
            s.id: f"tcp://{s.host_name}:{s.data_port}"
            for s in pplan.stmgrs
            if s.id != self.stmgr_id
        }
        for peer_id, (endpoint, box) in list(self.peers.items()):
            if wanted.get(peer_id) != endpoint:
                del self.peers[peer_id]
                self._outboxes.close(box)
                self._note(self._bp.peer_stopped(peer_id))
        for peer_id, endpoint in wanted.items():
            if peer_id in self.peers:
                continue
            sock = transport.client(context.socket(zmq.PUSH))
            sock.setsockopt(zmq.SNDHWM, PEER_HWM)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(endpoint)
            box = self._outboxes.add(Outbox(sock, peer_id, readable=False))
            self.peers[peer_id] = (endpoint, box)
            hello = stmgr_pb2.StrMgrHelloRequest(
                topology_name=self.topology_name,
                topology_id=self.topology_id,
                stmgr=self.stmgr_id,
            )
            self._outboxes.send(box, encode(hello))
            if self._bp.greets(peer_id):  # a (re)connected peer must hear we are in back pressure
                self._outboxes.send_first(box, encode(self._announcement(True)))
        self.remote_box.clear()  # in place: the routing loop holds this dict
        self.remote_box.update(
            (i.info.task_id, self.peers[i.stmgr_id][1])
            for i in pplan.instances
            if i.stmgr_id != self.stmgr_id and i.stmgr_id in self.peers
        )

    def announce(self, start: bool) -> None:
        """Tell every peer that back pressure starts (True) or stops (False) here; the message
        goes ahead of any queued data."""
        message = self._announcement(start)
        for _, box in self.peers.values():
            self._outboxes.send_first(box, encode(message))

    def _announcement(
        self, start: bool
    ) -> stmgr_pb2.StartBackPressureMessage | stmgr_pb2.StopBackPressureMessage:
        cls = stmgr_pb2.StartBackPressureMessage if start else stmgr_pb2.StopBackPressureMessage
        return cls(
            topology_name=self.topology_name,
            topology_id=self.topology_id,
            stmgr=self.stmgr_id,
            message_id=uuid.uuid4().hex,
        )

    def _note(self, transition: Transition) -> None:
        if transition.changed:
            self._react(transition)

    def on_hello(self, hello: stmgr_pb2.StrMgrHelloRequest) -> None:
        log.info("%s: hello from %s", self.stmgr_id, hello.stmgr)

    def on_start(self, message: stmgr_pb2.StartBackPressureMessage) -> None:
        self._note(self._bp.peer_started(message.stmgr))

    def on_stop(self, message: stmgr_pb2.StopBackPressureMessage) -> None:
        self._note(self._bp.peer_stopped(message.stmgr))

    def close(self) -> None:
        if self.server is not None:
            self.server.close(linger=0)
            self.server = None
