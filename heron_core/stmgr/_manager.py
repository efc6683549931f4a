"""The Stream Manager: routes every tuple batch of its container.

One zmq loop serves: one DEALER socket per local task (``<prefix>task-<T>``, ipc), a PULL socket
on a tcp port for batches from peer stream managers, one PUSH socket per peer, and a DEALER to the
topology manager. A data message's destination task is read from its second frame and the
payload is forwarded untouched: user values are never deserialized here. A socket that cannot
take a message now gets it queued in order; nothing is dropped.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import zmq

from heron_core.config.codec import config_from_proto
from heron_core.errors import HeronError
from heron_core.network import DATA, Dispatcher, encode, unpack_task
from heron_core.proto import (
    common_pb2,
    metrics_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    stmgr_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.statemgr import StateManager

log = logging.getLogger(__name__)

INSTANCE_HWM = 64
PEER_HWM = 256
_STATE_WAIT_S = 60.0


@dataclass(frozen=True)
class StMgrArgs:
    topology_name: str
    topology_id: str
    cluster: str
    container: int
    working_dir: Path
    local_endpoint: str
    host: str = "127.0.0.1"

    @property
    def stmgr_id(self) -> str:
        return f"stmgr-{self.container}"


def _wait_for(what: str, fetch: Any, deadline_s: float) -> Any:
    end = time.monotonic() + deadline_s
    while True:
        value = fetch()
        if value is not None:
            return value
        if time.monotonic() > end:
            raise HeronError(f"{what} did not appear in the state manager within {deadline_s:.0f}s")
        time.sleep(0.1)


class StreamManager:
    """The daemon; :meth:`run` returns the process exit status."""

    def __init__(self, args: StMgrArgs, state: StateManager, clock: Any = time.monotonic) -> None:
        self.args = args
        self.state = state
        self._clock = clock
        self._stop = False
        self._zmq = zmq.Context()
        self._poller = zmq.Poller()
        self._queues: dict[zmq.Socket[bytes], deque[Sequence[bytes]]] = {}
        self._pplan: physical_plan_pb2.PhysicalPlan | None = None
        self._task_socket: dict[int, zmq.Socket[bytes]] = {}
        self._socket_task: dict[zmq.Socket[bytes], int] = {}
        self._remote_socket: dict[int, zmq.Socket[bytes]] = {}
        self._peers: dict[str, tuple[str, zmq.Socket[bytes]]] = {}
        self._registered: dict[int, int] = {}
        self._metrics: dict[int, metrics_pb2.MetricPublisherPublishMessage] = {}
        self._tmanager: zmq.Socket[bytes] | None = None
        self._tmanager_location: tmanager_pb2.TManagerLocation | None = None
        self._registered_with_tmanager = False
        self._events: queue.SimpleQueue[tmanager_pb2.TManagerLocation | None] = queue.SimpleQueue()
        self.unroutable = 0
        self._instance_dispatch = Dispatcher(f"{args.stmgr_id} (instances)")
        self._instance_dispatch.register(stmgr_pb2.RegisterInstanceRequest, self._on_register)
        self._instance_dispatch.register(
            metrics_pb2.MetricPublisherPublishMessage, self._on_instance_metrics
        )
        self._tmanager_dispatch = Dispatcher(f"{args.stmgr_id} (tmanager)")
        self._tmanager_dispatch.register(tmanager_pb2.StMgrRegisterResponse, self._on_registered)
        self._tmanager_dispatch.register(tmanager_pb2.NewPhysicalPlanMessage, self._on_new_pplan)
        self._tmanager_dispatch.register(tmanager_pb2.StMgrHeartbeatResponse, self._on_heartbeat)
        self._peer_dispatch = Dispatcher(f"{args.stmgr_id} (peers)")
        self._peer_dispatch.register(stmgr_pb2.StrMgrHelloRequest, self._on_hello)

    # --- set-up ------------------------------------------------------------------------------
    def _load(self) -> None:
        name = self.args.topology_name
        topology: topology_pb2.Topology = _wait_for(
            f"topology {name!r}", lambda: self.state.get_topology(name), _STATE_WAIT_S
        )
        packing: packing_plan_pb2.PackingPlan = _wait_for(
            f"packing plan of {name!r}", lambda: self.state.get_packing_plan(name), _STATE_WAIT_S
        )
        self.config = config_from_proto(topology.topology_config)
        mine = [c for c in packing.containers if c.id == self.args.container]
        if not mine:
            raise HeronError(
                f"topology {name!r}: container {self.args.container} is not in the plan"
            )
        self.local_instances = [
            physical_plan_pb2.Instance(
                instance_id=f"container_{self.args.container}_{i.component_name}_{i.task_id}",
                stmgr_id=self.args.stmgr_id,
                info=physical_plan_pb2.InstanceInfo(
                    task_id=i.task_id,
                    component_index=i.component_index,
                    component_name=i.component_name,
                ),
            )
            for i in mine[0].instances
        ]

    def _bind(self) -> None:
        for instance in self.local_instances:
            task = instance.info.task_id
            sock = self._zmq.socket(zmq.DEALER)
            sock.setsockopt(zmq.SNDHWM, INSTANCE_HWM)
            sock.setsockopt(zmq.RCVHWM, INSTANCE_HWM)
            sock.setsockopt(zmq.LINGER, 0)
            sock.bind(f"{self.args.local_endpoint}task-{task}")
            self._task_socket[task] = sock
            self._socket_task[sock] = task
            self._queues[sock] = deque()
            self._poller.register(sock, zmq.POLLIN)
        self._server = self._zmq.socket(zmq.PULL)
        self._server.setsockopt(zmq.RCVHWM, PEER_HWM)
        self._server.setsockopt(zmq.LINGER, 0)
        self.data_port = self._server.bind_to_random_port(f"tcp://{self.args.host}")
        self._poller.register(self._server, zmq.POLLIN)
        log.info(
            "%s bound %d instance sockets and data port %d",
            self.args.stmgr_id,
            len(self._task_socket),
            self.data_port,
        )

    def _record(self) -> physical_plan_pb2.StMgr:
        return physical_plan_pb2.StMgr(
            id=self.args.stmgr_id,
            container_id=self.args.container,
            host_name=self.args.host,
            data_port=self.data_port,
            local_endpoint=self.args.local_endpoint,
            cwd=str(self.args.working_dir),
            pid=os.getpid(),
        )

    # --- sending -----------------------------------------------------------------------------
    def _send(self, sock: zmq.Socket[bytes], frames: Sequence[bytes]) -> None:
        pending = self._queues[sock]
        if pending:
            pending.append(frames)
            return
        try:
            sock.send_multipart(frames, zmq.NOBLOCK, copy=False)
        except zmq.Again:
            pending.append(frames)
            self._poller.modify(sock, self._poll_flags(sock) | zmq.POLLOUT)

    def _poll_flags(self, sock: zmq.Socket[bytes]) -> int:
        return 0 if sock in self._peer_sockets() else zmq.POLLIN

    def _peer_sockets(self) -> set[zmq.Socket[bytes]]:
        return {s for _, s in self._peers.values()}

    def _drain(self, sock: zmq.Socket[bytes]) -> None:
        pending = self._queues[sock]
        while pending:
            try:
                sock.send_multipart(pending[0], zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            pending.popleft()
        flags = self._poll_flags(sock)
        if flags:
            self._poller.modify(sock, flags)
        else:
            self._poller.unregister(sock)

    def _send_to_instance(self, task: int, message: Any) -> None:
        self._send(self._task_socket[task], encode(message))

    def _send_to_tmanager(self, message: Any) -> None:
        if self._tmanager is not None:
            self._tmanager.send_multipart(encode(message))

    # --- data --------------------------------------------------------------------------------
    def _route(self, frames: Sequence[bytes]) -> None:
        task = unpack_task(frames[1])
        sock = self._task_socket.get(task) or self._remote_socket.get(task)
        if sock is None:
            self.unroutable += 1
            if self.unroutable == 1 or self.unroutable % 10000 == 0:
                log.error(
                    "%s: no route to task %d (%d so far)", self.args.stmgr_id, task, self.unroutable
                )
            return
        if sock in self._peer_sockets() and not self._queues[sock]:
            try:
                sock.send_multipart(frames, zmq.NOBLOCK, copy=False)
                return
            except zmq.Again:
                pass
            self._queues[sock].append(frames)
            self._poller.register(sock, zmq.POLLOUT)
            return
        self._send(sock, frames)

    # --- instances ---------------------------------------------------------------------------
    def _on_register(self, request: stmgr_pb2.RegisterInstanceRequest, task: int) -> None:
        claimed = request.instance.info.task_id
        status = common_pb2.Status(status=common_pb2.OK)
        if claimed != task or request.topology_id != self.args.topology_id:
            status = common_pb2.Status(
                status=common_pb2.NOTOK,
                message=(
                    f"task {claimed} of {request.topology_id} on the socket of task {task}"
                ),
            )
            log.error("%s: %s", self.args.stmgr_id, status.message)
        else:
            restarted = task in self._registered
            self._registered[task] = request.pid
            log.info(
                "%s: instance task %d registered (pid %d%s)",
                self.args.stmgr_id,
                task,
                request.pid,
                ", a restart" if restarted else "",
            )
        response = stmgr_pb2.RegisterInstanceResponse(status=status)
        if self._pplan is not None:
            response.pplan.CopyFrom(self._pplan)
        self._send_to_instance(task, response)
        self._maybe_register_with_tmanager()

    def _on_instance_metrics(
        self, message: metrics_pb2.MetricPublisherPublishMessage, task: int
    ) -> None:
        self._metrics[task] = message

    # --- tmanager ----------------------------------------------------------------------------
    def _on_tmanager_location(self, location: tmanager_pb2.TManagerLocation | None) -> None:
        if location is not None and location == self._tmanager_location:
            return
        if self._tmanager is not None:
            self._poller.unregister(self._tmanager)
            self._tmanager.close(linger=0)
            self._tmanager = None
        self._tmanager_location = location
        self._registered_with_tmanager = False
        if location is None:
            log.info("%s: the tmanager location is gone; waiting for a new one", self.args.stmgr_id)
            return
        endpoint = f"tcp://{location.host}:{location.server_port}"
        self._tmanager = self._zmq.socket(zmq.DEALER)
        self._tmanager.setsockopt(zmq.LINGER, 0)
        self._tmanager.connect(endpoint)
        self._poller.register(self._tmanager, zmq.POLLIN)
        log.info("%s: tmanager at %s", self.args.stmgr_id, endpoint)
        self._maybe_register_with_tmanager()

    def _maybe_register_with_tmanager(self) -> None:
        if (
            self._tmanager is None
            or self._registered_with_tmanager
            or len(self._registered) < len(self.local_instances)
        ):
            return
        request = tmanager_pb2.StMgrRegisterRequest(stmgr=self._record())
        request.instances.extend(self.local_instances)
        self._send_to_tmanager(request)
        self._registered_with_tmanager = True
        log.info(
            "%s: all %d instances registered; registering with the tmanager",
            self.args.stmgr_id,
            len(self.local_instances),
        )

    def _on_registered(self, response: tmanager_pb2.StMgrRegisterResponse) -> None:
        if response.status.status != common_pb2.OK:
            raise HeronError(
                f"{self.args.stmgr_id}: the tmanager refused the registration: "
                f"{common_pb2.StatusCode.Name(response.status.status)} {response.status.message}"
            )
        if response.HasField("pplan"):
            self._apply_pplan(response.pplan)

    def _on_heartbeat(self, response: tmanager_pb2.StMgrHeartbeatResponse) -> None:
        if response.status.status != common_pb2.OK:
            log.warning(
                "%s: the tmanager does not know this stmgr (%s); registering again",
                self.args.stmgr_id,
                response.status.message,
            )
            self._registered_with_tmanager = False
            self._maybe_register_with_tmanager()

    def _on_new_pplan(self, message: tmanager_pb2.NewPhysicalPlanMessage) -> None:
        self._apply_pplan(message.new_pplan)

    def _apply_pplan(self, pplan: physical_plan_pb2.PhysicalPlan) -> None:
        self._pplan = pplan
        wanted = {
            s.id: f"tcp://{s.host_name}:{s.data_port}"
            for s in pplan.stmgrs
            if s.id != self.args.stmgr_id
        }
        for peer_id, (endpoint, sock) in list(self._peers.items()):
            if wanted.get(peer_id) != endpoint:
                if self._queues.pop(sock, None):
                    self._poller.unregister(sock)
                sock.close(linger=0)
                del self._peers[peer_id]
        for peer_id, endpoint in wanted.items():
            if peer_id not in self._peers:
                sock = self._zmq.socket(zmq.PUSH)
                sock.setsockopt(zmq.SNDHWM, PEER_HWM)
                sock.setsockopt(zmq.LINGER, 0)
                sock.connect(endpoint)
                self._peers[peer_id] = (endpoint, sock)
                self._queues[sock] = deque()
                sock.send_multipart(
                    encode(
                        stmgr_pb2.StrMgrHelloRequest(
                            topology_name=self.args.topology_name,
                            topology_id=self.args.topology_id,
                            stmgr=self.args.stmgr_id,
                        )
                    )
                )
        self._remote_socket = {
            i.info.task_id: self._peers[i.stmgr_id][1]
            for i in pplan.instances
            if i.stmgr_id != self.args.stmgr_id and i.stmgr_id in self._peers
        }
        log.info(
            "%s: physical plan with %d stmgrs and %d instances",
            self.args.stmgr_id,
            len(pplan.stmgrs),
            len(pplan.instances),
        )
        assignment = stmgr_pb2.NewInstanceAssignmentMessage(pplan=pplan)
        for task in self._registered:
            self._send_to_instance(task, assignment)

    def _on_hello(self, hello: stmgr_pb2.StrMgrHelloRequest) -> None:
        log.info("%s: hello from %s", self.args.stmgr_id, hello.stmgr)

    # --- loop --------------------------------------------------------------------------------
    def stop(self, signum: int = 0, frame: FrameType | None = None) -> None:
        self._stop = True

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        try:
            self._load()
            self._bind()
            watch = self.state.watch("tmanagers", self.args.topology_name, self._events.put)
            try:
                self._loop()
            finally:
                watch.cancel()
            return 0
        except HeronError as exc:
            log.error("%s", exc)
            return 1
        finally:
            for sock in list(self._queues) + [s for _, s in self._peers.values()]:
                sock.close(linger=0)
            if hasattr(self, "_server"):
                self._server.close(linger=0)
            if self._tmanager is not None:
                self._tmanager.close(linger=0)
            self._zmq.term()

    def _loop(self) -> None:
        heartbeat_s = float(self.config.get("heron.streammgr.tmanager.heartbeat.interval.sec", 10))
        metrics_s = float(self.config.get("heron.metrics.export.interval.sec", 1.0))
        now = self._clock()
        next_heartbeat = now + heartbeat_s
        next_metrics = now + metrics_s
        route = self._route
        server = self._server
        while not self._stop:
            while not self._events.empty():
                self._on_tmanager_location(self._events.get())
            for sock, event in self._poller.poll(50):
                if event & zmq.POLLOUT:
                    self._drain(sock)
                if not event & zmq.POLLIN:
                    continue
                if sock is server:
                    for _ in range(256):
                        try:
                            frames = sock.recv_multipart(zmq.NOBLOCK)
                        except zmq.Again:
                            break
                        if frames[0] == DATA:
                            route(frames)
                        else:
                            self._peer_dispatch.dispatch(frames)
                elif sock is self._tmanager and self._tmanager is not None:
                    self._tmanager_dispatch.dispatch(self._tmanager.recv_multipart())
                else:
                    task = self._socket_task[sock]
                    for _ in range(64):
                        try:
                            frames = sock.recv_multipart(zmq.NOBLOCK)
                        except zmq.Again:
                            break
                        if frames[0] == DATA:
                            route(frames)
                        else:
                            self._instance_dispatch.dispatch(frames, task)
            now = self._clock()
            if now >= next_heartbeat:
                next_heartbeat = now + heartbeat_s
                if self._registered_with_tmanager:
                    self._send_to_tmanager(
                        tmanager_pb2.StMgrHeartbeatRequest(
                            stmgr_id=self.args.stmgr_id, heartbeat_time=int(time.time() * 1000)
                        )
                    )
            if now >= next_metrics:
                next_metrics = now + metrics_s
                if self._registered_with_tmanager and self._metrics:
                    self._send_to_tmanager(
                        tmanager_pb2.PublishMetrics(messages=list(self._metrics.values()))
                    )
