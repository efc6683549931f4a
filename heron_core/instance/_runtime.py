"""The Heron Instance: hosts one spout or bolt task in this process.

Single-threaded: one loop reads from the stream manager, runs the user's code and sends batches.
Contracts for user code: ``initialize`` runs once, before any other callback; spouts'
``next_tuple``/``ack``/``fail``/``activate``/``deactivate`` and bolts' ``process``/``process_tick``
are all called on this one thread and never concurrently. An exception from user code ends the
process with status 1 after logging topology, component, task and the user's traceback; the
executor restarts it.
"""

from __future__ import annotations

import functools
import gc
import logging
import marshal
import math
import pickle
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import zmq

from heron_core.api import Bolt, HashMapState, InputBatch, Spout, State, StatefulComponent, Tuple
from heron_core.api._tuple import count_runs
from heron_core.api.hooks import TaskHook
from heron_core.config import acking_enabled, setting
from heron_core.errors import HeronError, UserCodeError
from heron_core.instance._acking import AckSender, InFlight
from heron_core.instance._anchoring import Acker, InputStats
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._context import InstanceContext
from heron_core.instance._hooks import (
    TaskHooks,
    hooked_process,
    hooked_process_batch,
    hooked_settle,
    load_auto_hooks,
)
from heron_core.instance._metrics import InstanceMetrics
from heron_core.instance._pacer import Pacer
from heron_core.instance._plan import PlanView
from heron_core.instance._router import (
    BATCH_BYTES_KEY,
    DEFAULT_VALUES,
    MAX_TUPLE_KEY,
    Router,
)
from heron_core.instance._spout import SpoutCollector
from heron_core.instance._values import FALL_BACK_KEY, RefusedValueClass, policy_for
from heron_core.instance.stmgr_client import StMgrClient
from heron_core.network import DATA, Dispatcher, max_frame_bytes
from heron_core.plugins import resolve_class
from heron_core.proto import (
    ckptmgr_pb2,
    common_pb2,
    physical_plan_pb2,
    stmgr_pb2,
    topology_pb2,
    tuple_pb2,
)

log = logging.getLogger(__name__)

TICK_COMPONENT = "__system"
TICK_STREAM = "__tick"
_MAX_MESSAGES_PER_WAKE = 64


class _StopRequested(BaseException):
    """Raised by `InstanceRuntime._serve` when a stop was requested in the middle of a batch:
    the rest of the batch is left unprocessed (a BaseException, so that a bolt's own
    ``except Exception`` lets it through)."""


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


_perf = time.perf_counter
_MARSHAL = tuple_pb2.MARSHAL
if sys.version_info >= (3, 13):
    _load_marshal = functools.partial(marshal.loads, allow_code=False)
    """``marshal.loads`` that refuses code objects."""
else:  # marshal cannot refuse them: a code object from the wire is a value nothing runs
    _load_marshal = marshal.loads
WAIT_WARN_S = 30.0
"""Seconds an instance waits for its plan (or, stateful, its state) before it logs that it
still waits, and between two such lines."""


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
        self._inputs: dict[tuple[str, str], InputStats] = {}  # bolts: per (source, stream)
        self._published_outcomes: dict[tuple[str, str], int] = {}  # settled, last publish
        self.timed_out: dict[str, int] = {}  # spouts: trees timed out, per stream
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
        self.metrics = InstanceMetrics(
            args.component, args.instance_id, args.component_index, clock=clock
        )
        self._ready = False  # set up: the per-task counters exist
        self._plan: PlanView | None = None
        self.pacer = Pacer(1.0)  # replaced once the config is known, started with the loop
        self._batch: InputBatch | None = None  # the batch a bolt is processing
        self._counted = 0  # its inputs counted as executed so far
        self._malformed = 0  # batches dropped as malformed (logged)
        self._refused = 0  # batches dropped for a value class that is not allowed (logged)
        self.values = DEFAULT_VALUES
        """The classes tuple values may hold (the topology's, once the plan is known)."""
        self._active = True
        self.hooks: TaskHooks | None = None
        """The task's hooks; None until one is added (then the hooked paths are in place)."""
        self._initialized = False  # the component's initialize has returned
        self._bound: tuple[str, ...] = ()  # collector methods bound onto the component
        self._dispatcher = Dispatcher(f"instance {args.instance_id}")
        self._dispatcher.register(stmgr_pb2.RegisterInstanceResponse, self._on_register_response)
        self._dispatcher.register(stmgr_pb2.NewInstanceAssignmentMessage, self._on_assignment)
        self._dispatcher.register(tuple_pb2.SpoutAckBatch, self._on_tree_outcomes)
        # EFFECTIVELY_ONCE: checkpoints and rollbacks (see `_on_restore`)
        self.stateful = False
        self._halted = False
        """Stateful, between a rollback and the start that follows it: a spout does not emit,
        a bolt keeps its input in ``_early_data``."""
        self._restore: ckptmgr_pb2.RestoreInstanceStateRequest | None = None
        self._start_due = False  # a start arrived before the component was first started
        self._user_state: State | None = None
        dispatch = self._dispatcher.register
        dispatch(ckptmgr_pb2.RestoreInstanceStateRequest, self._on_restore)
        dispatch(ckptmgr_pb2.StartInstanceStatefulProcessing, self._on_stateful_start)
        dispatch(ckptmgr_pb2.InitiateStatefulCheckpoint, self._on_checkpoint)

    def _spout_outcome(self, outcomes: dict[str, int], stream: str) -> None:
        outcomes[stream] = outcomes.get(stream, 0) + 1

    @property
    def where(self) -> str:
        """Names the topology, component and task in messages."""
        return self._where

    def warn_once(self, what: str) -> None:
        """Log a misuse by user code: the first time, then every 1000th time."""
        seen = self._warnings[what] = self._warnings.get(what, 0) + 1
        if seen == 1 or seen % 1000 == 0:
            log.warning("%s: %s (%d times so far)", self._where, what, seen)

    def _on_tree_outcomes(self, message: tuple_pb2.SpoutAckBatch) -> None:
        spout = self.component
        in_flight = self.in_flight
        done = in_flight.complete(message.acked)
        if done:
            now = self._clock()
            ack = spout.ack
            for entry in done:
                ack(entry[0])
            if self.hooks is not None:
                self.hooks.spout_acked(done, now)
            streams = {entry[1] for entry in done}
            for stream in streams:
                mine = done if len(streams) == 1 else [e for e in done if e[1] == stream]
                self.acked[stream] = self.acked.get(stream, 0) + len(mine)
                total_ms = (now * len(mine) - sum(e[2] for e in mine)) * 1000.0
                self.metrics.add_latency("__complete-latency/" + stream, total_ms, len(mine))
        for root in message.failed:
            gone = in_flight.failed(root)
            if gone is not None:
                spout.fail(gone[0])
                self._spout_outcome(self.failed, gone[1])
                if self.hooks is not None:
                    self.hooks.spout_failed(gone[0], None)
        for root in message.reset:
            in_flight.reset(root)

    # --- control messages ------------------------------------------------------------------
    def _on_register_response(self, message: stmgr_pb2.RegisterInstanceResponse) -> None:
        """The stream manager took (with the plan when it has one) or refused this instance's
        registration. Refused, the instance ends with the reason (its executor restarts it),
        as Heron's instance does, instead of waiting for a plan that never comes."""
        if message.status.status != common_pb2.OK:
            raise HeronError(
                f"{self._where}: the stream manager at {self.client.endpoint} refused the "
                f"registration: {message.status.message or 'no reason given'}"
            )
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
        self._serve_until(lambda: self._plan is not None, "the physical plan")
        assert self._plan is not None
        return self._plan

    def _serve_until(self, done: Callable[[], bool], what: str) -> None:
        """Before the loops run: send what is pending and handle control messages until
        ``done()``; tuples are kept in ``_early_data``, in order (queued for this task while
        it was down; a rollback drops those that came before it: `_on_restore`). A long wait
        is logged (``what`` names what is awaited) after `WAIT_WARN_S` and then once every
        `WAIT_WARN_S` more."""
        client = self.client
        clock = self._clock
        start = clock()
        warn_at = start + WAIT_WARN_S
        while not done():
            if self._stop:
                raise SystemExit(0)
            now = clock()
            if now >= warn_at:
                warn_at = now + WAIT_WARN_S
                log.warning(
                    "%s: still waiting for %s from the stream manager at %s after %.0f s",
                    self._where,
                    what,
                    client.endpoint,
                    now - start,
                )
            if client.pending:
                client.drain()
            if client.readable(100):
                frames = client.socket.recv_multipart()
                if frames[0] == DATA:
                    self._early_data.append(frames[2])
                else:
                    self._dispatcher.dispatch(frames)

    def _setup(self) -> None:
        code_dir = Path.cwd()  # the executor starts every instance in the code directory
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
        for key, value in plan.ignored_config(self.args.component).items():
            log.warning(
                "%s: the component's config sets %s=%r, which is ignored: acking is on in "
                "every component or in none, and the topology's config has it %s",
                self._where,
                key,
                value,
                "on" if self.acking else "off",
            )
        self.values = policy_for(
            plan.topology_config,
            {name: plan.own_config(name) for name in plan.components},
            self._where,
        )
        if self.values.fall_back:
            log.warning(
                "%s: %s is true: tuple values of any class are pickled and unpickled, so "
                "whoever holds the topology's key can make this instance run code",
                self._where,
                FALL_BACK_KEY,
            )
        self.router = Router(
            plan,
            self.args.component,
            self.args.task_id,
            self.args.container,
            self.client,
            int(setting(config, "heron.instance.batch.max.tuples")),
            self.context.prepare_custom_grouping,
            acking=self.acking,
            max_tuple_bytes=int(setting(config, MAX_TUPLE_KEY)),
            max_frame_bytes=max_frame_bytes(config),
            batch_bytes=int(setting(config, BATCH_BYTES_KEY)),
            values=self.values,
        )
        collector: SpoutCollector | BoltCollector
        if self.is_spout:
            collector = SpoutCollector(self.router, self.acks, self.in_flight, self.immediate_acks)
        else:
            acker = Acker(self.acks, self._where, self.warn_once)
            collector = BoltCollector(self.router, acker)
        self.collector = collector
        self.component._collector = collector
        # Bind the collector's methods onto the user's object where its class keeps the base
        # class's delegating ones: one Python call less per emit, ack and fail.
        base = Spout if self.is_spout else Bolt
        names = ("emit",) if self.is_spout else ("emit", "emit_many", "emit_and_ack", "ack", "fail")
        self._bound = tuple(
            name for name in names if getattr(type(self.component), name) is getattr(base, name)
        )
        for name in self._bound:
            setattr(self.component, name, getattr(collector, name))
        auto_hooks = config.get("topology.auto.task.hooks") or []
        for auto_hook in load_auto_hooks(auto_hooks, self.context, self._where):
            self.add_hook(auto_hook)
        self.stateful = config.get("topology.reliability.mode") == "EFFECTIVELY_ONCE"
        if self.stateful and self.is_spout and not isinstance(self.component, StatefulComponent):
            log.warning(
                "%s: this spout keeps no checkpointed state (it is no StatefulComponent): "
                "after a rollback it does not rewind, and what it emitted since the last "
                "consistent checkpoint is not replayed",
                self._where,
            )
        if self.stateful:
            self._wait_for_start()
            self._start_stateful(first=True)
        else:
            self.component.initialize(config, self.context)
        self._initialized = True
        if isinstance(self.component, Bolt):
            kind = getattr(self.component, "tuple_type", Tuple)
            if not (isinstance(kind, type) and issubclass(kind, Tuple)):
                raise UserCodeError(
                    f"{self._where}: {type(self.component).__qualname__}.tuple_type is "
                    f"{kind!r}, not heron_core.api.Tuple or a subclass of it"
                )
            self._tuple_type: type[Tuple] = kind
            # the bolt takes whole batches where it overrides process_batch
            hook = self.component.process_batch
            batches = getattr(hook, "__func__", None) is not Bolt.process_batch
            self._process_batch: Callable[[InputBatch], Any] | None = hook if batches else None
        if self.hooks is not None:
            self._hook_component(self.hooks)
        self._flush_s, self._linger_s, self._metrics_s = self._intervals()
        self.metrics.export_s = self._metrics_s
        self.metrics.sample_s = float(
            setting(config, "heron.instance.metrics.system.sample.interval.sec")
        )
        self._ready = True
        self.pacer = Pacer(self._flush_s)
        # What exists now lives as long as the process: keep it out of every collection, and
        # collect young objects far less often than Python's default (see the config key).
        gc.collect()
        gc.freeze()
        gc.set_threshold(int(setting(config, "heron.instance.gc.threshold")), 10, 10)

    # --- effectively-once ------------------------------------------------------------------
    def _wait_for_start(self) -> None:
        """EFFECTIVELY_ONCE, before the component starts: wait for the state to start from
        (a rollback) and then the start. Tuples that came before the rollback are dropped
        (`_on_restore`); those after it are kept for the bolt loop."""
        self._halted = True
        self._serve_until(
            lambda: self._start_due and self._restore is not None, "the state to start from"
        )

    def _on_restore(self, message: ckptmgr_pb2.RestoreInstanceStateRequest) -> None:
        """Roll back: drop what is buffered (of the run before), hold until the start, and
        answer (what this instance sends after the answer belongs to the new run)."""
        self._restore = message
        self._start_due = False
        self._halted = True
        self._early_data.clear()
        if self._ready:
            self.router.discard()
        self.client.drop_data()
        log.info(
            "%s: rolling back to checkpoint %s", self._where, message.checkpoint_id or "(none)"
        )
        self.client.send_message(
            ckptmgr_pb2.RestoreInstanceStateResponse(
                checkpoint_id=message.checkpoint_id,
                restore_txid=message.restore_txid,
                task_id=self.args.task_id,
            )
        )

    def _on_stateful_start(self, message: ckptmgr_pb2.StartInstanceStatefulProcessing) -> None:
        if self._restore is None or not self._halted:
            return
        if not self._initialized:
            self._start_due = True  # `_wait_for_start` returns; `_setup` starts the component
            return
        self._start_stateful(first=False)
        held, self._early_data = self._early_data, []
        for payload in held:
            self._on_data(payload)

    def _start_stateful(self, first: bool) -> None:
        """Give a stateful component its state (``init_state``) and start it (the first
        time ``initialize``; after a rollback ``restart_from_state``)."""
        component = self.component
        restore = self._restore
        assert restore is not None
        state: State | None = None
        if isinstance(component, StatefulComponent):
            state = HashMapState()
            if restore.state:
                try:
                    state = pickle.loads(restore.state)
                except Exception as exc:
                    raise UserCodeError(
                        f"{self._where}: cannot unpickle the state of checkpoint "
                        f"{restore.checkpoint_id}: {exc!r}"
                    ) from exc
        self._user_state = state
        if first:
            if state is not None:
                component.init_state(state)
            component.initialize(self.config, self.context)
        elif state is not None:
            component.restart_from_state(state, self.config, self.context)
        self._halted = False
        self._start_due = False

    def _on_checkpoint(self, message: ckptmgr_pb2.InitiateStatefulCheckpoint) -> None:
        """Save the state for ``message``'s checkpoint, behind everything emitted so far (a
        bolt has processed every input that came before the checkpoint's markers). One that
        comes before the component started (a restarted instance) is ignored: a rollback
        follows."""
        if self._halted or not self._initialized:
            return
        self.router.flush()
        self.acks.flush()
        data = b""
        if self._user_state is not None:
            self.component.pre_save(message.checkpoint_id)
            try:
                data = pickle.dumps(self._user_state, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:
                raise UserCodeError(
                    f"{self._where}: cannot pickle the state for checkpoint "
                    f"{message.checkpoint_id}: {exc!r}"
                ) from exc
        self.client.send_message(
            ckptmgr_pb2.StoreInstanceStateCheckpoint(
                checkpoint_id=message.checkpoint_id, state=data
            )
        )

    # --- task hooks ------------------------------------------------------------------------
    def add_hook(self, hook: TaskHook) -> None:
        """Register ``hook`` (`InstanceContext.add_task_hook`). The first one puts a hooked
        router in the collector and the hooked ``ack`` and ``fail`` in place of the
        collector's (and of the copies bound onto the component); the component's own
        callbacks are wrapped once ``initialize`` has returned.

        Raises:
            TypeError: ``hook`` is not a `TaskHook`.
            HeronError: ``initialize`` has returned (callbacks captured since would miss it).
        """
        if self._initialized:
            raise HeronError(
                f"{self._where}: add_task_hook({type(hook).__qualname__}) after initialize "
                "(open/prepare) returned: add task hooks in initialize, or name them in "
                "topology.auto.task.hooks"
            )
        if self.hooks is not None:
            self.hooks.add(hook)
            return
        hooks = TaskHooks(self.args.task_id, self._where)
        hooks.add(hook)
        self.hooks = hooks
        collector = self.collector
        collector.hook_emits(hooks.emit)
        if isinstance(collector, BoltCollector):
            collector.ack = hooked_settle(collector.ack, hooks.bolt_acked)
            collector.fail = hooked_settle(collector.fail, hooks.bolt_failed)
        for name in self._bound:
            setattr(self.component, name, getattr(collector, name))

    def _hook_component(self, hooks: TaskHooks) -> None:
        """Once ``initialize`` has returned: wrap a bolt's callbacks so that each input it
        processes is reported, then call the hooks' ``prepare``."""
        bolt = self.component
        if isinstance(bolt, Bolt):
            bolt.process = hooked_process(bolt.process, hooks)  # type: ignore[method-assign,assignment]
            bolt.process_tick = hooked_process(bolt.process_tick, hooks)  # type: ignore[method-assign,assignment]
            if self._process_batch is not None:
                self._process_batch = hooked_process_batch(self._process_batch, hooks)
        hooks.prepare(self.config, self.context)

    # --- main loops --------------------------------------------------------------------------
    def run(self) -> int:
        """Run until stopped; the process exit status."""
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        status = 0
        try:
            self._setup()
            log.info("%s started (pid-local task %d)", self._where, self.args.task_id)
            self.pacer.start()
            if self.is_spout:
                self._spout_loop()
            else:
                self._bolt_loop()
            self._shutdown()
        except SystemExit as exc:
            status = int(exc.code or 0)
        except Exception as exc:
            log.exception(
                "%s: user code raised; the instance exits and will be restarted", self._where
            )
            self.metrics.exceptions.add(exc)
            status = 1
        finally:
            self.pacer.stop()
            self._publish_final()
            self.client.close()
            self._zmq.term()
        return status

    def _publish_final(self) -> None:
        """The last metrics message (with what was not published yet: counts, every user
        metric, the exception that ends the process), delivered before the process exits."""
        try:
            self._publish_metrics(final=True)
        except Exception:  # never hide the exit status or the original error
            log.exception("%s: cannot build the final metrics message", self._where)
            return
        if not self.client.flush_metrics(2.0):
            log.warning("%s: the final metrics message was not delivered", self._where)

    def _shutdown(self) -> None:
        self.router.flush()
        self.acks.flush()
        if not self.client.flush_blocking(1.0):
            log.warning(
                "%s: stopping with %d outgoing batch(es) of tuples or acks still unsent after "
                "1 s: the stream manager stopped reading first; they are dropped",
                self._where,
                len(self.client.pending),
            )
        if self.hooks is not None:
            self.hooks.clean_up()
        self.component.close()

    def _intervals(self) -> tuple[float, float, float]:
        """Flush interval, idle linger and metrics export interval, in seconds."""
        flush_s = float(setting(self.config, "heron.instance.batch.flush.interval.ms")) / 1000.0
        linger_s = float(setting(self.config, "heron.instance.batch.linger.ms")) / 1000.0
        metrics_s = float(setting(self.config, "heron.metrics.export.interval.sec"))
        return flush_s, min(linger_s, flush_s), metrics_s

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

    def _flush(self, now: float) -> None:
        """Send every partly filled batch and the buffered acks; lower the pacer's flag."""
        self.pacer.due[0] = False
        self.router.flush()
        self.acks.flush()
        self._last_flush = now

    def _spout_loop(self) -> None:
        """Call ``next_tuple`` in rounds. A round ends when a call emits nothing, the
        outgoing queue is full, max spout pending is reached, or the flush interval has
        passed (the pacer's flag, checked after every call, however long the calls take);
        between rounds the loop reads acks and control messages, expires timed-out trees,
        sends what is buffered when due, publishes metrics and honours a stop request."""
        spout = self.component
        next_tuple = spout.next_tuple
        collector = self.collector
        assert isinstance(collector, SpoutCollector)
        client = self.client
        clock = self._clock
        due = self.pacer.due
        linger_s, metrics_s = self._linger_s, self._metrics_s
        wait_ms = max(1, int(setting(self.config, "topology.sleep.spout.wait.strategy.time.ms")))
        acks = self.immediate_acks
        in_flight = self.in_flight
        limit = self.config.get("topology.max.spout.pending") if self.acking else None
        limit = int(limit) if limit else 1 << 62
        timeout_s = float(setting(self.config, "topology.message.timeout.secs"))
        if not setting(self.config, "topology.enable.message.timeouts") or not self.acking:
            timeout_s = math.inf
        scan_s = timeout_s / max(
            1, int(setting(self.config, "heron.instance.acknowledgement.nbuckets"))
        )
        hooks = self.hooks  # fixed once initialize has returned
        start = self._last_flush = clock()
        next_metrics = start + metrics_s
        next_scan = start + scan_s
        readable, wait = client.readable, client.wait
        waited = ready = False  # whether the last round ended in a wait, and what it saw
        while not self._stop:
            if ready if waited else readable(0):
                self._read_control()
            if hooks is None:
                while acks:
                    msg_id, stream = acks.popleft()
                    spout.ack(msg_id)
                    self._spout_outcome(self.acked, stream)
            else:
                while acks:
                    msg_id, stream = acks.popleft()
                    spout.ack(msg_id)
                    self._spout_outcome(self.acked, stream)
                    hooks.spout_acked_at_once(msg_id)
            idle = True
            drained = not client.pending or client.drain()  # also while halted: answers wait
            if self._active and not self._halted and len(in_flight) < limit and drained:
                before = collector.emitted
                while not due[0]:
                    mark = collector.emitted
                    next_tuple()
                    if collector.emitted == mark or client.pending or len(in_flight) >= limit:
                        break
                idle = collector.emitted == before
            now = clock()
            if now >= next_scan:
                for msg_id, stream in in_flight.expired(timeout_s):
                    self.timed_out[stream] = self.timed_out.get(stream, 0) + 1
                    self._spout_outcome(self.failed, stream)
                    spout.fail(msg_id)
                    if hooks is not None:
                        hooks.spout_failed(msg_id, None)
                next_scan = now + scan_s
            if due[0] or (idle and now - self._last_flush >= linger_s):
                self._flush(now)
            if now >= next_metrics:
                self._publish_metrics()
                next_metrics = now + metrics_s
            waited = idle or bool(client.pending)
            if waited:
                ready = wait(wait_ms)

    def _bolt_loop(self) -> None:
        """Read batches and process them. Between any two ``process`` calls (and after each
        batch) the pacer's flag is checked: when the flush interval has passed, what the bolt
        emitted and acked is sent, and ticks, metrics and a stop request are served. When its
        input runs dry the bolt sends what it holds after ``heron.instance.batch.linger.ms``."""
        client = self.client
        socket = client.socket
        clock = self._clock
        due = self.pacer.due
        linger_s, metrics_s = self._linger_s, self._metrics_s
        tick_secs = self.config.get("topology.tick.tuple.freq.secs")
        self._tick_s = float(tick_secs) if tick_secs else math.inf
        now = self._last_flush = clock()
        flush_at = math.inf  # set when the input runs dry: when to send what is buffered
        self._next_metrics = now + metrics_s
        self._next_tick = now + self._tick_s
        on_data = self._on_data
        dispatch = self._dispatcher.dispatch
        for payload in self._early_data:
            on_data(payload)
        self._early_data.clear()
        while not self._stop:
            now = clock()
            deadline = min(flush_at, self._next_metrics, self._next_tick)
            timeout_ms = max(0, int((deadline - now) * 1000) + 1)
            if client.pending and not client.drain():
                client.writable(min(timeout_ms, 100))
            elif client.readable(min(timeout_ms, 100)):
                for _ in range(_MAX_MESSAGES_PER_WAKE):
                    try:
                        frames = socket.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:  # drained the input: send what is buffered, or soon
                        flush_at = min(flush_at, self._last_flush + linger_s)
                        break
                    if frames[0] != DATA:
                        dispatch(frames)
                    elif self._halted:  # after a rollback, before the start
                        self._early_data.append(frames[2])
                    else:
                        on_data(frames[2])
                    if client.pending or due[0] or self._stop:  # keep latency bounded
                        break
            now = clock()
            if due[0] or now >= flush_at:
                self._flush(now)
                flush_at = math.inf
            self._housekeeping(now)

    def _housekeeping(self, now: float) -> None:
        """A bolt's tick and metrics, when their time has come."""
        if now >= self._next_tick:
            self._next_tick = now + self._tick_s
            self._tick()
        if now >= self._next_metrics:
            self._next_metrics = now + self._metrics_s
            self._publish_metrics()

    def _serve(self) -> None:
        """`InputBatch.serve` for the bolt's batches: between two inputs, once the flush
        interval has passed, do what the loop does between batches (and count the inputs of
        the batch processed so far as executed)."""
        if self._stop:
            raise _StopRequested
        batch = self._batch
        if batch is not None and batch._left >= 0:
            done = len(batch.values) - batch._left
            counters = self.metrics.counters
            counters[f"__execute-count/{batch.component}/{batch.stream}"] += done - self._counted
            self._counted = done
        now = self._clock()
        self._flush(now)
        self._housekeeping(now)

    def _decode(self, payload: bytes) -> tuple[tuple_pb2.TupleBatch, list[Any], Any] | None:
        """The batch, its rows and (acking on) their trees, as runs (``count_runs``); None,
        with a log line, for a payload that is not a batch our senders make, or whose values
        name a class tuple values may not hold (`ValuePolicy.loads` resolves no other name):
        its rows are dropped, not processed, and counted in ``__input-batches-dropped``.
        Nothing decoded here is called or executed: marshal's values (which could be code
        objects, refused where marshal can refuse them) and the trees' ids are only read.

        Raises:
            UserCodeError: with ``topology.fall.back.on.java.serialization``, the rows
                unpickle to a class this process cannot load (the topology's code, not the
                wire, is wrong; without it, every class allowed was loaded at the start, and
                such a batch is malformed).
        """
        batch = None
        try:
            batch = tuple_pb2.TupleBatch.FromString(payload)
            if batch.serializer == _MARSHAL:
                rows = _load_marshal(batch.values)
            else:
                rows = self.values.loads(batch.values)
            if not isinstance(rows, list):
                raise ValueError(f"the rows are a {type(rows).__name__}, not a list")
            trees = None
            if self.acking:  # a batch without roots comes from a sender with acking off
                if batch.roots:
                    trees = _load_marshal(batch.roots)
                    if count_runs(trees) != len(rows):
                        raise ValueError(f"{len(rows)} rows came with trees for others")
                else:
                    trees = [()] * len(rows)
        except RefusedValueClass as exc:
            self._refused += 1
            if self._refused <= 10 or self._refused % 1000 == 0:
                assert batch is not None
                log.warning(
                    "%s: dropped a batch of %d bytes from component %r, task %d, stream %r "
                    "(%d so far): %s",
                    self._where,
                    len(payload),
                    batch.src_component,
                    batch.src_task,
                    batch.stream,
                    self._refused,
                    exc,
                )
            return None
        except Exception as exc:  # protobuf, marshal and pickle errors of a malformed payload
            if self.values.fall_back and isinstance(exc, ImportError | AttributeError):
                raise UserCodeError(
                    f"{self._where}: a batch's tuples need code this process cannot load: {exc}"
                ) from exc
            self._malformed += 1
            if self._malformed <= 10 or self._malformed % 1000 == 0:
                log.warning(
                    "%s: dropped a malformed batch of %d bytes from its stream manager "
                    "(%d so far): %r",
                    self._where,
                    len(payload),
                    self._malformed,
                    exc,
                )
            return None
        return batch, rows, trees

    def _on_data(self, payload: bytes) -> None:
        decoded = self._decode(payload)
        if decoded is None:
            return
        batch, rows, trees = decoded
        source, stream, task = batch.src_component, batch.stream, batch.src_task
        key = (source, stream)
        stats = self._inputs.get(key)
        if stats is None:
            stats = self._inputs[key] = InputStats()
        start = _perf()
        inputs = InputBatch(
            source,
            stream,
            task,
            rows,
            stats,
            start,
            self._tuple_type,
            trees,
            self.pacer.due,
            self._serve,
        )
        hook = self._process_batch
        self._batch, self._counted = inputs, 0
        try:
            if hook is None:
                inputs._each(self.component.process, paced=True)
            else:
                hook(inputs)
        except _StopRequested:
            log.info(
                "%s: stop requested; %d inputs of a batch from %s/%s left unprocessed",
                self._where,
                inputs._left,
                source,
                stream,
            )
            return
        finally:
            self._batch = None
        if hook is not None:
            settled = inputs.acked + inputs.failed
            if settled and trees is not None:
                raise UserCodeError(
                    f"{self._where}: process_batch counted {settled} inputs acked or failed "
                    "in the batch, but acking is on: ack or fail each input's Tuple "
                    "(batch.tuples()) so that its tuple trees complete, or settle the batch "
                    "with emit_and_ack(batch, outputs)"
                )
            if settled:
                stats.acked += inputs.acked
                stats.failed += inputs.failed
                stats.received_s += settled * start
        now = _perf()
        self._settle(now)
        elapsed_ms = (now - start) * 1000.0
        key_name = f"{source}/{stream}"
        self.metrics.counters["__execute-count/" + key_name] += len(rows) - self._counted
        self.metrics.add_latency("__execute-latency/" + key_name, elapsed_ms, len(rows))

    def _tick(self) -> None:
        tup = Tuple("__tick", TICK_COMPONENT, TICK_STREAM, -1, [self._tick_s])
        self.component.process_tick(tup)
        self._settle(_perf())

    def _settle(self, now: float) -> None:
        for stats in self._inputs.values():
            stats.settle(now)

    def _publish_metrics(self, final: bool = False) -> None:
        """Send the metrics of the interval that ends now (``final``: the last one)."""
        metrics = self.metrics
        counters = metrics.counters
        counters["__metrics-messages-dropped"] = self.client.metrics_dropped
        if self._malformed or self._refused:
            counters["__input-batches-dropped"] = self._malformed + self._refused
        if self._ready:
            self._count_outcomes(counters)
        self.client.send_message(metrics.snapshot(final))

    def _count_outcomes(self, counters: dict[str, int]) -> None:
        """Bring the cumulative counters up to date (`InstanceMetrics` sends their deltas)."""
        for stream, count in self.router.emit_counts().items():
            counters["__emit-count/" + stream] = count
        for stream, count in self.acked.items():
            counters["__ack-count/" + stream] = count
        for stream, count in self.failed.items():
            counters["__fail-count/" + stream] = count
        self._settle(_perf())
        for (source, stream), stats in self._inputs.items():
            counters[f"__ack-count/{source}/{stream}"] = stats.acked
            counters[f"__fail-count/{source}/{stream}"] = stats.failed
            new = stats.settled - self._published_outcomes.get((source, stream), 0)
            if new:
                self.metrics.add_latency(
                    f"__process-latency/{source}/{stream}", stats.process_s * 1000.0, new
                )
                stats.process_s = 0.0
                self._published_outcomes[(source, stream)] = stats.settled
        if self.is_spout:
            for stream, count in self.timed_out.items():
                counters["__timeout-count/" + stream] = count
            self.metrics.gauges["__pending-count/default"] = len(self.in_flight)
