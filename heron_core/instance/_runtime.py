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
from heron_core.errors import HeronError, UserCodeError
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


class _SpoutCollector:
    """What a native ``Spout``'s ``emit`` delegates to."""

    def __init__(self, runtime: InstanceRuntime) -> None:
        self._runtime = runtime
        self._emit = runtime.emitter.emit

    def emit(
        self,
        tup: Any,
        tup_id: Any = None,
        stream: str = "default",
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        task_ids = self._emit(tup, stream, direct_task, need_task_ids)
        if tup_id is not None:
            # At-most-once (acking off): an emit with a message id is acked at once, as Heron
            # and Storm (acker executors 0) do; the ack reaches the spout on the next loop.
            self._runtime.immediate_acks.append(tup_id)
        return task_ids


class _BoltCollector:
    """What a native ``Bolt``'s ``emit``/``ack``/``fail`` delegate to."""

    def __init__(self, runtime: InstanceRuntime) -> None:
        self._emit = runtime.emitter.emit
        self._runtime = runtime

    def emit(
        self,
        tup: Any,
        stream: str = "default",
        anchors: Any = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        return self._emit(tup, stream, direct_task, need_task_ids)

    def ack(self, tup: Tuple) -> None:
        self._runtime.acked += 1

    def fail(self, tup: Tuple) -> None:
        self._runtime.failed += 1


def build_component(spec: topology_pb2.ComponentSpec, where: str) -> Any:
    """The user object a component spec describes."""
    kind = spec.WhichOneof("kind")
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
        self.immediate_acks: deque[Any] = deque()
        self.acked = 0
        self.failed = 0
        self._zmq = zmq.Context()
        endpoint = f"{args.local_endpoint}task-{args.task_id}"
        self.client = StMgrClient(self._zmq, endpoint)
        self._where = (
            f"topology {args.topology_name!r}, component {args.component!r}, task {args.task_id}"
        )
        self.metrics = InstanceMetrics(args.component, args.instance_id, args.component_index)
        self._plan: PlanView | None = None
        self._active = True
        self._dispatcher = Dispatcher(f"instance {args.instance_id}")
        self._dispatcher.register(stmgr_pb2.RegisterInstanceResponse, self._on_register_response)
        self._dispatcher.register(stmgr_pb2.NewInstanceAssignmentMessage, self._on_assignment)

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
                self._dispatcher.dispatch(self.client.socket.recv_multipart())
        return self._plan

    def _setup(self) -> None:
        code_dir = self.args.working_dir / "code"
        if str(code_dir) not in sys.path:
            sys.path.insert(0, str(code_dir))
        plan = self._wait_for_plan()
        config = plan.component_config(self.args.component)
        self.config = config
        self.is_spout = plan.is_spout[self.args.component]
        self.component = build_component(plan.components[self.args.component].spec, self._where)
        expected = Spout if self.is_spout else Bolt
        if not isinstance(self.component, expected):
            raise UserCodeError(
                f"{self._where}: {type(self.component).__qualname__} is not a {expected.__name__}"
            )
        self.context = InstanceContext(self, plan, config)
        self.emitter = Emitter(
            plan,
            self.args.component,
            self.args.task_id,
            self.args.container,
            self.client,
            int(config.get("heron.instance.batch.max.tuples", 1024)),
            self.context.prepare_custom_grouping,
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
        self._publish_metrics()
        if not self.client.flush_blocking(5.0):
            log.warning(
                "%s: %d batches not delivered at shutdown", self._where, len(self.client.pending)
            )
        if self.is_spout:
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
        next_flush = clock() + flush_s
        next_metrics = clock() + metrics_s
        while not self._stop:
            if socket.poll(0, zmq.POLLIN):
                self._read_control()
            while acks:
                spout.ack(acks.popleft())
                self.acked += 1
            idle = True
            if self._active and (not client.pending or client.drain()):
                before = emitter.emitted
                for _ in range(_SPOUT_CALLS_PER_ROUND):
                    mark = emitter.emitted
                    next_tuple()
                    if emitter.emitted == mark or client.pending:
                        break
                idle = emitter.emitted == before
            now = clock()
            if now >= next_flush or idle:
                emitter.flush()
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
                        break
                    if frames[0] == DATA:
                        on_data(frames[2])
                    else:
                        dispatch(frames)
                    if client.pending:
                        break
            now = clock()
            if now >= next_flush:
                emitter.flush()
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
        for values in rows:
            process(Tuple(None, source, stream, task, values))
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
        counters["__ack-count/default"] = self.acked
        counters["__fail-count/default"] = self.failed
        self.client.send_message(self.metrics.snapshot())
