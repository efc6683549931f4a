"""The stream manager's own metrics, pushed to its container's metrics manager.

Every ``heron.metrics.export.interval.sec`` the stream manager PUSHes one
``MetricPublisherPublishMessage`` (component ``__stmgr__``, instance id its stmgr id) to
`heron_core.network.metrics_endpoint` of its container, where the metrics manager listens. Each
value covers that interval only (Heron's semantics): counts are deltas (type hint SUM), queue
sizes and process gauges the newest value (LAST).

Names follow Heron's stream manager metrics, with one honest difference: the stream manager
never parses a tuple batch, so it counts *batches* and bytes, not tuples
(``__server/__batches_from_workers`` where Heron has ``__tuples_from_workers``). Acks and fails
delivered to spouts are counted one by one (the tree outcomes are in hand).

============================================================  ====  ============================
name                                                           type  what
============================================================  ====  ============================
``__server/__batches_from_workers``, ``__bytes_from_workers``  SUM   data from local instances
``__server/__ack_batches_from_workers``                        SUM   acking batches from them
``__server/__batches_to_workers``, ``__bytes_to_workers``      SUM   data to local instances
``__server/__ack_tuples_to_workers``, ``__fail_tuples_...``    SUM   tree outcomes to spouts
``__server/__batches_from_stmgrs``, ``__bytes_from_stmgrs``    SUM   data from peers
``__server/__ack_batches_from_stmgrs``                         SUM   acking batches from peers
``__client_<peer>/__batches_to_stmgrs``, ``__bytes_...``       SUM   data to peer ``<peer>``
``__client_<peer>/__ack_batches_to_stmgrs``                    SUM   acking batches to it
``__server/__batches_to_stmgrs_lost``, ``__ack_batches_...``   SUM   no route: dropped
``__server/__time_spent_back_pressure_initiated``              SUM   ms this stmgr caused it
``__server/__time_spent_back_pressure_by_remote_stmgr``        SUM   ms some peer announced it
``__time_spent_back_pressure_by_compid/<instance id>``         SUM   ms that instance caused it
``__connection_buffer_length_by_instanceid/<instance id>``     LAST  frames queued for it
``__connection_buffer_by_instanceid/<instance id>/bytes``      LAST  bytes queued for it
``__process/__cpu_user_usec``, ``__cpu_system_usec``           SUM   CPU time in the interval
``__process/__uptime_sec``, ``__mem_used_bytes``               LAST  age and RSS
``__trees_tracked``                                            LAST  tuple trees being tracked
``__trees_expired``                                            SUM   trees that timed out
============================================================  ====  ============================
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import psutil
import zmq

from heron_core.metricsmgr import STMGR_COMPONENT
from heron_core.network import encode
from heron_core.proto import metrics_pb2
from heron_core.stmgr._backpressure import BackPressure
from heron_core.stmgr._outbox import Outbox

__all__ = ["METRICS_HWM", "StMgrMetrics", "Stopwatch"]

log = logging.getLogger(__name__)

METRICS_HWM = 4
METRICS_LINGER_MS = 1000

SUM = metrics_pb2.SUM
LAST = metrics_pb2.LAST

INITIATED = "__server/__time_spent_back_pressure_initiated"
BY_REMOTE = "__server/__time_spent_back_pressure_by_remote_stmgr"
BY_COMPID = "__time_spent_back_pressure_by_compid/"


class Stopwatch:
    """Time spent in each of a set of named states, per interval. Times are passed in.

    >>> watch = Stopwatch()
    >>> watch.set({"a", "b"}, now=10.0)
    >>> watch.set({"b"}, now=10.5)
    >>> sorted(watch.take(now=12.0).items())
    [('a', 0.5), ('b', 2.0)]
    >>> watch.take(now=13.0)  # "b" goes on: the next interval counts from 12.0
    {'b': 1.0}
    """

    __slots__ = ("_since", "_spent")

    def __init__(self) -> None:
        self._since: dict[str, float] = {}
        self._spent: dict[str, float] = {}

    def set(self, names: Iterable[str], now: float) -> None:
        """From ``now``, exactly the states ``names`` hold."""
        names = set(names)
        for name in [n for n in self._since if n not in names]:
            self._spent[name] = self._spent.get(name, 0.0) + now - self._since.pop(name)
        for name in names:
            self._since.setdefault(name, now)

    def take(self, now: float) -> dict[str, float]:
        """Seconds spent in each state since the last call (states held now included)."""
        spent = self._spent
        for name, since in self._since.items():
            spent[name] = spent.get(name, 0.0) + now - since
            self._since[name] = now
        self._spent = {}
        return spent


class StMgrMetrics:
    """The counters of one stream manager and the socket they go out on.

    The routing loop adds to the counters (plain attributes, per burst of batches); the
    `Outbox` counters of each local task and peer are read and reset by :meth:`collect`.

    Args:
        stmgr_id: the stream manager's id (the publisher's instance id).
        host: the stream manager's host (the publisher's host name).
        instance_ids: the local instances' ids (back pressure they cause is named by them).
    """

    def __init__(self, stmgr_id: str, host: str, instance_ids: Iterable[str]) -> None:
        self.stmgr_id = stmgr_id
        self.host = host
        self._instance_ids = frozenset(instance_ids)
        self.batches_from_workers = 0
        self.bytes_from_workers = 0
        self.ack_batches_from_workers = 0
        self.batches_from_stmgrs = 0
        self.bytes_from_stmgrs = 0
        self.ack_batches_from_stmgrs = 0
        self.ack_tuples_to_workers = 0
        self.fail_tuples_to_workers = 0
        self.batches_lost = 0
        self.ack_batches_lost = 0
        self.trees_expired = 0
        self.dropped = 0  # messages the metrics manager's socket could not take
        self._watch = Stopwatch()
        self._process = psutil.Process()
        self._cpu = self._process.cpu_times()
        self._socket: zmq.Socket[bytes] | None = None

    def connect(self, context: zmq.Context[zmq.Socket[bytes]], endpoint: str) -> None:
        """PUSH to the metrics manager at ``endpoint`` (which need not be up yet)."""
        sock = context.socket(zmq.PUSH)
        sock.setsockopt(zmq.SNDHWM, METRICS_HWM)
        sock.setsockopt(zmq.LINGER, METRICS_LINGER_MS)
        sock.connect(endpoint)
        self._socket = sock

    def back_pressure(self, bp: BackPressure, now: float) -> None:
        """The back-pressure state changed at ``now`` (monotonic seconds)."""
        names = [BY_COMPID + c for c in bp.causes if c in self._instance_ids]
        if bp.initiated:
            names.append(INITIATED)
        if bp.announcers:
            names.append(BY_REMOTE)
        self._watch.set(names, now)

    def collect(
        self,
        now: float,
        wall_ms: int,
        instance_boxes: Iterable[Outbox],
        peer_boxes: Mapping[str, Outbox],
        trees_tracked: int,
        stateful: tuple[int, int] | None = None,
    ) -> metrics_pb2.MetricPublisherPublishMessage:
        """The message of the interval ending at ``now``; resets every interval counter.
        ``stateful`` (EFFECTIVELY_ONCE): the interval's batches dropped as sent before a
        rollback, and checkpoints given up at a gate (``__dropped_during_restore``,
        ``__checkpoints_given_up``)."""
        message = metrics_pb2.MetricPublisherPublishMessage(
            publisher=metrics_pb2.MetricPublisher(
                hostname=self.host, component_name=STMGR_COMPONENT, instance_id=self.stmgr_id
            ),
            timestamp=wall_ms,
        )
        add = message.metrics.add
        to_workers = bytes_to_workers = 0
        spent = self._watch.take(now)
        for box in instance_boxes:
            to_workers += box.batches
            bytes_to_workers += box.nbytes
            box.batches = box.nbytes = box.ack_batches = 0
            length = f"__connection_buffer_length_by_instanceid/{box.name}"
            add(name=length, value=str(len(box.frames)), type=LAST)
            queued = f"__connection_buffer_by_instanceid/{box.name}/bytes"
            add(name=queued, value=str(box.queued_bytes), type=LAST)
            compid = BY_COMPID + box.name
            add(name=compid, value=str(int(spent.pop(compid, 0.0) * 1000)), type=SUM)
        for name, value in (
            ("__server/__batches_from_workers", self.batches_from_workers),
            ("__server/__bytes_from_workers", self.bytes_from_workers),
            ("__server/__ack_batches_from_workers", self.ack_batches_from_workers),
            ("__server/__batches_to_workers", to_workers),
            ("__server/__bytes_to_workers", bytes_to_workers),
            ("__server/__ack_tuples_to_workers", self.ack_tuples_to_workers),
            ("__server/__fail_tuples_to_workers", self.fail_tuples_to_workers),
            ("__server/__batches_from_stmgrs", self.batches_from_stmgrs),
            ("__server/__bytes_from_stmgrs", self.bytes_from_stmgrs),
            ("__server/__ack_batches_from_stmgrs", self.ack_batches_from_stmgrs),
            ("__server/__batches_to_stmgrs_lost", self.batches_lost),
            ("__server/__ack_batches_to_stmgrs_lost", self.ack_batches_lost),
            (INITIATED, int(spent.pop(INITIATED, 0.0) * 1000)),
            (BY_REMOTE, int(spent.pop(BY_REMOTE, 0.0) * 1000)),
            ("__trees_expired", self.trees_expired),
        ):
            add(name=name, value=str(value), type=SUM)
        self.batches_from_workers = self.bytes_from_workers = self.ack_batches_from_workers = 0
        self.batches_from_stmgrs = self.bytes_from_stmgrs = self.ack_batches_from_stmgrs = 0
        self.ack_tuples_to_workers = self.fail_tuples_to_workers = 0
        self.batches_lost = self.ack_batches_lost = self.trees_expired = 0
        for peer, box in sorted(peer_boxes.items()):
            scope = f"__client_{peer}/"
            add(name=scope + "__batches_to_stmgrs", value=str(box.batches), type=SUM)
            add(name=scope + "__bytes_to_stmgrs", value=str(box.nbytes), type=SUM)
            add(name=scope + "__ack_batches_to_stmgrs", value=str(box.ack_batches), type=SUM)
            box.batches = box.nbytes = box.ack_batches = 0
        add(name="__trees_tracked", value=str(trees_tracked), type=LAST)
        if stateful is not None:
            add(name="__dropped_during_restore", value=str(stateful[0]), type=SUM)
            add(name="__checkpoints_given_up", value=str(stateful[1]), type=SUM)
        self._add_process(message, wall_ms)
        return message

    def _add_process(
        self, message: metrics_pb2.MetricPublisherPublishMessage, wall_ms: int
    ) -> None:
        add = message.metrics.add
        try:
            with self._process.oneshot():
                cpu = self._process.cpu_times()
                rss = self._process.memory_info().rss
                created = self._process.create_time()
        except psutil.Error as exc:  # pragma: no cover - our own process is always readable
            log.warning("%s: cannot read its process metrics: %s", self.stmgr_id, exc)
            return
        user_us = int((cpu.user - self._cpu.user) * 1e6)
        system_us = int((cpu.system - self._cpu.system) * 1e6)
        self._cpu = cpu
        add(name="__process/__cpu_user_usec", value=str(user_us), type=SUM)
        add(name="__process/__cpu_system_usec", value=str(system_us), type=SUM)
        uptime = max(0, int(wall_ms / 1000 - created))
        add(name="__process/__uptime_sec", value=str(uptime), type=LAST)
        add(name="__process/__mem_used_bytes", value=str(rss), type=LAST)

    def publish(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        """Send ``message`` if the metrics manager's socket takes it now, else drop it (and
        count the drop: the metrics manager is down or slow, and routing must not wait)."""
        if self._socket is None:
            return
        try:
            self._socket.send_multipart(encode(message), zmq.NOBLOCK)
        except zmq.Again:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                log.warning(
                    "%s: the metrics manager does not take its metrics; %d messages dropped",
                    self.stmgr_id,
                    self.dropped,
                )

    def close(self) -> None:
        """Close the socket; what it holds gets up to a second to reach the metrics manager."""
        if self._socket is not None:
            self._socket.close(linger=METRICS_LINGER_MS)
            self._socket = None
