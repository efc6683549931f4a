"""The Stream Manager: routes every tuple batch of its container.

One zmq loop serves every peer of the stream manager, each in its own module: the local
instances (:mod:`~heron_core.stmgr._instances`, one DEALER per task, ipc), the other stream
managers (:mod:`~heron_core.stmgr._peers`, a PULL on a tcp port and a PUSH per peer), the
topology manager (:mod:`~heron_core.stmgr._tmanager`, a DEALER) and the container's metrics
manager (:mod:`~heron_core.stmgr._metrics`, a PUSH of this stream manager's own metrics). A data
message's destination task is read from its second frame and the payload is forwarded
untouched: user values are never deserialized here. Acking entries are routed the same way, by
spout task, to the stream manager that tracks that spout's trees
(:mod:`~heron_core.stmgr._trees`).

A socket that cannot take a message now gets it queued in its outbox, in order; nothing is
dropped (:mod:`~heron_core.stmgr._outbox`). When an outbox holds more than the high watermark,
this stream manager is in back pressure: it tells every peer, and every stream manager stops
reading its local spouts until no outbox anywhere is above the low watermark (the decisions are
:class:`~heron_core.stmgr._backpressure.BackPressure`'s).
"""

from __future__ import annotations

import logging
import os
import signal
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import zmq
from google.protobuf.message import DecodeError

from heron_core.ckptmgr import CheckpointManager, checkpoint_seal, create_state_store
from heron_core.config.codec import config_from_proto
from heron_core.errors import HeronError
from heron_core.network import (
    ACKS,
    DATA,
    DEFAULT_MAX_FRAME_BYTES,
    ProtocolError,
    Transport,
    check_frames,
    metrics_endpoint,
    unpack_task,
)
from heron_core.proto import (
    ckptmgr_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    tmanager_pb2,
    topology_pb2,
    tuple_pb2,
)
from heron_core.statemgr import StateManager
from heron_core.stmgr._backpressure import BackPressure, Transition
from heron_core.stmgr._instances import Instances
from heron_core.stmgr._metrics import StMgrMetrics
from heron_core.stmgr._outbox import Outboxes
from heron_core.stmgr._peers import Peers
from heron_core.stmgr._stateful import StatefulStMgr
from heron_core.stmgr._tmanager import TManagerLink
from heron_core.stmgr._trees import TreeTracker

__all__ = ["StMgrArgs", "StreamManager"]

log = logging.getLogger(__name__)

_STATE_WAIT_S = 60.0
_MB = 1 << 20
_LOGGED_MALFORMED = 100
"""Malformed messages logged one by one; after that every thousandth (a flood of garbage
must not fill the disk)."""


@dataclass(frozen=True)
class StMgrArgs:
    """The command line of one stream manager (``python -m heron_core.stmgr``)."""

    topology_name: str
    topology_id: str
    cluster: str
    container: int
    working_dir: Path
    local_endpoint: str
    host: str = "127.0.0.1"
    shell_port: int = 0  # the container's shell (its metrics manager), for the physical plan

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


class StreamManager:
    """The daemon; :meth:`run` returns the process exit status.

    Args:
        args: its command line.
        state: a started state manager.
        clock: monotonic seconds (timers, back-pressure time).
        wall_clock: seconds since the epoch (timestamps of heartbeats and metrics).
    """

    # made by _load, from the topology and its packing plan
    config: dict[str, Any]
    local_instances: list[physical_plan_pb2.Instance]
    _bp: BackPressure
    _outboxes: Outboxes
    _instances: Instances
    _peers: Peers
    _metrics: StMgrMetrics

    def __init__(
        self,
        args: StMgrArgs,
        state: StateManager,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.args = args
        self.state = state
        self._clock = clock
        self._wall_clock = wall_clock
        self._stop = False
        self._zmq = zmq.Context()
        self._poller = zmq.Poller()
        self._pplan: physical_plan_pb2.PhysicalPlan | None = None
        self._transport: Transport | None = None
        self._trees = TreeTracker()
        self._tmanager = TManagerLink(
            args.stmgr_id, self._poller, self._registration, self._apply_pplan
        )
        # run in reverse at exit: every socket, then the transport, then the context
        self._closers: list[Callable[[], None]] = [
            self._zmq.term,
            self._close_transport,
            self._tmanager.close,
        ]
        self._stateful: StatefulStMgr | None = None
        self._gates: dict[int, Any] = {}  # local tasks aligning a checkpoint (EFFECTIVELY_ONCE)
        self._gate: Callable[[int, Sequence[bytes]], bool] = lambda task, frames: False
        self.unroutable = 0
        self.malformed = 0
        """Messages dropped because they were not messages of the protocol."""
        self._max_frame = DEFAULT_MAX_FRAME_BYTES

    # --- set-up ------------------------------------------------------------------------------
    @property
    def _secured(self) -> Transport:
        """The transport of the TCP sockets (made when the topology config is loaded)."""
        if self._transport is None:
            raise HeronError(f"{self.args.stmgr_id}: a TCP socket before the topology was loaded")
        return self._transport

    def _close_transport(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def _setting(self, key: str) -> Any:
        """``key`` of the topology config (resolved at submit, so every registered key is
        there; no default here)."""
        try:
            return self.config[key]
        except KeyError:
            raise HeronError(
                f"topology {self.args.topology_name!r}: its config has no {key!r}; it was "
                "submitted by another version of heron_core: kill it and submit it again"
            ) from None

    def _load(self) -> None:
        name = self.args.topology_name
        stmgr_id = self.args.stmgr_id
        topology: topology_pb2.Topology = _wait_for(
            f"topology {name!r}", lambda: self.state.get_topology(name), _STATE_WAIT_S
        )
        packing: packing_plan_pb2.PackingPlan = _wait_for(
            f"packing plan of {name!r}", lambda: self.state.get_packing_plan(name), _STATE_WAIT_S
        )
        self.config = config_from_proto(topology.topology_config)
        high = "heron.streammgr.network.backpressure.highwatermark.mb"
        low = "heron.streammgr.network.backpressure.lowwatermark.mb"
        nbuckets = "heron.streammgr.xormgr.rotatingmap.nbuckets"
        try:
            self._bp = BackPressure(int(self._setting(high) * _MB), int(self._setting(low) * _MB))
            self._trees = TreeTracker(int(self._setting(nbuckets)))
        except ValueError as exc:
            raise HeronError(f"topology {name!r}: config {high}/{low}/{nbuckets}: {exc}") from exc
        self._outboxes = Outboxes(stmgr_id, self._poller, self._bp, self._react)
        self._closers.append(self._outboxes.close_all)
        self._transport = Transport.for_topology(
            self._zmq, self.config, self.args.working_dir, f"topology {name!r} {stmgr_id}"
        )
        self._max_frame = self._transport.max_frame_bytes
        mine = [c for c in packing.containers if c.id == self.args.container]
        if not mine:
            raise HeronError(
                f"topology {name!r}: container {self.args.container} is not in the packing plan"
            )
        spouts = {s.comp.name for s in topology.spouts}
        self.local_instances = [
            physical_plan_pb2.Instance(
                instance_id=f"container_{self.args.container}_{i.component_name}_{i.task_id}",
                stmgr_id=stmgr_id,
                info=physical_plan_pb2.InstanceInfo(
                    task_id=i.task_id,
                    component_index=i.component_index,
                    component_name=i.component_name,
                ),
            )
            for i in mine[0].instances
        ]
        self._instances = Instances(
            stmgr_id,
            self.args.topology_id,
            self.local_instances,
            {i.info.task_id for i in self.local_instances if i.info.component_name in spouts},
            self._outboxes,
            self._tmanager.maybe_register,
        )
        self._peers = Peers(
            stmgr_id,
            name,
            self.args.topology_id,
            self._outboxes,
            self._bp,
            self._react,
        )
        self._closers.append(self._peers.close)
        self._metrics = StMgrMetrics(
            stmgr_id, self.args.host, [i.instance_id for i in self.local_instances]
        )
        self._closers.append(self._metrics.close)
        if self._setting("topology.reliability.mode") == "EFFECTIVELY_ONCE":
            self._make_stateful(spouts)
        # the routing hot path reads these straight (they are updated in place)
        self._task_box = self._instances.task_box
        self._remote_box = self._peers.remote_box
        self._spout_tasks = self._instances.spout_tasks
        self._send = self._outboxes.send

    def _make_stateful(self, spouts: set[str]) -> None:
        """EFFECTIVELY_ONCE: the checkpoint manager, and the handlers of checkpoints and
        rollbacks (`StatefulStMgr`)."""
        name = self.args.topology_name
        checkpoints = CheckpointManager(
            create_state_store(self.config, name), checkpoint_seal(name, self.args.working_dir)
        )
        self._closers.append(checkpoints.close)
        limit_mb = float(self._setting("heron.streammgr.stateful.buffer.size.mb"))
        stateful = StatefulStMgr(
            self.args.stmgr_id,
            [i.info.task_id for i in self.local_instances],
            {i.info.task_id for i in self.local_instances if i.info.component_name in spouts},
            checkpoints,
            self._instances.send,
            self._tmanager.send,
            self._deliver,
            int(limit_mb * _MB),
            self._outboxes.drop_data,
        )
        peers = self._peers
        stateful.connect(
            peers.remote_box.get,
            lambda: list(peers.peers),
            self._outboxes.send,
            lambda peer: peers.peers[peer][1] if peer in peers.peers else None,
        )
        self._instances.on_restarted = stateful.on_instance_restarted
        on_instances = self._instances.dispatcher.register
        on_instances(ckptmgr_pb2.StoreInstanceStateCheckpoint, stateful.on_instance_state)
        on_instances(ckptmgr_pb2.RestoreInstanceStateResponse, stateful.on_instance_restored)
        on_peers = self._peers.dispatcher.register
        on_peers(ckptmgr_pb2.DownstreamStatefulCheckpoint, stateful.on_peer_marker)
        on_peers(ckptmgr_pb2.RestoreBarrier, stateful.on_barrier)
        on_tmanager = self._tmanager.dispatcher.register
        on_tmanager(ckptmgr_pb2.StartStatefulCheckpoint, stateful.on_start_checkpoint)
        on_tmanager(ckptmgr_pb2.RestoreTopologyStateRequest, stateful.on_restore)
        on_tmanager(ckptmgr_pb2.StartStmgrStatefulProcessing, stateful.on_start)
        on_tmanager(ckptmgr_pb2.StatefulConsistentCheckpointSaved, stateful.on_consistent)
        self._stateful = stateful
        self._gates = stateful.gates
        self._gate = stateful.gate

    def _deliver(self, task: int, frames: Sequence[bytes]) -> None:
        """Send a batch on to local ``task`` (past its checkpoint gate)."""
        box = self._task_box[task]
        box.batches += 1
        box.nbytes += len(frames[2])
        self._send(box, frames)

    def _bind(self) -> None:
        self._instances.bind(self._zmq, self.args.local_endpoint)
        self._server = self._peers.bind(self._zmq, self._secured, self.args.host)
        self.data_port = self._peers.data_port
        self._poller.register(self._server, zmq.POLLIN)
        self._metrics.connect(self._zmq, metrics_endpoint(self.args.local_endpoint))
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
            shell_port=self.args.shell_port,
        )

    def _registration(self) -> tmanager_pb2.StMgrRegisterRequest | None:
        """What the tmanager link sends once every local instance has registered here."""
        if not self._instances.all_registered:
            return None
        request = tmanager_pb2.StMgrRegisterRequest(stmgr=self._record())
        request.instances.extend(self.local_instances)
        return request

    # --- back pressure -----------------------------------------------------------------------
    def _react(self, transition: Transition) -> None:
        """Act on what the back-pressure machine decided."""
        if transition.announce is not None:
            if not transition.announce:
                log.info("%s: back pressure relieved", self.args.stmgr_id)
            self._peers.announce(transition.announce)
        if transition.throttle is not None:
            self._instances.throttle(transition.throttle)
        self._metrics.back_pressure(self._bp, self._clock())

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
        if len(frames) != 3:
            raise ProtocolError(f"a tuple batch is 3 frames, got {len(frames)}")
        task = unpack_task(frames[1])
        box = self._task_box.get(task)
        if box is not None and task in self._gates and self._gate(task, frames):
            return
        if box is None:
            box = self._remote_box.get(task)
            if box is not None and len(frames[2]) > self._max_frame:
                # the peer would drop the connection, and every batch queued on it
                self._metrics.batches_lost += 1
                check_frames(frames, self._max_frame, f"a tuple batch for task {task}")
        if box is None:
            self._no_route(task, "a tuple batch")
            self._metrics.batches_lost += 1
        else:
            box.batches += 1
            box.nbytes += len(frames[2])
            self._send(box, frames)

    def _route_acks(self, frames: Sequence[bytes]) -> None:
        if len(frames) != 3:
            raise ProtocolError(f"an ack batch is 3 frames, got {len(frames)}")
        task = unpack_task(frames[1])
        if task in self._spout_tasks:
            self._trees.apply(tuple_pb2.AckBatch.FromString(frames[2]))
            return
        box = self._remote_box.get(task)
        if box is None:
            self._no_route(task, "acks")
            self._metrics.ack_batches_lost += 1
        else:
            box.ack_batches += 1
            self._send(box, frames)

    def _deliver_outcomes(self) -> None:
        outcomes = self._trees.take_outcomes()
        if not outcomes:
            return
        metrics = self._metrics
        for task, out in outcomes.items():
            metrics.ack_tuples_to_workers += len(out.acked)
            metrics.fail_tuples_to_workers += len(out.failed)
            self._instances.send(
                task,
                tuple_pb2.SpoutAckBatch(
                    spout_task=task, acked=out.acked, failed=out.failed, reset=out.reset
                ),
            )

    # --- physical plan -------------------------------------------------------------------------
    def _apply_pplan(self, pplan: physical_plan_pb2.PhysicalPlan) -> None:
        if pplan == self._pplan:
            return
        self._pplan = pplan
        self._peers.apply(pplan, self._zmq, self._secured)
        if self._stateful is not None:
            self._stateful.apply(pplan)
        log.info(
            "%s: physical plan with %d stmgrs and %d instances",
            self.args.stmgr_id,
            len(pplan.stmgrs),
            len(pplan.instances),
        )
        self._instances.assign(pplan)

    # --- loop --------------------------------------------------------------------------------
    def stop(self, signum: int = 0, frame: FrameType | None = None) -> None:
        self._stop = True

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        try:
            self._load()
            self._bind()
            watch = self.state.watch(
                "tmanagers", self.args.topology_name, self._tmanager.events.put
            )
            try:
                self._loop()
            finally:
                watch.cancel()
                self._publish_metrics()  # the last interval's counts
            return 0
        except HeronError as exc:
            log.error("%s", exc)
            return 1
        finally:
            for close in reversed(self._closers):
                close()

    def _read_burst(self, sock: zmq.Socket[bytes], limit: int, task: int | None) -> None:
        route, route_acks = self._route, self._route_acks
        stateful = self._stateful
        batches = nbytes = acks = 0
        for _ in range(limit):
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            try:
                kind = frames[0]
                if (
                    stateful is not None
                    and kind in (DATA, ACKS)
                    and not (
                        stateful.accepts_from_peers
                        if task is None
                        else stateful.accepts_from_instance(task)
                    )
                ):
                    stateful.dropped += 1  # sent before a rollback
                elif kind == DATA:
                    route(frames)
                    batches += 1
                    nbytes += len(frames[2])
                elif kind == ACKS:
                    route_acks(frames)
                    acks += 1
                elif task is None:
                    self._peers.dispatcher.dispatch(frames)
                else:
                    self._instances.dispatcher.dispatch(frames, task)
            except (ProtocolError, DecodeError, struct.error, IndexError) as exc:
                self.malformed += 1
                if self.malformed <= _LOGGED_MALFORMED or self.malformed % 1000 == 0:
                    source = "a peer on its data port" if task is None else f"task {task}"
                    log.warning(
                        "%s: dropped a malformed message of %d frames from %s: %s (%d so far)",
                        self.args.stmgr_id,
                        len(frames),
                        source,
                        exc,
                        self.malformed,
                    )
        metrics = self._metrics
        if task is None:
            metrics.batches_from_stmgrs += batches
            metrics.bytes_from_stmgrs += nbytes
            metrics.ack_batches_from_stmgrs += acks
        else:
            metrics.batches_from_workers += batches
            metrics.bytes_from_workers += nbytes
            metrics.ack_batches_from_workers += acks

    def _publish_metrics(self) -> None:
        stateful = None if self._stateful is None else self._stateful.take_counts()
        message = self._metrics.collect(
            self._clock(),
            int(self._wall_clock() * 1000),
            self._task_box.values(),
            {peer: box for peer, (_, box) in self._peers.peers.items()},
            len(self._trees),
            stateful,
        )
        self._metrics.publish(message)

    def _loop(self) -> None:
        heartbeat_s = float(self._setting("heron.streammgr.tmanager.heartbeat.interval.sec"))
        metrics_s = float(self._setting("heron.metrics.export.interval.sec"))
        nbuckets = int(self._setting("heron.streammgr.xormgr.rotatingmap.nbuckets"))
        rotate_s = float(self._setting("topology.message.timeout.secs")) / (nbuckets - 1)
        now = self._clock()
        next_heartbeat = now + heartbeat_s
        next_metrics = now + metrics_s
        next_rotation = now + rotate_s
        server = self._server
        boxes = self._outboxes.by_socket
        drain = self._outboxes.drain
        socket_task = self._instances.socket_task
        tmanager = self._tmanager
        while not self._stop:
            tmanager.take_events(self._zmq, self._secured)
            for sock, event in self._poller.poll(50):
                if event & zmq.POLLOUT:
                    drain(boxes[sock])
                if not event & zmq.POLLIN:
                    continue
                if sock is server:
                    self._read_burst(sock, 256, None)
                elif sock is tmanager.socket:
                    tmanager.read()
                else:
                    self._read_burst(sock, 64, socket_task[sock])
            self._deliver_outcomes()
            if self._stateful is not None:
                self._stateful.on_saved()
            now = self._clock()
            if now >= next_rotation:
                self._metrics.trees_expired += self._trees.rotate()
                next_rotation = now + rotate_s
            if now >= next_heartbeat:
                next_heartbeat = now + heartbeat_s
                tmanager.heartbeat(int(self._wall_clock() * 1000))
            if now >= next_metrics:
                next_metrics = now + metrics_s
                self._publish_metrics()
