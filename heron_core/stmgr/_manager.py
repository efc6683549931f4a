"""The Stream Manager: routes every tuple batch of its container.

One zmq loop serves: one DEALER socket per local task (``<prefix>task-<T>``, ipc), one PULL
socket for the metrics of every local task (``<prefix>metrics``, ipc, always read: a spout's
metrics must not wait behind its data while its task socket is not read), a PULL socket on a tcp
port for batches from peer stream managers, one PUSH socket per peer, and a DEALER to the
topology manager. A data message's destination task is read from its second frame and the
payload is forwarded untouched: user values are never deserialized here. Acking entries are
routed the same way, by spout task, to the stream manager that tracks that spout's trees
(:mod:`heron_core.stmgr._trees`).

A socket that cannot take a message now gets it queued in its outbox, in order; nothing is
dropped. When an outbox holds more than the high watermark, this stream manager is in back
pressure: it tells every peer, and every stream manager stops reading its local spouts until no
outbox anywhere is above the low watermark.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import struct
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import zmq
from google.protobuf.message import DecodeError

from heron_core.config.codec import config_from_proto
from heron_core.errors import HeronError
from heron_core.network import (
    ACKS,
    DATA,
    Dispatcher,
    ProtocolError,
    Transport,
    encode,
    metrics_endpoint,
    task_endpoint,
    unpack_task,
)
from heron_core.proto import (
    common_pb2,
    metrics_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    stmgr_pb2,
    tmanager_pb2,
    topology_pb2,
    tuple_pb2,
)
from heron_core.statemgr import StateManager
from heron_core.stmgr._trees import TreeTracker

log = logging.getLogger(__name__)

INSTANCE_HWM = 16
PEER_HWM = 64
_STATE_WAIT_S = 60.0
_MB = 1 << 20
STMGR_COMPONENT = "__stmgr__"


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


def _wait_for(what: str, fetch: Callable[[], Any], deadline_s: float) -> Any:
    end = time.monotonic() + deadline_s
    while True:
        value = fetch()
        if value is not None:
            return value
        if time.monotonic() > end:
            raise HeronError(f"{what} did not appear in the state manager within {deadline_s:.0f}s")
        time.sleep(0.1)


class _Outbox:
    """One outgoing socket and the frames it could not take yet."""

    __slots__ = ("frames", "name", "polled", "queued_bytes", "readable", "socket")

    def __init__(self, socket: zmq.Socket[bytes], name: str, readable: bool) -> None:
        self.socket = socket
        self.name = name
        self.readable = readable  # poll it for input (instances; not spouts under back pressure)
        self.frames: deque[Sequence[bytes]] = deque()
        self.queued_bytes = 0
        self.polled = 0  # the zmq poll flags it is registered with


class StreamManager:
    """The daemon; :meth:`run` returns the process exit status."""

    def __init__(self, args: StMgrArgs, state: StateManager, clock: Any = time.monotonic) -> None:
        self.args = args
        self.state = state
        self._clock = clock
        self._stop = False
        self._zmq = zmq.Context()
        self._poller = zmq.Poller()
        self._pplan: physical_plan_pb2.PhysicalPlan | None = None
        self._task_box: dict[int, _Outbox] = {}
        self._socket_task: dict[zmq.Socket[bytes], int] = {}
        self._boxes: dict[zmq.Socket[bytes], _Outbox] = {}
        self._remote_box: dict[int, _Outbox] = {}
        self._peers: dict[str, tuple[str, _Outbox]] = {}
        self._registered: dict[int, int] = {}
        self._metrics: dict[int, metrics_pb2.MetricPublisherPublishMessage] = {}
        self._tmanager: zmq.Socket[bytes] | None = None
        self._tmanager_location: tmanager_pb2.TManagerLocation | None = None
        self._registered_with_tmanager = False
        self._events: queue.SimpleQueue[tmanager_pb2.TManagerLocation | None] = queue.SimpleQueue()
        self._trees = TreeTracker()
        self._spout_tasks: set[int] = set()
        self._bp_causes: set[str] = set()
        self._bp_remote: set[str] = set()
        self._bp_since: float | None = None
        self._bp_total_s = 0.0
        self.unroutable = 0
        self.trees_expired = 0
        self._instance_dispatch = Dispatcher(f"{args.stmgr_id} (instances)")
        self._instance_dispatch.register(stmgr_pb2.RegisterInstanceRequest, self._on_register)
        self._instance_dispatch.register(
            metrics_pb2.MetricPublisherPublishMessage, self._on_instance_metrics
        )
        self._metrics_dispatch = Dispatcher(f"{args.stmgr_id} (metrics)")
        self._metrics_dispatch.register(
            metrics_pb2.MetricPublisherPublishMessage, self._on_published_metrics
        )
        self._metrics_in: zmq.Socket[bytes] | None = None
        self._transport: Transport | None = None
        self._tmanager_dispatch = Dispatcher(f"{args.stmgr_id} (tmanager)")
        self._tmanager_dispatch.register(tmanager_pb2.StMgrRegisterResponse, self._on_registered)
        self._tmanager_dispatch.register(tmanager_pb2.NewPhysicalPlanMessage, self._on_new_pplan)
        self._tmanager_dispatch.register(tmanager_pb2.StMgrHeartbeatResponse, self._on_heartbeat)
        self._peer_dispatch = Dispatcher(f"{args.stmgr_id} (peers)")
        self._peer_dispatch.register(stmgr_pb2.StrMgrHelloRequest, self._on_hello)
        self._peer_dispatch.register(stmgr_pb2.StartBackPressureMessage, self._on_peer_bp_start)
        self._peer_dispatch.register(stmgr_pb2.StopBackPressureMessage, self._on_peer_bp_stop)

    # --- set-up ------------------------------------------------------------------------------
    @property
    def _secured(self) -> Transport:
        """The transport of the TCP sockets (made when the topology config is loaded)."""
        if self._transport is None:
            raise HeronError(f"{self.args.stmgr_id}: a TCP socket before the topology was loaded")
        return self._transport

    def _load(self) -> None:
        name = self.args.topology_name
        topology: topology_pb2.Topology = _wait_for(
            f"topology {name!r}", lambda: self.state.get_topology(name), _STATE_WAIT_S
        )
        packing: packing_plan_pb2.PackingPlan = _wait_for(
            f"packing plan of {name!r}", lambda: self.state.get_packing_plan(name), _STATE_WAIT_S
        )
        self.config = config_from_proto(topology.topology_config)
        self._high_bytes = int(
            self.config.get("heron.streammgr.network.backpressure.highwatermark.mb", 100) * _MB
        )
        self._low_bytes = int(
            self.config.get("heron.streammgr.network.backpressure.lowwatermark.mb", 50) * _MB
        )
        self._trees = TreeTracker(
            int(self.config.get("heron.streammgr.xormgr.rotatingmap.nbuckets", 3))
        )
        self._transport = Transport.for_topology(
            self._zmq, self.config, self.args.working_dir, f"topology {name!r} {self.args.stmgr_id}"
        )
        mine = [c for c in packing.containers if c.id == self.args.container]
        if not mine:
            raise HeronError(
                f"topology {name!r}: container {self.args.container} is not in the packing plan"
            )
        spouts = {s.comp.name for s in topology.spouts}
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
        self._instance_task = {i.instance_id: i.info.task_id for i in self.local_instances}
        self._spout_tasks = {
            i.info.task_id for i in self.local_instances if i.info.component_name in spouts
        }

    def _bind(self) -> None:
        for instance in self.local_instances:
            task = instance.info.task_id
            sock = self._zmq.socket(zmq.DEALER)
            sock.setsockopt(zmq.SNDHWM, INSTANCE_HWM)
            sock.setsockopt(zmq.RCVHWM, INSTANCE_HWM)
            sock.setsockopt(zmq.LINGER, 0)
            sock.bind(task_endpoint(self.args.local_endpoint, task))
            box = _Outbox(sock, instance.instance_id, readable=True)
            self._task_box[task] = box
            self._socket_task[sock] = task
            self._boxes[sock] = box
            self._update_poll(box)
        self._metrics_in = self._zmq.socket(zmq.PULL)
        self._metrics_in.setsockopt(zmq.LINGER, 0)
        self._metrics_in.bind(metrics_endpoint(self.args.local_endpoint))
        self._poller.register(self._metrics_in, zmq.POLLIN)
        self._server = self._secured.server(self._zmq.socket(zmq.PULL), "data port")
        self._server.setsockopt(zmq.RCVHWM, PEER_HWM)
        self._server.setsockopt(zmq.LINGER, 0)
        self.data_port = self._server.bind_to_random_port(f"tcp://{self.args.host}")
        self._poller.register(self._server, zmq.POLLIN)
        log.info(
            "%s bound %d instance sockets and data port %d",
            self.args.stmgr_id,
            len(self._task_box),
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

    # --- sending and back pressure -------------------------------------------------------------
    def _update_poll(self, box: _Outbox) -> None:
        flags = (zmq.POLLIN if box.readable else 0) | (zmq.POLLOUT if box.frames else 0)
        if flags == box.polled:
            return
        if not flags:
            self._poller.unregister(box.socket)
        elif not box.polled:
            self._poller.register(box.socket, flags)
        else:
            self._poller.modify(box.socket, flags)
        box.polled = flags

    def _send(self, box: _Outbox, frames: Sequence[bytes]) -> None:
        if not box.frames:
            try:
                box.socket.send_multipart(frames, zmq.NOBLOCK, copy=False)
                return
            except zmq.Again:
                pass
        box.frames.append(frames)
        box.queued_bytes += len(frames[-1])
        if len(box.frames) == 1:
            self._update_poll(box)
        if box.queued_bytes > self._high_bytes and box.name not in self._bp_causes:
            self._bp_causes.add(box.name)
            log.info(
                "%s: back pressure: %d bytes queued for %s",
                self.args.stmgr_id,
                box.queued_bytes,
                box.name,
            )
            if len(self._bp_causes) == 1:
                self._announce_back_pressure(True)
            self._throttle_spouts()

    def _drain(self, box: _Outbox) -> None:
        frames = box.frames
        while frames:
            try:
                box.socket.send_multipart(frames[0], zmq.NOBLOCK, copy=False)
            except zmq.Again:
                break
            box.queued_bytes -= len(frames.popleft()[-1])
        if not frames:
            self._update_poll(box)
        if box.queued_bytes < self._low_bytes and box.name in self._bp_causes:
            self._bp_causes.discard(box.name)
            if not self._bp_causes:
                log.info("%s: back pressure relieved", self.args.stmgr_id)
                self._announce_back_pressure(False)
            self._throttle_spouts()

    def _announce_back_pressure(self, start: bool) -> None:
        cls = stmgr_pb2.StartBackPressureMessage if start else stmgr_pb2.StopBackPressureMessage
        message = cls(
            topology_name=self.args.topology_name,
            topology_id=self.args.topology_id,
            stmgr=self.args.stmgr_id,
            message_id=uuid.uuid4().hex,
        )
        for _, box in self._peers.values():
            # control goes ahead of any queued data, so it is never stuck behind the backlog
            frames = encode(message)
            try:
                box.socket.send_multipart(frames, zmq.NOBLOCK)
            except zmq.Again:
                box.frames.appendleft(frames)
                box.queued_bytes += len(frames[-1])
                self._update_poll(box)

    def _throttle_spouts(self) -> None:
        throttled = bool(self._bp_causes or self._bp_remote)
        now = self._clock()
        if throttled and self._bp_since is None:
            self._bp_since = now
        elif not throttled and self._bp_since is not None:
            self._bp_total_s += now - self._bp_since
            self._bp_since = None
        for task in self._spout_tasks:
            box = self._task_box[task]
            box.readable = not throttled
            self._update_poll(box)

    def _back_pressure_ms(self) -> int:
        ongoing = self._clock() - self._bp_since if self._bp_since is not None else 0.0
        return int((self._bp_total_s + ongoing) * 1000)

    def _on_peer_bp_start(self, message: stmgr_pb2.StartBackPressureMessage) -> None:
        self._bp_remote.add(message.stmgr)
        self._throttle_spouts()

    def _on_peer_bp_stop(self, message: stmgr_pb2.StopBackPressureMessage) -> None:
        self._bp_remote.discard(message.stmgr)
        self._throttle_spouts()

    def _send_to_instance(self, task: int, message: Any) -> None:
        self._send(self._task_box[task], encode(message))

    def _send_to_tmanager(self, message: Any) -> None:
        if self._tmanager is not None:
            self._tmanager.send_multipart(encode(message))

    # --- data and acks -------------------------------------------------------------------------
    def _no_route(self, task: int, what: str) -> None:
        self.unroutable += 1
        if self.unroutable == 1 or self.unroutable % 10000 == 0:
            log.error(
                "%s: no route for %s to task %d (%d so far)",
                self.args.stmgr_id,
                what,
                task,
                self.unroutable,
            )

    def _route(self, frames: Sequence[bytes]) -> None:
        task = unpack_task(frames[1])
        box = self._task_box.get(task) or self._remote_box.get(task)
        if box is None:
            self._no_route(task, "a tuple batch")
        else:
            self._send(box, frames)

    def _route_acks(self, frames: Sequence[bytes]) -> None:
        task = unpack_task(frames[1])
        if task in self._spout_tasks:
            self._trees.apply(tuple_pb2.AckBatch.FromString(frames[2]))
            return
        box = self._remote_box.get(task)
        if box is None:
            self._no_route(task, "acks")
        else:
            self._send(box, frames)

    def _deliver_outcomes(self) -> None:
        for task, out in self._trees.take_outcomes().items():
            self._send_to_instance(
                task,
                tuple_pb2.SpoutAckBatch(
                    spout_task=task, acked=out.acked, failed=out.failed, reset=out.reset
                ),
            )

    # --- instances ---------------------------------------------------------------------------
    def _on_register(self, request: stmgr_pb2.RegisterInstanceRequest, task: int) -> None:
        claimed = request.instance.info.task_id
        status = common_pb2.Status(status=common_pb2.OK)
        if claimed != task or request.topology_id != self.args.topology_id:
            status = common_pb2.Status(
                status=common_pb2.NOTOK,
                message=f"task {claimed} of {request.topology_id} on the socket of task {task}",
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
        held = self._metrics.get(task)
        if held is None or held.timestamp <= message.timestamp:
            self._metrics[task] = message

    def _on_published_metrics(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        task = self._instance_task.get(message.publisher.instance_id)
        if task is None:
            log.warning(
                "%s: metrics from %r, not an instance of this container; dropped",
                self.args.stmgr_id,
                message.publisher.instance_id,
            )
            return
        self._on_instance_metrics(message, task)

    def _read_metrics(self, sock: zmq.Socket[bytes]) -> None:
        for _ in range(64):
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                self._metrics_dispatch.dispatch(frames)
            except ProtocolError as exc:
                log.warning("%s: unreadable metrics message dropped: %s", self.args.stmgr_id, exc)

    def _own_metrics(self) -> metrics_pb2.MetricPublisherPublishMessage:
        message = metrics_pb2.MetricPublisherPublishMessage(
            publisher=metrics_pb2.MetricPublisher(
                component_name=STMGR_COMPONENT, instance_id=self.args.stmgr_id
            ),
            timestamp=int(time.time() * 1000),
        )
        for name, value in (
            ("__time_spent_back_pressure_ms", self._back_pressure_ms()),
            ("__back_pressure_active", int(self._bp_since is not None)),
            ("__queued_bytes", sum(b.queued_bytes for b in self._boxes.values())),
            ("__trees_tracked", len(self._trees)),
            ("__trees_expired", self.trees_expired),
            ("__unroutable", self.unroutable),
        ):
            message.metrics.add(name=name, value=str(value))
        return message

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
        self._tmanager = self._secured.client(self._zmq.socket(zmq.DEALER))
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

    def _close_box(self, box: _Outbox) -> None:
        if box.polled:
            self._poller.unregister(box.socket)
        self._boxes.pop(box.socket, None)
        self._bp_causes.discard(box.name)
        box.socket.close(linger=0)

    def _apply_pplan(self, pplan: physical_plan_pb2.PhysicalPlan) -> None:
        if pplan == self._pplan:
            return
        self._pplan = pplan
        wanted = {
            s.id: f"tcp://{s.host_name}:{s.data_port}"
            for s in pplan.stmgrs
            if s.id != self.args.stmgr_id
        }
        for peer_id, (endpoint, box) in list(self._peers.items()):
            if wanted.get(peer_id) != endpoint:
                self._close_box(box)
                self._bp_remote.discard(peer_id)
                del self._peers[peer_id]
        for peer_id, endpoint in wanted.items():
            if peer_id not in self._peers:
                sock = self._secured.client(self._zmq.socket(zmq.PUSH))
                sock.setsockopt(zmq.SNDHWM, PEER_HWM)
                sock.setsockopt(zmq.LINGER, 0)
                sock.connect(endpoint)
                box = _Outbox(sock, peer_id, readable=False)
                self._peers[peer_id] = (endpoint, box)
                self._boxes[sock] = box
                hello = stmgr_pb2.StrMgrHelloRequest(
                    topology_name=self.args.topology_name,
                    topology_id=self.args.topology_id,
                    stmgr=self.args.stmgr_id,
                )
                self._send(box, encode(hello))
                if self._bp_causes:  # a (re)connected peer must hear we are in back pressure
                    self._announce_back_pressure(True)
        self._throttle_spouts()
        self._remote_box = {
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
            for box in list(self._boxes.values()):
                box.socket.close(linger=0)
            if hasattr(self, "_server"):
                self._server.close(linger=0)
            if self._metrics_in is not None:
                self._metrics_in.close(linger=0)
            if self._tmanager is not None:
                self._tmanager.close(linger=0)
            if self._transport is not None:
                self._transport.close()
            self._zmq.term()

    def _read_burst(self, sock: zmq.Socket[bytes], limit: int, task: int | None) -> None:
        route, route_acks = self._route, self._route_acks
        for _ in range(limit):
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                kind = frames[0]
                if kind == DATA:
                    route(frames)
                elif kind == ACKS:
                    route_acks(frames)
                elif task is None:
                    self._peer_dispatch.dispatch(frames)
                else:
                    self._instance_dispatch.dispatch(frames, task)
            except (ProtocolError, DecodeError, struct.error, IndexError) as exc:
                source = "a peer stream manager" if task is None else f"task {task}"
                log.warning(
                    "%s: dropped a malformed message of %d frames from %s: %s",
                    self.args.stmgr_id,
                    len(frames),
                    source,
                    exc,
                )

    def _loop(self) -> None:
        heartbeat_s = float(self.config.get("heron.streammgr.tmanager.heartbeat.interval.sec", 10))
        metrics_s = float(self.config.get("heron.metrics.export.interval.sec", 1.0))
        nbuckets = int(self.config.get("heron.streammgr.xormgr.rotatingmap.nbuckets", 3))
        rotate_s = float(self.config.get("topology.message.timeout.secs", 30)) / (nbuckets - 1)
        now = self._clock()
        next_heartbeat = now + heartbeat_s
        next_metrics = now + metrics_s
        next_rotation = now + rotate_s
        server = self._server
        boxes = self._boxes
        socket_task = self._socket_task
        while not self._stop:
            while not self._events.empty():
                self._on_tmanager_location(self._events.get())
            for sock, event in self._poller.poll(50):
                if event & zmq.POLLOUT:
                    self._drain(boxes[sock])
                if not event & zmq.POLLIN:
                    continue
                if sock is server:
                    self._read_burst(sock, 256, None)
                elif sock is self._tmanager and self._tmanager is not None:
                    self._tmanager_dispatch.dispatch(self._tmanager.recv_multipart())
                elif self._metrics_in is not None and sock is self._metrics_in:
                    self._read_metrics(self._metrics_in)
                else:
                    self._read_burst(sock, 64, socket_task[sock])
            self._deliver_outcomes()
            now = self._clock()
            if now >= next_rotation:
                self.trees_expired += self._trees.rotate()
                next_rotation = now + rotate_s
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
                if self._registered_with_tmanager:
                    messages = [*self._metrics.values(), self._own_metrics()]
                    self._send_to_tmanager(tmanager_pb2.PublishMetrics(messages=messages))
