"""The server port: registrations and heartbeats from the stream managers, metrics from the
metrics managers.

Each stream manager connects a zmq DEALER to this ROUTER socket. Requests are answered on the
same connection; ``NewPhysicalPlanMessage`` is pushed to the routing id each stream manager
registered from. Each container's metrics manager connects its own DEALER and only sends
``PublishMetrics`` (never answered); it does not register.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import zmq
from google.protobuf.message import Message

from heron_core.network import Dispatcher, encode
from heron_core.proto import ckptmgr_pb2, common_pb2, physical_plan_pb2, tmanager_pb2
from heron_core.tmanager._checkpointer import Checkpointer
from heron_core.tmanager._metrics_cache import MetricsCache
from heron_core.tmanager._registration import StMgrRegistry
from heron_core.tmanager._stats_server import drain_router

logger = logging.getLogger(__name__)


class StMgrServer:
    """Serves the stream managers and metrics managers on the server port's ROUTER socket.

    Args:
        socket: a bound ROUTER socket; this class reads and writes it, never closes it.
        registry: registration state and plan assembly.
        cache: where published metrics go (``PublishMetrics`` from any peer).
        store_plan: persists a new physical plan (to the state manager); called before the
            plan is sent to anyone. Its exceptions propagate out of `on_readable`.
        clock: seconds, monotonic; read once per registration or heartbeat.
        checkpointer: the checkpoints and rollbacks of an EFFECTIVELY_ONCE topology (told of
            every registration once the plan is complete, and of the stream managers'
            checkpoint messages); None otherwise.
    """

    def __init__(
        self,
        socket: zmq.Socket[bytes],
        registry: StMgrRegistry,
        cache: MetricsCache,
        store_plan: Callable[[physical_plan_pb2.PhysicalPlan], None],
        clock: Callable[[], float],
        checkpointer: Checkpointer | None = None,
    ) -> None:
        self.socket = socket
        self.checkpointer = checkpointer
        self._registry = registry
        self._cache = cache
        self._store_plan = store_plan
        self._clock = clock
        self._dispatcher = Dispatcher("tmanager stmgr server")
        self._dispatcher.register(tmanager_pb2.StMgrRegisterRequest, self._on_register)
        self._dispatcher.register(tmanager_pb2.StMgrHeartbeatRequest, self._on_heartbeat)
        self._dispatcher.register(tmanager_pb2.PublishMetrics, self._on_publish_metrics)
        if checkpointer is not None:
            register = self._dispatcher.register
            register(ckptmgr_pb2.InstanceStateStored, lambda m, _: checkpointer.on_stored(m))
            register(
                ckptmgr_pb2.RestoreTopologyStateResponse, lambda m, _: checkpointer.on_restored(m)
            )
            register(ckptmgr_pb2.ResetTopologyState, lambda m, _: checkpointer.on_reset(m))

    def on_readable(self) -> None:
        """Handle every message waiting on the socket (must not block)."""
        drain_router(self.socket, self._dispatcher, "server")

    def _on_register(self, request: tmanager_pb2.StMgrRegisterRequest, peer: bytes) -> None:
        result = self._registry.register(request.stmgr, peer, self._clock())
        response = tmanager_pb2.StMgrRegisterResponse(
            status=common_pb2.Status(status=result.status, message=result.message)
        )
        if result.status != common_pb2.OK:
            logger.warning("rejected a registration: %s", result.message)
            self.socket.send_multipart([peer, *encode(response)])
            return
        stmgr = request.stmgr
        logger.info(
            "%s (host %s, data port %d, pid %d): %s",
            stmgr.id,
            stmgr.host_name,
            stmgr.data_port,
            stmgr.pid,
            result.message,
        )
        if result.plan is not None:
            self._store_plan(result.plan)
            response.pplan.CopyFrom(result.plan)
        self.socket.send_multipart([peer, *encode(response)])
        if result.plan is not None:
            self.send_plan(result.plan)
            if self.checkpointer is not None:
                self.checkpointer.on_registered(self._registry.registrations)

    def send_plan(self, plan: physical_plan_pb2.PhysicalPlan) -> None:
        """Push ``plan`` (already persisted) to every registered stream manager."""
        frames = encode(tmanager_pb2.NewPhysicalPlanMessage(new_pplan=plan))
        registrations = self._registry.registrations
        for registration in registrations.values():
            self.socket.send_multipart([registration.peer, *frames])
        logger.info("physical plan sent to %s", sorted(registrations))

    def broadcast(self, message: Message) -> None:
        """Send ``message`` to every registered stream manager."""
        frames = encode(message)
        for registration in self._registry.registrations.values():
            self.socket.send_multipart([registration.peer, *frames])

    def _on_heartbeat(self, request: tmanager_pb2.StMgrHeartbeatRequest, peer: bytes) -> None:
        before = self._registry.heartbeat(request.stmgr_id, peer, self._clock())
        if before is None:
            status = common_pb2.Status(
                status=common_pb2.STMGR_DIDNT_REGISTER,
                message=f"{request.stmgr_id!r} is not registered from this connection; "
                "register again",
            )
            logger.warning("heartbeat from unregistered stream manager %r", request.stmgr_id)
        else:
            status = common_pb2.Status(status=common_pb2.OK)
            if before.silent:
                logger.info("%s is heartbeating again", request.stmgr_id)
        response = tmanager_pb2.StMgrHeartbeatResponse(status=status)
        self.socket.send_multipart([peer, *encode(response)])

    def _on_publish_metrics(self, message: tmanager_pb2.PublishMetrics, peer: bytes) -> None:
        self._cache.publish(message.messages)
