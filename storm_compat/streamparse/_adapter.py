"""Native spouts and bolts that run pystorm (streamparse) components inside the instance.

Under Storm, ``streamparse_run pkg.module.Class`` starts the component in a subprocess that
speaks the multilang protocol: pystorm reads JSON commands and tuples from stdin and writes
emits, acks, fails and logs to stdout. Here the component runs in the instance process, driven
by the same pystorm code with the pipe cut out: the adapter hands each command or tuple to
pystorm's own loop body (``_run``) through the component's read path, and every message pystorm
would write ends in `_Sink`, a class placed just above pystorm's ``Component`` in the MRO of the
user's class, which turns it into a call on the native collector. So auto-ack, auto-anchor,
auto-fail, ``process_tick``, ``BatchingBolt`` and ``ReliableSpout`` behave exactly as pystorm
wrote them, without any JSON.

The per-tuple path is kept short where the user's class keeps pystorm's own code. A bolt takes
whole batches from the runtime (``Bolt.process_batch``); where its class keeps ``Bolt._run`` and
``read_tuple``, a batch goes through an inlined copy of them: the ids, namedtuple values and
pystorm ``Tuple`` s built by C loops (``map``, ``zip``, ``tuple.__new__``), a loop compiled
with the hot path (``_inputs.py``) calling ``process`` for each, auto-ack straight
to the native collector (with acking off, counted in the batch: no native Tuple is built for
an input settled during its ``process`` call), and ``_current_tups`` a property read from the
input being processed instead of a list stored twice per input. pystorm's ``emit``, ``ack`` and
``fail`` are replaced on the instance by direct calls on the native collector (no message dict,
no id round trip; with acking off, an emit is one check and one call); a spout that keeps
``Spout._run`` gets each command as a direct call of the method ``_run`` would dispatch to. A
class that overrides any of those gets pystorm's full message path for it.

Differences from a pystorm subprocess (deliberate):
- ``TicklessBatchingBolt``: its timer thread only marks batches due; they are processed on the
  instance thread at the next tuple or tick (the streamparse loader gives such bolts tick tuples
  every ``secs_between_batches``), since the native collector is single-threaded.
- Storm heartbeats are not sent (nothing to answer: there is no pipe).
- ``log`` goes to the instance log; ``error`` (``raise_exception``) to the task context's
  ``report_error`` (the instance log and the topology's exception log); ``report_metric``
  values feed a metric registered with the task's context under the call's name, published at
  every metrics export (numbers add up, as in a multilang subprocess).
- An unknown or repeated ack/fail id is ignored with a warning (Storm kills the ShellBolt).
- With acking off, emits are not anchored at all (the kernel ignores anchors then), so
  anchoring to an input already acked, or to an unknown id, draws no warning.
- Values that are not a list or tuple raise the kernel's ``EmitTypeError`` (a ``TypeError``,
  naming the topology, component and stream) where the emit goes straight to it.
- Where the inlined loop runs, ``auto_anchor`` is read once per input, as its processing
  starts (pystorm reads it at each emit).
"""

from __future__ import annotations

import abc
import contextlib
import io
import logging
import sys
from collections.abc import Callable, Iterable, Sequence
from itertools import count, repeat
from logging.handlers import RotatingFileHandler
from os.path import join
from typing import Any, NoReturn

import pystorm
from pystorm.bolt import TicklessBatchingBolt

from heron_core.api import Bolt, Grouping, InputBatch, Spout
from heron_core.api import TopologyContext as NativeContext
from heron_core.api import Tuple as NativeTuple
from heron_core.api.constants import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM
from heron_core.config import acking_enabled, setting
from heron_core.errors import HeronError, UserCodeError
from heron_core.instance._anchoring import InputCursor
from heron_core.instance._bolt import BoltCollector
from heron_core.multilang import ShellMetric
from heron_core.plan import GroupingKind
from heron_core.plugins import resolve_class
from storm_compat.streamparse._inputs import (
    AutoAnchoredEmit,
    Current,
    all_of_length,
    run_inputs,
)
from storm_compat.streamparse._received import received

__all__ = ["PystormBoltAdapter", "PystormSpoutAdapter", "storm_context"]

log = logging.getLogger(__name__)

_STORM_LEVELS = {0: 5, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}
_PYTHON_LEVELS = {
    "critical": logging.CRITICAL,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": logging.DEBUG,
}
_GROUPING_TYPES = {
    GroupingKind.SHUFFLE: "SHUFFLE",
    GroupingKind.FIELDS: "FIELDS",
    GroupingKind.LOWEST: "FIELDS",
    GroupingKind.ALL: "ALL",
    GroupingKind.NONE: "NONE",
    GroupingKind.DIRECT: "DIRECT",
    GroupingKind.CUSTOM: "CUSTOM_SERIALIZED",
    GroupingKind.LOCAL_OR_SHUFFLE: "LOCAL_OR_SHUFFLE",
    GroupingKind.PARTIAL_KEY: "CUSTOM_SERIALIZED",
}
_NEXT = {"command": "next", "id": ""}
_ACTIVATE = {"command": "activate", "id": ""}
_DEACTIVATE = {"command": "deactivate", "id": ""}
_GONE = object()
_UNBUILT = object()  # the input being processed came in an InputBatch: no native Tuple yet
_PTuple = pystorm.Tuple
_ONE_ANCHOR = (str, _PTuple)
# runs inputs through the inlined loop: source, stream, task, values, native Tuples (None: those
# of the batch with acking on, walked by the collector's cursor where it can), batch
_RunInputs = Callable[[str, str, Any, Sequence[Any], Iterable[Any] | None, Any], None]


PYSTORM_SERIES = "3.1"
"""The pystorm release series whose component internals the in-process adapter runs (the
``streamparse`` extra pins it; 3.1.4, of 2018, is pystorm's last release)."""

PYSTORM_INTERNALS = (
    ("component", "Component", "_run"),
    ("component", "Component", "_handle_run_exception"),
    ("bolt", "Bolt", "_run"),
    ("bolt", "Bolt", "_current_tups"),
    ("bolt", "Bolt", "_handle_run_exception"),
    ("bolt", "BatchingBolt", "_run"),
    ("spout", "Spout", "_run"),
)
"""The loop body, its error handling and the bolt's current inputs: what the adapter calls or
replaces, beyond pystorm's public component contract (the multilang protocol)."""


def check_pystorm() -> None:
    """Raise a `HeronError` saying what to do when the installed pystorm is not of the series
    whose internals the adapter runs (they would fail deep in the first tuple otherwise)."""
    version = getattr(pystorm, "__version__", "unknown")
    missing = [
        f"{module}.{cls}.{name}"
        for module, cls, name in PYSTORM_INTERNALS
        if not hasattr(getattr(getattr(pystorm, module, None), cls, None), name)
    ]
    if missing or not str(version).startswith(PYSTORM_SERIES + "."):
        lacks = f" (it lacks {', '.join(missing)})" if missing else ""
        raise HeronError(
            f"pystorm {version} is installed{lacks}; running streamparse components in-process "
            f"needs pystorm {PYSTORM_SERIES}: pip install 'pystorm=={PYSTORM_SERIES}.*', or run "
            "them as multilang subprocesses (heron sparse run --multilang, or the config "
            "'streamparse.multilang' of a component), which only speaks pystorm's protocol"
        )


def storm_context(context: NativeContext, components: Iterable[str]) -> dict[str, Any]:
    """The multilang handshake ``context`` Storm would send this task (what pystorm's
    ``initialize(storm_conf, context)`` receives), built from the native context.

    Args:
        context: the task's native context.
        components: every component of the topology (for ``task->component``).
    """
    me = context.get_component_id()
    targets = context.get_this_targets()
    sources: dict[str, dict[str, Any]] = {}
    fields: dict[str, dict[str, list[str]]] = {}
    for stream, grouping in (context.get_this_sources() or {}).items():
        source = str(stream.component_id)
        sources.setdefault(source, {})[stream.stream_id] = _grouping_json(grouping)
        fields.setdefault(source, {})[stream.stream_id] = list(
            context.get_output_fields(source, stream.stream_id)
        )
    return {
        "taskid": context.get_task_id(),
        "componentid": me,
        "task->component": {
            str(task): name for name in components for task in context.get_component_tasks(name)
        },
        "streams": list(targets),
        "stream->outputfields": {s: list(context.get_output_fields(me, s)) for s in targets},
        "stream->target->grouping": {
            s: {target: _grouping_json(g) for target, g in by_target.items()}
            for s, by_target in targets.items()
        },
        "source->stream->grouping": sources,
        "source->stream->fields": fields,
    }


def _grouping_json(grouping: Grouping) -> dict[str, Any]:
    described: dict[str, Any] = {"type": _GROUPING_TYPES[grouping.kind]}
    if grouping.kind in (GroupingKind.FIELDS, GroupingKind.LOWEST):
        described["fields"] = list(grouping.grouping_fields)
    return described


def _release_stdio(serializer: Any) -> None:
    """pystorm's JSON serializer wraps sys.stdin/sys.stdout's buffers in TextIOWrappers, which
    close those buffers when collected: detach them first (they are never used here)."""
    for stream in (serializer.input_stream, serializer.output_stream):
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(ValueError):  # already detached
                stream.detach()


def _not_a_tuple(tup: Any) -> NoReturn:
    raise TypeError(f"All Tuples must be either lists or tuples, received {type(tup)!r} instead.")


class _SinkSerializer:
    """Stands in for pystorm's serializer (used directly by ``StormHandler``)."""

    def __init__(self, driver: _Driver) -> None:
        self._driver = driver

    def send_message(self, message: Any) -> None:
        self._driver.sink_message(message)

    def read_message(self) -> Any:
        return self._driver.sink_read()


class _Sink(pystorm.component.Component):
    """The bottom of every adapted pystorm class: where pystorm's I/O ends up."""

    _heron_driver: _Driver

    def emit(
        self,
        tup: Any,
        tup_id: Any = None,
        stream: str | None = None,
        anchors: Any = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        if not isinstance(tup, list | tuple):
            _not_a_tuple(tup)
        return self._heron_driver.sink_emit(
            tup, tup_id, stream, anchors, direct_task, need_task_ids
        )

    def send_message(self, message: Any) -> None:
        self._heron_driver.sink_message(message)

    def read_message(self) -> Any:
        return self._heron_driver.sink_read()

    def read_command(self) -> Any:
        return self._heron_driver.sink_read()

    def read_task_ids(self) -> NoReturn:
        raise HeronError("task ids are returned by emit in-process; nothing to read")

    def _setup_component(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """pystorm's set-up without the pipe: names, config and logging (records go to the
        instance log, or to ``pystorm.log.path`` when set, as pystorm does)."""
        self.topology_name = setting(storm_conf, "topology.name")
        self.task_id = context.get("taskid", "")
        self.component_name = context.get("componentid") or ""
        self.debug = setting(storm_conf, "topology.debug")
        self.storm_conf = storm_conf
        self.context = context
        self.logger = logging.getLogger(f"pystorm.component.{self.component_name}")
        level = _PYTHON_LEVELS.get(storm_conf.get("pystorm.log.level", "info"), logging.INFO)
        if self.debug:
            level = logging.DEBUG
        log_path = storm_conf.get("pystorm.log.path")
        if log_path:
            name = storm_conf.get(
                "pystorm.log.file", "pystorm_{topology_name}_{component_name}_{task_id}_{pid}.log"
            ).format(
                topology_name=self.topology_name,
                component_name=self.component_name,
                task_id=self.task_id,
                pid=self.pid,
            )
            handler = RotatingFileHandler(
                join(log_path, name),
                maxBytes=storm_conf.get("pystorm.log.max_bytes", 1000000),
                backupCount=storm_conf.get("pystorm.log.backup_count", 10),
            )
            handler.setLevel(level)
            handler.setFormatter(
                logging.Formatter(
                    storm_conf.get(
                        "pystorm.log.format", "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
                    )
                )
            )
            logging.getLogger().addHandler(handler)
        self.logger.setLevel(level)
        logging.getLogger("pystorm").setLevel(level)


class _Driver(abc.ABC):
    """Runs one pystorm component: builds it, feeds pystorm's loop, receives its output.

    Attributes:
        class_path: the pystorm class, ``pkg.module.Class`` (``module:Class`` accepted).
        components: every component of the topology (for the handshake context).
        code_dir: a directory to put on ``sys.path`` before importing the class (None:
            none; an instance already has the topology's code directory, its cwd, there).
    """

    _is_spout: bool
    _base: type

    def __init__(
        self, class_path: str, components: Sequence[str], code_dir: str | None = None
    ) -> None:
        check_pystorm()  # as the topology is built: a clear error before anything starts
        self.class_path = class_path
        self.components = tuple(components)
        self.code_dir = code_dir

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.class_path!r})"

    # --- start-up -------------------------------------------------------------------------
    def _start(self, collector: Any, config: dict[str, Any], context: NativeContext) -> None:
        check_pystorm()  # the instance's pystorm may not be the one the topology was built with
        self._out = collector
        self._context = context
        self._where = (
            f"topology {context.get_topology_name()!r}, component "
            f"{context.get_component_id()!r}, task {context.get_task_id()}"
        )
        self._message: Any = None
        self._pending: dict[Any, NativeTuple | None] = {}
        # the input of the running process() call, not in _pending until it outlives the call
        self._now = Current()
        # Storm's tuple ids are decimal strings (repr of an int: faster than str or int.__repr__)
        self._ids = count(1)
        self._next_id = map(repr, self._ids).__next__
        self._due = False
        self._metrics: dict[str, ShellMetric] = {}
        self._metrics_s = setting(config, "heron.metrics.export.interval.sec")
        self._warned: dict[str, int] = {}
        if self.code_dir is not None and self.code_dir not in sys.path:
            sys.path.insert(0, self.code_dir)
        cls = self._user_class()
        adapted = type(cls.__name__, (cls, _Sink), {"__module__": cls.__module__})
        adapted.__qualname__ = cls.__qualname__
        try:
            component = adapted(serializer="json")
        except Exception as exc:
            raise UserCodeError(
                f"{self._where}: constructing {self.class_path} raised {exc!r}"
            ) from exc
        _release_stdio(component.serializer)
        component.serializer = _SinkSerializer(self)
        component._heron_driver = self
        if isinstance(component, TicklessBatchingBolt):
            component.process_batches = self._mark_due  # the timer thread only marks
        self.component = component
        self._shortcut(component)
        storm = storm_context(context, self.components)
        component._setup_component(config, storm)
        try:
            component.initialize(config, storm)
        except Exception as exc:
            raise UserCodeError(
                f"{self._where}: {self.class_path}.initialize() raised {exc!r}"
            ) from exc

    def _user_class(self) -> type:
        try:
            cls = resolve_class(self.class_path)
        except HeronError as exc:
            raise UserCodeError(f"{self._where}: cannot load {self.class_path}: {exc}") from exc
        if not (isinstance(cls, type) and issubclass(cls, self._base)):
            kind = "Spout" if self._is_spout else "Bolt"
            raise UserCodeError(
                f"{self._where}: {self.class_path} is not a pystorm {kind} subclass "
                f"(streamparse.{kind}), got {cls!r}"
            )
        return cls

    @abc.abstractmethod
    def _shortcut(self, component: Any) -> None:
        """Where the user's class keeps pystorm's own loop, emit, ack and fail, replace them
        on the instance by equivalent code that skips the message dicts and id round trips."""

    # --- driving pystorm's loop -------------------------------------------------------------
    def _drive(self, message: Any) -> None:
        """One turn of pystorm's ``run()`` loop with ``message`` as what it reads."""
        self._message = message
        try:
            self.component._run()
        except Exception as exc:
            self._failed(exc)
        self._now.current = None  # what _run assigned to _current_tups, if inlined process runs
        if self._due:
            self._process_due_batches()

    def _failed(self, exc: Exception) -> None:
        """What pystorm's ``run()`` does when ``_run`` raises: log, report (and auto-fail),
        then exit when ``exit_on_exception``."""
        component = self.component
        component.logger.error(f"Exception in {type(component).__name__}.run()", exc_info=True)
        try:
            component._handle_run_exception(exc)
        except Exception:
            component.logger.error("While trying to handle previous exception...", exc_info=True)
        if component.exit_on_exception:
            raise UserCodeError(
                f"{self._where}: {self.class_path} raised {exc!r} (pystorm components exit on "
                "an exception unless exit_on_exception is False)"
            ) from exc

    def _mark_due(self) -> None:
        self._due = True

    def _process_due_batches(self) -> None:
        self._due = False
        component = self.component
        with component._batch_lock:
            try:
                type(component).process_batches(component)
            except Exception as exc:
                self._failed(exc)

    def sink_read(self) -> Any:
        """What pystorm reads: the one message of this turn."""
        message, self._message = self._message, None
        if message is None:
            raise HeronError(
                f"{self._where}: {self.class_path} read more than the message it was given "
                "(in-process pystorm components get one command or tuple per turn)"
            )
        return message

    # --- what pystorm writes ------------------------------------------------------------
    def sink_emit(
        self,
        tup: Sequence[Any],
        tup_id: Any,
        stream: str | None,
        anchors: Any,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        if self._is_spout:
            ids = self._out.emit(tup, tup_id, stream or DEFAULT_STREAM, direct_task, need_task_ids)
        else:
            ids = self._out.emit(
                tup, stream or DEFAULT_STREAM, self._anchors(anchors), direct_task, need_task_ids
            )
        return ids if need_task_ids else None

    def _anchors(self, anchors: Any) -> list[NativeTuple]:
        """The native tuples of pystorm anchors (Tuples or ids, or one of them)."""
        if not anchors:
            return []
        pending = self._pending
        now = self._now
        current = now.id
        natives: list[NativeTuple] = []
        for anchor in (anchors,) if isinstance(anchors, _ONE_ANCHOR) else anchors:
            key = anchor.id if isinstance(anchor, _PTuple) else anchor
            native = now.native if current and key == current else pending.get(key, _GONE)
            if isinstance(native, InputCursor):  # named as an anchor: it needs its Tuple now
                native = now.native = native.tuple()
            if isinstance(native, NativeTuple):
                natives.append(native)
            elif native is _GONE:
                self._warn(f"anchored to {anchor!r}, unknown or already acked or failed")
        return natives

    def sink_message(self, message: Any) -> None:
        """A message pystorm writes to Storm (ack, fail, log, error, metrics, sync, emit)."""
        if not isinstance(message, dict):
            self.component.logger.error(
                "%s attempted to send a non dict message to Storm: %r", self._where, message
            )
            return
        command = message.get("command")
        if command == "ack":
            self._ack(message.get("id"))
        elif command == "fail":
            self._fail(message.get("id"))
        elif command == "sync":
            pass
        elif command == "log":
            level = _STORM_LEVELS.get(message.get("level", 2), logging.INFO)
            self.component.logger.log(level, "%s", message.get("msg"))
        elif command == "error":  # raise_exception: msg is the stack trace
            self._context.report_error(str(message.get("msg")))
        elif command == "metrics":
            self._metric(str(message.get("name")), message.get("params"))
        elif command == "emit":
            self.sink_emit(
                message.get("tuple", []),
                message.get("id"),
                message.get("stream"),
                message.get("anchors"),
                message.get("task"),
                bool(message.get("need_task_ids", True)),
            )
        else:
            self._warn(f"sent an unknown command {command!r}")

    def _ack(self, tup: Any) -> None:
        native = self._settle(tup)
        if isinstance(native, NativeTuple):
            self._out.ack(native)
        elif isinstance(native, InputCursor):
            native.ack()
        elif native is _UNBUILT:
            self._now.batch.acked += 1
        elif native is _GONE:
            self._warn(f"ack of {tup!r}, which is unknown or already acked or failed")

    def _fail(self, tup: Any) -> None:
        native = self._settle(tup)
        if isinstance(native, NativeTuple):
            self._out.fail(native)
        elif isinstance(native, InputCursor):
            native.fail()
        elif native is _UNBUILT:
            self._now.batch.failed += 1
        elif native is _GONE:
            self._warn(f"fail of {tup!r}, which is unknown or already acked or failed")

    def _settle(self, tup: Any) -> Any:
        """Forget the input ``tup`` (a Tuple or an id): its native tuple, None for a tick,
        `_GONE` when unknown."""
        key = tup.id if isinstance(tup, _PTuple) else tup
        now = self._now
        if key is not None and key == now.id:
            native, now.native = now.native, None
            now.anchors = None
            return native
        return self._pending.pop(key, _GONE)

    def _metric(self, name: str, value: Any) -> None:
        metric = self._metrics.get(name)
        if metric is None:
            metric = self._metrics[name] = ShellMetric()
            self._context.register_metric(name, metric, self._metrics_s)
        metric.update(value)

    def _warn(self, what: str) -> None:
        seen = self._warned[what] = self._warned.get(what, 0) + 1
        if seen == 1 or seen % 1000 == 0:
            log.warning("%s: %s (%d times so far)", self._where, what, seen)


class PystormSpoutAdapter(_Driver, Spout):
    """Runs a pystorm ``Spout`` (e.g. ``streamparse.Spout``, ``ReliableSpout``) in-process.

    Each ``next_tuple``, ``ack``, ``fail``, ``activate`` and ``deactivate`` of the instance is
    one pystorm command, handled by pystorm's own loop body; where the class keeps pystorm's
    ``Spout._run``, by a direct call of the method that loop body would dispatch to.

    >>> PystormSpoutAdapter("spouts.words.WordSpout", ["word_spout", "count_bolt"])
    PystormSpoutAdapter('spouts.words.WordSpout')
    """

    _is_spout = True
    _base = pystorm.Spout

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        self._start(self._collector, config, context)

    def _shortcut(self, component: Any) -> None:
        cls = type(component)
        if cls.emit is pystorm.Spout.emit:
            # the native collector's emit has pystorm's parameters (see PystormBoltAdapter)
            component.emit = self._out.emit
        if cls._run is pystorm.Spout._run:  # its loop body only dispatches (then syncs)
            for name in ("next_tuple", "ack", "fail", "activate", "deactivate"):
                setattr(self, name, self._direct_call(component, name))

    def _direct_call(self, component: Any, name: str) -> Callable[..., None]:
        """What pystorm's ``Spout._run`` does for the command ``name``: call the method of
        that name; an exception goes where ``run()`` sends it."""
        failed = self._failed

        def call(*args: Any) -> None:
            try:
                getattr(component, name)(*args)
            except Exception as exc:
                failed(exc)

        return call

    def next_tuple(self) -> None:
        self._drive(_NEXT)

    def ack(self, tup_id: Any) -> None:
        self._drive({"command": "ack", "id": tup_id})

    def fail(self, tup_id: Any) -> None:
        self._drive({"command": "fail", "id": tup_id})

    def activate(self) -> None:
        self._drive(_ACTIVATE)

    def deactivate(self) -> None:
        self._drive(_DEACTIVATE)


class PystormBoltAdapter(_Driver, Bolt):
    """Runs a pystorm ``Bolt`` (``streamparse.Bolt``, ``BatchingBolt``,
    ``TicklessBatchingBolt``) in-process.

    Each input tuple gets a string id, as under Storm, mapped to the native tuple until the
    component acks or fails it; values are pystorm's namedtuples of the source stream's fields.
    With acking off (``topology.reliability.mode`` ATMOST_ONCE or no ackers) auto-anchoring is
    skipped: the kernel ignores anchors then.

    >>> PystormBoltAdapter("bolts.wordcount.WordCountBolt", ["word_spout", "count_bolt"])
    PystormBoltAdapter('bolts.wordcount.WordCountBolt')
    """

    _is_spout = False
    _base = pystorm.Bolt

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        self._acking = acking_enabled(config)
        self._start(self._collector, config, context)

    def _shortcut(self, component: Any) -> None:
        cls = type(component)
        own_ack = cls.ack is pystorm.Bolt.ack
        if own_ack:
            component.ack = self._ack
        if cls.fail is pystorm.Bolt.fail:
            component.fail = self._fail
        if cls.emit is pystorm.Bolt.emit:
            component.emit = self._direct_emit(component)
        self._inlined: _RunInputs | None = None
        if cls._run is pystorm.Bolt._run and cls.read_tuple is pystorm.Bolt.read_tuple:
            self._inlined = self._direct_inputs(component, own_ack)

    def _direct_emit(self, component: Any) -> Callable[..., list[int] | None]:
        """pystorm's ``Bolt.emit`` as one call on the native collector (whose ``emit`` returns
        the task ids only when ``need_task_ids``, as pystorm's does). With acking off there is
        no auto-anchoring (the kernel ignores anchors); with acking on, auto-anchoring to the
        input being processed uses its native tuple directly."""
        out_emit = self._out.emit
        if not self._acking:
            # The native collector's emit has pystorm's parameters (None is the default
            # stream, values that are not a list or tuple raise a TypeError) and ignores
            # anchors with acking off: it is the component's emit as it is.
            return out_emit
        anchored = self._anchors

        def general(
            tup: Any,
            stream: str | None,
            anchors: Any,
            direct_task: int | None,
            need_task_ids: bool,
        ) -> list[int] | None:
            if type(tup) is not list and not isinstance(tup, list | tuple):
                _not_a_tuple(tup)
            if anchors is not None:
                natives = anchored(anchors)
            elif not component.auto_anchor:
                natives = []
            else:
                natives = anchored(component._current_tups)
            return out_emit(tup, stream or DEFAULT_STREAM, natives, direct_task, need_task_ids)

        # auto-anchored to the input being processed: straight to the kernel, which checks
        # the rest (see AutoAnchoredEmit); to the input its cursor is at, where it walks one
        walker = self._out if isinstance(self._out, BoltCollector) else None
        return AutoAnchoredEmit(self._now, out_emit, general, walker)

    def _direct_inputs(self, component: Any, own_ack: bool) -> _RunInputs:
        """pystorm's ``Bolt._run`` and ``read_tuple``, inlined, for a run of inputs from one
        source stream: the ids, the values' namedtuples and the pystorm Tuples are built at once
        (`storm_compat.streamparse._received`, in C) and the inputs go through the compiled loop
        (`storm_compat.streamparse._inputs.run_inputs`); ``_current_tups`` becomes a property
        computed from ``_now`` (no lists built per input); auto-ack of an input not settled
        during ``process`` goes straight to the native collector or, for an input of a batch
        with acking off (whose native Tuple is `_UNBUILT`), is counted in the batch. With
        acking on, the inputs of a batch go through the collector's `InputCursor` where it
        has one (``walk``): no native Tuple is built for an input the component settles
        during its ``process`` call without naming it as an anchor."""
        ids = self._ids
        out_ack = self._out.ack
        pending = self._pending
        failed = self._failed
        kinds = component._source_tuple_types
        acking = self._acking
        walk = self._out.walk if isinstance(self._out, BoltCollector) else None
        now = self._now
        type(component)._current_tups = property(now.current_tups, now.assign_current_tups)

        def run(
            source: str,
            stream: str,
            task: int | None,
            rows: Sequence[Any],
            natives: Iterable[Any] | None,
            batch: InputBatch | None,
        ) -> None:
            """Process the inputs ``rows``, whose native Tuples are ``natives`` (`_UNBUILT`
            for each input of ``batch`` with acking off; None: ``batch``'s, acking on)."""
            if not rows:
                return
            kind = kinds[source].get(stream)
            if kind is not None and not all_of_length(rows, len(kind._fields)):
                # values that do not fit the fields (the emitting side checks them, so only a
                # plan out of step gets here): one input at a time
                arity = len(kind._fields)
                tuples = batch.tuples() if batch is not None else natives
                assert tuples is not None
                for row, native in zip(rows, tuples, strict=False):
                    if len(row) == arity:
                        run(source, stream, task, (row,), (native,), None)
                    else:
                        self._misfit(kind, row)
                return
            received_all = received(_PTuple, kind, ids, source, stream, task, rows)
            cursor = None
            if natives is None:  # a batch, acking on
                assert batch is not None
                cursor = walk(batch) if walk is not None else None
                natives = repeat(cursor) if cursor is not None else batch.tuples()

            def keep(native: Any, tup: Any) -> None:
                pending[tup.id] = self._built(native, tup, received_all[0])

            run_inputs(
                now,
                component,
                received_all,
                natives,
                batch,
                acking,
                own_ack,
                _UNBUILT,
                out_ack,
                keep,
                failed,
                cursor,
            )

        return run

    def _built(self, native: Any, received: Any, first: Any) -> NativeTuple:
        """The native Tuple of the input ``received``: ``native``, or built from the batch
        being processed, whose first input is ``first``, or by the cursor at it."""
        if isinstance(native, InputCursor):
            return native.tuple()
        if native is _UNBUILT:
            return self._now.batch.tuple(int(received.id) - int(first.id))
        return native

    def _misfit(self, kind: Any, row: Sequence[Any]) -> None:
        """pystorm's TypeError for values that do not fit their stream's fields, raised where
        its ``read_tuple`` would (so ``run()`` reports it)."""
        try:
            kind(*row)
        except TypeError as exc:
            self._failed(exc)

    def process_batch(self, batch: InputBatch) -> None:
        """Where the class keeps pystorm's own loop, the inputs of ``batch`` through the
        inlined loop (see `_direct_inputs`); else, and when task hooks time each input
        (``batch.timed``: Storm's ``boltExecute`` reports each tuple's own latency), one at a
        time."""
        if self._inlined is None or batch.timed:
            super().process_batch(batch)
            return
        natives = None if self._acking else repeat(_UNBUILT)
        self._inlined(batch.component, batch.stream, batch.task, batch.values, natives, batch)

    def process(self, tup: NativeTuple) -> None:
        if self._inlined is not None:
            self._inlined(tup.component, tup.stream, tup.task, (tup.values,), (tup,), None)
            return
        tid = self._next_id()
        self._pending[tid] = tup
        self._drive(
            {
                "id": tid,
                "comp": tup.component,
                "stream": tup.stream,
                "task": tup.task,
                "tuple": tup.values,
            }
        )

    def process_tick(self, tup: NativeTuple) -> None:
        tid = self._next_id()
        self._pending[tid] = None
        secs = tup.values[0] if tup.values else 0
        if isinstance(secs, float) and secs.is_integer():
            secs = int(secs)
        self._drive(
            {
                "id": tid,
                "comp": SYSTEM_COMPONENT,
                "stream": TICK_STREAM,
                "task": -1,
                "tuple": [secs],
            }
        )
