"""The Heron Instance: hosts one spout or bolt task in this process.

Single-threaded: one loop reads from the stream manager, runs the user's code and sends batches.
Contracts for user code: ``initialize`` runs once, before any other callback; spouts'
``next_tuple``/``ack``/``fail``/``activate``/``deactivate`` and bolts' ``process``/``process_tick``
are all called on this one thread and never concurrently. An exception from user code ends the
process with status 1 after logging topology, component, task and the user's traceback; the
executor restarts it.
"""

from __future__ import annotations

import logging
import math
import pickle
import random
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import zmq

from heron_core.api import Bolt, Spout, Tuple
from heron_core.config import acking_enabled
from heron_core.errors import HeronError, UserCodeError
from heron_core.instance._acking import AckSender, InFlight
from heron_core.instance._context import InstanceContext
from heron_core.instance._emitter import Emitter
from heron_core.instance._metrics import InstanceMetrics
from heron_core.instance._plan import PlanView
from heron_core.instance.stmgr_client import StMgrClient
from heron_core.network import DATA, Dispatcher
from heron_core.plugins import resolve_class
from heron_core.proto import physical_plan_pb2, stmgr_pb2, topology_pb2, tuple_pb2

log = logging.getLogger(__name__)

TICK_COMPONENT = "__system"
TICK_STREAM = "__tick"
_MAX_MESSAGES_PER_WAKE = 64
_SPOUT_CALLS_PER_ROUND = 1024


@dataclass(frozen=True)
class InstanceArgs:
    """Where this instance sits in the topology (from the executor's command line)."""

    topology_name: str
    topology_id: str
    container: int
    task_id: int
    component: str
    component_index: int
    working_dir: Path
    local_endpoint: str

    @property
    def instance_id(self) -> str:
        return f"container_{self.container}_{self.component}_{self.task_id}"


_bits = random.getrandbits
"""Edge and root ids: ``_bits(64) or 1``, random 64-bit and never 0 (0 means "complete")."""


class _SpoutCollector:
    """What a native ``Spout``'s ``emit`` delegates to.

    With acking off, an emit with a message id is acked at once (as Heron does, and Storm with
    0 ackers): the ack reaches the spout on its next loop. With acking on, such an emit roots a
    tuple tree: each copy sent gets a random edge id, and the XOR of them goes to the tracker.
    """

    def __init__(self, runtime: InstanceRuntime) -> None:
        self._runtime = runtime
        self._emit = runtime.emitter.emit
        self._task = runtime.args.task_id
        self._acking = runtime.acking

    def emit(
        self,
        tup: Any,
        tup_id: Any = None,
        stream: str = "default",
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        if tup_id is None:
            return self._emit(tup, stream, direct_task, need_task_ids)
        runtime = self._runtime
        if not self._acking:
            task_ids = self._emit(tup, stream, direct_task, need_task_ids)
            runtime.immediate_acks.append((tup_id, stream))
            return task_ids
        root = _bits(64) or 1
        spout_task = self._task
        edges: list[int] = []

        def roots(dest: int) -> tuple[tuple[int, int, int]]:
            edge = _bits(64) or 1
            edges.append(edge)
            return ((spout_task, root, edge),)

        task_ids = self._emit(tup, stream, direct_task, need_task_ids, roots)
        if not edges:  # nobody subscribes: the tree is complete already
            runtime.immediate_acks.append((tup_id, stream))
            return task_ids
        value = 0
        for edge in edges:
            value ^= edge
        runtime.in_flight.add(root, tup_id, stream)
        runtime.acks.init(spout_task, root, value)
        return task_ids


class _BoltCollector:
    """What a native ``Bolt``'s ``emit``/``ack``/``fail`` delegate to.

    Anchoring follows Storm: each copy of a child tuple gets, per anchor, a random edge id that is
    XORed into the anchor's pending value and into the child's value for each of the anchor's
    trees; acking the anchor later sends (its edge XOR its children's edges) to each tree.
    Acking or failing a tuple twice, or anchoring to one already acked, is ignored with a warning.
    """

    def __init__(self, runtime: InstanceRuntime) -> None:
        self._emit = runtime.emitter.emit
        self._runtime = runtime
        self._acking = runtime.acking
        self._acks = runtime.acks
        self._silent = runtime.emitter.silent_streams
        # A bolt often emits several tuples anchored to the same input: reuse its edge maker.
        self._last_anchor: Tuple | None = None
        self._last_roots: Any = None

    def emit(
        self,
        tup: Any,
        stream: str = "default",
        anchors: Any = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        if not anchors or not self._acking or stream in self._silent:
            return self._emit(tup, stream, direct_task, need_task_ids)
        if isinstance(anchors, Tuple):
            anchors = [anchors]
        last = self._last_anchor
        if (
            last is not None
            and len(anchors) == 1
            and anchors[0] is last
            and last._ackval is not None
        ):
            return self._emit(tup, stream, direct_task, need_task_ids, self._last_roots)
        live = []
        for anchor in anchors:
            if anchor._ackval is None:
                self._runtime.warn_once("anchored a new tuple to a tuple already acked or failed")
            elif anchor._roots:
                live.append(anchor)
        if not live:
            return self._emit(tup, stream, direct_task, need_task_ids)
        if len(live) == 1 and len(live[0]._roots) == 1:  # the common case: one anchor, one tree
            anchor = live[0]
            spout_task, root, _ = anchor._roots[0]

            def one_root(dest: int) -> tuple[tuple[int, int, int]]:
                edge = _bits(64) or 1
                anchor._ackval ^= edge
                return ((spout_task, root, edge),)

            self._last_anchor, self._last_roots = anchor, one_root
            return self._emit(tup, stream, direct_task, need_task_ids, one_root)

        def roots(dest: int) -> list[tuple[int, int, int]]:
            merged: dict[tuple[int, int], int] = {}
            for anchor in live:
                edge = _bits(64) or 1
                anchor._ackval ^= edge
                for spout_task, root, _ in anchor._roots:
                    merged[(spout_task, root)] = merged.get((spout_task, root), 0) ^ edge
            return [(task, root, value) for (task, root), value in merged.items()]

        return self._emit(tup, stream, direct_task, need_task_ids, roots)

    def ack(self, tup: Tuple) -> None:
        runtime = self._runtime
        if self._acking:
            pending = tup._ackval
            if pending is None:
                runtime.warn_once("acked or failed the same tuple twice; ignored")
                return
            ack = self._acks.ack
            for spout_task, root, value in tup._roots:
                ack(spout_task, root, value ^ pending)
            tup._ackval = None
        runtime.count_ack(tup)

    def fail(self, tup: Tuple) -> None:
        runtime = self._runtime
        if self._acking:
            if tup._ackval is None:
                runtime.warn_once("acked or failed the same tuple twice; ignored")
                return
            for spout_task, root, _ in tup._roots:
                self._acks.fail(spout_task, root)
            tup._ackval = None
        runtime.count_fail(tup)

    def reset_timeout(self, tup: Tuple) -> None:
        """Restart the message timeout of every tree ``tup`` belongs to (Storm's resetTimeout)."""
        if self._acking:
            for spout_task, root, _ in tup._roots:
                self._acks.reset(spout_task, root)


def build_component(spec: topology_pb2.ComponentSpec, where: str, is_spout: bool) -> Any:
    """The user object a component spec describes: for a shell spec, a multilang
    ``ShellSpout`` or ``ShellBolt`` running its command."""
    kind = spec.WhichOneof("kind")
    if kind == "shell":
        from heron_core.multilang import ShellBolt, ShellSpout  # only shell components need it

        shell = ShellSpout if is_spout else ShellBolt
        return shell(tuple(spec.shell.command), spec.shell.serializer or "json")
    if kind != "python":
        raise HeronError(
            f"{where}: component spec of kind {kind!r} cannot run in a Python instance"
        )
    if spec.python.pickled_object:
        try:
            return pickle.loads(spec.python.pickled_object)
        except Exception as exc:
            raise UserCodeError(f"{where}: cannot unpickle the component: {exc}") from exc
    cls = resolve_class(spec.python.class_path)
    try:
        return cls()
    except Exception as exc:
        raise UserCodeError(
            f"{where}: constructing {spec.python.class_path} raised {exc!r}"
        ) from exc


class InstanceRuntime:
    """One task's life: register, wait for the plan, build the user object, loop."""

    def __init__(self, args: InstanceArgs, clock: Any = time.monotonic) -> None:
        self.args = args
        self._clock = clock
        self._stop = False
        self.immediate_acks: deque[tuple[Any, str]] = deque()
        self.acked: dict[str, int] = {}  # spouts: per stream
        self.failed: dict[str, int] = {}
        self._bolt_acked: dict[tuple[str, str], int] = {}  # bolts: per (source, stream)
        self._bolt_failed: dict[tuple[str, str], int] = {}
        self._process_ms = 0.0  # bolts: total ms from receipt to ack or fail, and their count
        self._processed = 0
        self.timed_out = 0
        self._early_data: list[bytes] = []
        self._warnings: dict[str, int] = {}
        self._zmq = zmq.Context()
        endpoint = f"{args.local_endpoint}task-{args.task_id}"
        self.client = StMgrClient(self._zmq, endpoint)
        self.acks = AckSender(self.client)
        self.in_flight = InFlight(clock)
        self._where = (
            f"topology {args.topology_name!r}, component {args.component!r}, task {args.task_id}"
        )
        self.metrics = InstanceMetrics(args.component, args.instance_id, args.component_index)
        self._plan: PlanView | None = None
        self._active = True
        self._dispatcher = Dispatcher(f"instance {args.instance_id}")
        self._dispatcher.register(stmgr_pb2.RegisterInstanceResponse, self._on_register_response)
        self._dispatcher.register(stmgr_pb2.NewInstanceAssignmentMessage, self._on_assignment)
        self._dispatcher.register(tuple_pb2.SpoutAckBatch, self._on_tree_outcomes)

    def count_ack(self, tup: Tuple) -> None:
        """A bolt acked ``tup``: count it and its process latency."""
        key = (tup.component, tup.stream)
        self._bolt_acked[key] = self._bolt_acked.get(key, 0) + 1
        self._process_ms += (time.perf_counter() - tup._received) * 1000.0
        self._processed += 1

    def count_fail(self, tup: Tuple) -> None:
        """A bolt failed ``tup``: count it and its process latency."""
        key = (tup.component, tup.stream)
        self._bolt_failed[key] = self._bolt_failed.get(key, 0) + 1
        self._process_ms += (time.perf_counter() - tup._received) * 1000.0
        self._processed += 1

    def _spout_outcome(self, outcomes: dict[str, int], stream: str) -> None:
        outcomes[stream] = outcomes.get(stream, 0) + 1

    def warn_once(self, what: str) -> None:
        """Log a misuse by user code: the first time, then every 1000th time."""
        seen = self._warnings[what] = self._warnings.get(what, 0) + 1
        if seen == 1 or seen % 1000 == 0:
            log.warning("%s: %s (%d times so far)", self._where, what, seen)

    def _on_tree_outcomes(self, message: tuple_pb2.SpoutAckBatch) -> None:
        spout = self.component
        in_flight = self.in_flight
        for root in message.acked:
            done = in_flight.complete(root)
            if done is not None:
                msg_id, stream, age = done
                spout.ack(msg_id)
                self._spout_outcome(self.acked, stream)
                self.metrics.add_latency("__complete-latency-ms/" + stream, age * 1000.0, 1)
        for root in message.failed:
            gone = in_flight.failed(root)
            if gone is not None:
                spout.fail(gone[0])
                self._spout_outcome(self.failed, gone[1])
        for root in message.reset:
            in_flight.reset(root)

    # --- control messages ------------------------------------------------------------------
    def _on_register_response(self, message: stmgr_pb2.RegisterInstanceResponse) -> None:
        if message.HasField("pplan"):
            self._set_plan(message.pplan)

    def _on_assignment(self, message: stmgr_pb2.NewInstanceAssignmentMessage) -> None:
        self._set_plan(message.pplan)

    def _set_plan(self, pplan: physical_plan_pb2.PhysicalPlan) -> None:
        first = self._plan is None
        self._plan = PlanView(pplan)
        active = pplan.topology.state != topology_pb2.PAUSED
        if not first and active != self._active and self._plan.is_spout[self.args.component]:
            if active:
                self.component.activate()
            else:
                self.component.deactivate()
        self._active = active

    def stop(self, signum: int = 0, frame: FrameType | None = None) -> None:
        self._stop = True

    # --- start-up --------------------------------------------------------------------------
    def _wait_for_plan(self) -> PlanView:
        instance = physical_plan_pb2.Instance(
            instance_id=self.args.instance_id,
            stmgr_id=f"stmgr-{self.args.container}",
            info=physical_plan_pb2.InstanceInfo(
                task_id=self.args.task_id,
                component_index=self.args.component_index,
                component_name=self.args.component,
            ),
        )
        self.client.register(instance, self.args.topology_name, self.args.topology_id)
        log.info("registered with %s; waiting for the physical plan", self.client.endpoint)
        while self._plan is None:
            if self._stop:
                raise SystemExit(0)
            if self.client.socket.poll(100, zmq.POLLIN):
                frames = self.client.socket.recv_multipart()
                if frames[0] == DATA:  # queued for this task while it was down: keep, in order
                    self._early_data.append(frames[2])
                else:
                    self._dispatcher.dispatch(frames)
        return self._plan

    def _setup(self) -> None:
        code_dir = self.args.working_dir / "code"
        if str(code_dir) not in sys.path:
            sys.path.insert(0, str(code_dir))
        plan = self._wait_for_plan()
        config = plan.component_config(self.args.component)
        self.config = config
        self.is_spout = plan.is_spout[self.args.component]
        self.component = build_component(
            plan.components[self.args.component].spec, self._where, self.is_spout
        )
        expected = Spout if self.is_spout else Bolt
        if not isinstance(self.component, expected):
            raise UserCodeError(
                f"{self._where}: {type(self.component).__qualname__} is not a {expected.__name__}"
            )
        self.context = InstanceContext(self, plan, config)
        self.acking = acking_enabled(config)
        self.emitter = Emitter(
            plan,
            self.args.component,
            self.args.task_id,
            self.args.container,
            self.client,
            int(config.get("heron.instance.batch.max.tuples", 1024)),
            self.context.prepare_custom_grouping,
            acking=self.acking,
        )
        self.component._collector = _SpoutCollector(self) if self.is_spout else _BoltCollector(self)
        self.component.initialize(config, self.context)

    # --- main loops --------------------------------------------------------------------------
    def run(self) -> int:
        """Run until stopped; the process exit status."""
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        try:
            self._setup()
            log.info("%s started (pid-local task %d)", self._where, self.args.task_id)
            if self.is_spout:
                self._spout_loop()
            else:
                self._bolt_loop()
            self._shutdown()
            return 0
        except SystemExit as exc:
            return int(exc.code or 0)
        except Exception:
            log.exception(
                "%s: user code raised; the instance exits and will be restarted", self._where
            )
            return 1
        finally:
            self.client.close()
            self._zmq.term()

    def _shutdown(self) -> None:
        self.emitter.flush()
        self.acks.flush()
        self._publish_metrics()
        if not self.client.flush_blocking(1.0):
            log.warning(
                "%s: %d batches not delivered at shutdown", self._where, len(self.client.pending)
            )
        self.component.close()

    def _intervals(self) -> tuple[float, float]:
        flush_s = float(self.config.get("heron.instance.batch.flush.interval.ms", 10)) / 1000.0
        metrics_s = float(self.config.get("heron.metrics.export.interval.sec", 1.0))
        return flush_s, metrics_s

    def _read_control(self) -> None:
        socket = self.client.socket
        for _ in range(_MAX_MESSAGES_PER_WAKE):
            try:
                frames = socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if frames[0] == DATA:
                raise HeronError(f"{self._where}: a spout received tuple data")
            self._dispatcher.dispatch(frames)

    def _spout_loop(self) -> None:
        spout = self.component
        next_tuple = spout.next_tuple
        emitter = self.emitter
        client = self.client
        socket = client.socket
        clock = self._clock
        flush_s, metrics_s = self._intervals()
        wait_ms = max(1, int(self.config.get("topology.sleep.spout.wait.strategy.time.ms", 1)))
        acks = self.immediate_acks
        in_flight = self.in_flight
        limit = self.config.get("topology.max.spout.pending") if self.acking else None
        limit = int(limit) if limit else 1 << 62
        timeout_s = float(self.config.get("topology.message.timeout.secs", 30))
        if not self.config.get("topology.enable.message.timeouts", True) or not self.acking:
            timeout_s = math.inf
        scan_s = timeout_s / max(
            1, int(self.config.get("heron.instance.acknowledgement.nbuckets", 10))
        )
        next_flush = clock() + flush_s
        next_metrics = clock() + metrics_s
        next_scan = clock() + scan_s
        while not self._stop:
            if socket.poll(0, zmq.POLLIN):
                self._read_control()
            while acks:
                msg_id, stream = acks.popleft()
                spout.ack(msg_id)
                self._spout_outcome(self.acked, stream)
            idle = True
            if self._active and len(in_flight) < limit and (not client.pending or client.drain()):
                before = emitter.emitted
                for _ in range(_SPOUT_CALLS_PER_ROUND):
                    mark = emitter.emitted
                    next_tuple()
                    if emitter.emitted == mark or client.pending or len(in_flight) >= limit:
                        break
                idle = emitter.emitted == before
            now = clock()
            if now >= next_scan:
                for msg_id, stream in in_flight.expired(timeout_s):
                    self.timed_out += 1
                    self._spout_outcome(self.failed, stream)
                    spout.fail(msg_id)
                next_scan = now + scan_s
            if now >= next_flush or idle:
                emitter.flush()
                self.acks.flush()
                next_flush = now + flush_s
            if now >= next_metrics:
                self._publish_metrics()
                next_metrics = now + metrics_s
            if idle or client.pending:
                events = zmq.POLLIN | (zmq.POLLOUT if client.pending else 0)
                socket.poll(wait_ms, events)

    def _bolt_loop(self) -> None:
        emitter = self.emitter
        client = self.client
        socket = client.socket
        clock = self._clock
        flush_s, metrics_s = self._intervals()
        tick_secs = self.config.get("topology.tick.tuple.freq.secs")
        tick_s = float(tick_secs) if tick_secs else math.inf
        now = clock()
        next_flush = now + flush_s
        next_metrics = now + metrics_s
        next_tick = now + tick_s
        on_data = self._on_data
        dispatch = self._dispatcher.dispatch
        acks = self.acks
        for payload in self._early_data:
            on_data(payload)
        self._early_data.clear()
        while not self._stop:
            now = clock()
            deadline = min(next_flush, next_metrics, next_tick)
            timeout_ms = max(0, int((deadline - now) * 1000) + 1)
            if client.pending and not client.drain():
                socket.poll(min(timeout_ms, 100), zmq.POLLOUT)
            elif socket.poll(min(timeout_ms, 100), zmq.POLLIN):
                for _ in range(_MAX_MESSAGES_PER_WAKE):
                    try:
                        frames = socket.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        emitter.flush()  # drained the input: send what is buffered
                        acks.flush()
                        break
                    if frames[0] == DATA:
                        on_data(frames[2])
                    else:
                        dispatch(frames)
                    if client.pending or clock() >= next_flush:  # keep latency bounded
                        break
            now = clock()
            if now >= next_flush:
                emitter.flush()
                acks.flush()
                next_flush = now + flush_s
            if now >= next_tick:
                self._tick(tick_s)
                next_tick = now + tick_s
            if now >= next_metrics:
                self._publish_metrics()
                next_metrics = now + metrics_s

    def _on_data(self, payload: bytes) -> None:
        batch = tuple_pb2.TupleBatch.FromString(payload)
        rows = pickle.loads(batch.values)
        source, stream, task = batch.src_component, batch.stream, batch.src_task
        process = self.component.process
        start = time.perf_counter()
        counts = batch.root_counts
        if counts:
            tasks = list(batch.root_tasks)
            keys = list(batch.root_keys)
            edges = list(batch.root_values)
            j = 0
            for values, n in zip(rows, counts, strict=True):
                tup = Tuple(None, source, stream, task, values)
                tup._received = start
                if n == 1:
                    tup._roots = ((tasks[j], keys[j], edges[j]),)
                    j += 1
                elif n:
                    end = j + n
                    tup._roots = tuple(zip(tasks[j:end], keys[j:end], edges[j:end], strict=True))
                    j = end
                process(tup)
        else:
            for values in rows:
                tup = Tuple(None, source, stream, task, values)
                tup._received = start
                process(tup)
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        key = f"{source}/{stream}"
        self.metrics.counters["__execute-count/" + key] += len(rows)
        self.metrics.add_latency("__execute-latency-ms/" + key, elapsed_ms, len(rows))

    def _tick(self, tick_s: float) -> None:
        self.component.process_tick(Tuple("__tick", TICK_COMPONENT, TICK_STREAM, -1, [tick_s]))

    def _publish_metrics(self) -> None:
        counters = self.metrics.counters
        for stream, count in self.emitter.emit_counts().items():
            counters["__emit-count/" + stream] = count
        for stream, count in self.acked.items():
            counters["__ack-count/" + stream] = count
        for stream, count in self.failed.items():
            counters["__fail-count/" + stream] = count
        for (source, stream), count in self._bolt_acked.items():
            counters[f"__ack-count/{source}/{stream}"] = count
        for (source, stream), count in self._bolt_failed.items():
            counters[f"__fail-count/{source}/{stream}"] = count
        if self._processed:
            self.metrics.add_latency(
                "__process-latency-ms/default", self._process_ms, self._processed
            )
            self._process_ms, self._processed = 0.0, 0
        if self.is_spout:
            counters["__timeout-count/default"] = self.timed_out
            counters["__pending-count/default"] = len(self.in_flight)
        self.client.send_message(self.metrics.snapshot())
