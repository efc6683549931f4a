"""The protocol engines: run one multilang subprocess for a bolt- or spout-shaped caller.

Both are driven from one thread (the instance's): a call returns once the subprocess has
handled what it was sent, and every emit, ack, fail, log, error and metrics command it wrote
meanwhile has been applied through the caller's collector.

* Spouts (Storm's ShellSpout): ``next``, ``ack``, ``fail``, ``activate`` and ``deactivate``
  are each answered by ``sync``.
* Bolts (Storm's ShellBolt): each input (tick tuples included) gets a fresh string id. Inputs
  are pipelined: ``execute_batch`` writes them in chunks, each ended by a heartbeat tuple, with
  up to ``topology.shellbolt.max.pending`` inputs in flight, and applies the answers while the
  subprocess works; the subprocess answers heartbeats with ``sync`` in order, so the ``sync``
  of the last chunk ends the call. Between calls a heartbeat goes out every second, as
  Storm sends them, and a subprocess silent for ``topology.subprocess.timeout.secs`` is killed.
  Acks, fails and anchors name input ids; the host maps them back to the caller's tuple
  objects (``handle``). Unlike Storm, an unknown or repeated id is ignored with a warning.
  Output the subprocess writes on its own (a background thread in it) is applied at the next
  call.

A subprocess that exits, goes silent or breaks the protocol raises UserCodeError from the
current call, or (while idle) through ``on_idle_failure``.
"""

from __future__ import annotations

import collections
import itertools
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from heron_core.api import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM, SpoutCollector
from heron_core.api import TopologyContext as NativeContext
from heron_core.config import REGISTRY, setting
from heron_core.errors import HeronError, UserCodeError
from heron_core.multilang._context import ShellMetric, handshake_conf, handshake_context
from heron_core.multilang._process import (
    MAX_TUPLE_KEY,
    IdleFailureHandler,
    ShellProcess,
    raise_in_main_thread,
)

__all__ = ["HostBoltCollector", "ShellBoltHost", "ShellSpoutHost"]

log = logging.getLogger(__name__)
shell_log = logging.getLogger("heron.multilang")
"""Where the subprocesses' ``log`` commands go."""

_LOG_LEVELS = {0: 5, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}
_MAX_PENDING = "topology.shellbolt.max.pending"

H = TypeVar("H")
H_contra = TypeVar("H_contra", contravariant=True)


class HostBoltCollector(Protocol[H_contra]):
    """What a bolt host emits, acks and fails through: the native ``BoltCollector`` shape,
    over the caller's own tuple objects (``handle``)."""

    def emit(
        self,
        tup: list[Any],
        stream: str,
        anchors: Sequence[H_contra] | None,
        direct_task: int | None,
        need_task_ids: bool,
        /,
    ) -> list[int] | None:
        """Emit ``tup``; the receiving task ids when ``need_task_ids``."""
        ...

    def ack(self, tup: H_contra, /) -> None:
        """Ack an input."""
        ...

    def fail(self, tup: H_contra, /) -> None:
        """Fail an input."""
        ...


class _Host:
    """What both hosts share: launching, the commands valid for both, protocol errors."""

    def __init__(
        self,
        command: Sequence[str],
        serializer: str = "json",
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        on_idle_failure: IdleFailureHandler | None = None,
    ) -> None:
        if isinstance(command, str) or not command:
            raise TypeError(f"a multilang command must be a non-empty argv list, got {command!r}")
        self.command = tuple(command)
        self.serializer = serializer
        self._cwd = cwd
        self._env = dict(env or {})
        self._on_idle_failure = on_idle_failure
        self._process: ShellProcess | None = None
        self._metrics: dict[str, ShellMetric] = {}
        self._warnings: dict[str, int] = {}
        self.where = "multilang component (not started)"
        self.pid: int | None = None

    def _launch(
        self, config: Mapping[str, Any], context: NativeContext, heartbeats: bool
    ) -> ShellProcess:
        self._context = context
        self._config = config
        self.where = (
            f"topology {context.get_topology_name()!r}, component "
            f"{context.get_component_id()!r}, task {context.get_task_id()}"
        )
        extra = config.get("topology.environment") or {}
        env = {**os.environ, **{str(k): str(v) for k, v in dict(extra).items()}, **self._env}
        process = ShellProcess(
            self.command,
            self.serializer,
            where=self.where,
            # by default the instance's own cwd: the executor starts every instance in the
            # topology's code directory, which is where Storm starts a shell component too
            cwd=Path(self._cwd) if self._cwd is not None else Path.cwd(),
            env=env,
            timeout_secs=float(setting(config, "topology.subprocess.timeout.secs")),
            on_idle_failure=self._on_idle_failure or raise_in_main_thread(),
            max_tuple_bytes=int(setting(config, MAX_TUPLE_KEY)),
            # heartbeat answers must be read while idle; a spout is read only during calls
            reads_between_calls=heartbeats,
        )
        self._process = process
        self.pid = process.launch(handshake_conf(config, context), handshake_context(context))
        if heartbeats:
            process.start_heartbeats()
        return process

    @property
    def process(self) -> ShellProcess | None:
        """The subprocess (None before ``start``)."""
        return self._process

    def _running(self) -> ShellProcess:
        if self._process is None:
            raise HeronError(f"{self.where}: the multilang host was not started")
        return self._process

    def close(self) -> None:
        """Stop the subprocess (idempotent)."""
        if self._process is not None:
            self._process.close()

    def _warn(self, what: str) -> None:
        seen = self._warnings[what] = self._warnings.get(what, 0) + 1
        if seen == 1 or seen % 1000 == 0:
            log.warning("%s: the subprocess %s (%d times so far)", self.where, what, seen)

    def _protocol_error(self, what: str) -> UserCodeError:
        return UserCodeError(f"{self.where}: the multilang subprocess (pid {self.pid}) {what}")

    def _common(self, message: dict[str, Any]) -> bool:
        """Apply a ``log``, ``error`` or ``metrics`` command; False for any other."""
        command = message.get("command")
        if command == "log":
            level = message.get("level")
            level = _LOG_LEVELS.get(level, logging.INFO) if isinstance(level, int) else logging.INFO
            shell_log.log(
                level, "%s: ShellLog pid %s: %s", self.where, self.pid, message.get("msg")
            )
        elif command == "error":  # msg: the stack trace (pystorm's raise_exception)
            self._context.report_error(str(message.get("msg")))
        elif command == "metrics":
            name = message.get("name")
            if not isinstance(name, str) or not name:
                self._warn("sent a metrics command without a metric name; ignored")
                return True
            metric = self._metrics.get(name)
            if metric is None:
                metric = self._metrics[name] = ShellMetric()
                # published at every export, like Storm's shell metrics each bucket
                interval = setting(self._config, "heron.metrics.export.interval.sec")
                self._context.register_metric(name, metric, interval)
            metric.update(message.get("params"))
        else:
            return False
        return True

    def _emit_fields(self, message: dict[str, Any]) -> tuple[list[Any], str, int | None, bool]:
        """``(values, stream, direct task, need task ids)`` of an ``emit``: Storm's defaults
        (stream ``default``; task 0 or absent = not direct; task ids wanted unless
        ``need_task_ids`` is false; never for direct emits)."""
        values = message.get("tuple")
        if not isinstance(values, list):
            raise self._protocol_error(f"sent an emit without a 'tuple' list: {message!r}")
        task = message.get("task")
        if task is not None and (not isinstance(task, int) or isinstance(task, bool)):
            raise self._protocol_error(f"sent an emit whose 'task' is not a task id: {message!r}")
        stream = message.get("stream") or DEFAULT_STREAM
        if not isinstance(stream, str):
            raise self._protocol_error(f"sent an emit whose 'stream' is not a name: {message!r}")
        direct = task or None
        need = message.get("need_task_ids") is not False and direct is None
        return values, stream, direct, need


class ShellBoltHost(_Host, Generic[H]):
    """Runs a multilang bolt for a caller that hands it inputs (see the module doc).

    Args:
        command: the subprocess's argv.
        serializer: ``"json"`` or ``"msgpack"``.
        cwd: its working directory (default: the current one, which in an instance is the
            topology's code directory).
        env: variables added to its environment (after ``topology.environment``).
        on_idle_failure: called with the error when the subprocess fails between calls;
            default: raise it in the main thread (see ``raise_in_main_thread``).
    """

    def __init__(
        self,
        command: Sequence[str],
        serializer: str = "json",
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        on_idle_failure: IdleFailureHandler | None = None,
    ) -> None:
        super().__init__(command, serializer, cwd=cwd, env=env, on_idle_failure=on_idle_failure)
        self._inputs: dict[str, H | None] = {}  # None: a tick (nothing to ack or anchor)
        self._ids = itertools.count(1)
        self._max_pending: int = REGISTRY[_MAX_PENDING].default

    def start(
        self, config: Mapping[str, Any], context: NativeContext, collector: HostBoltCollector[H]
    ) -> None:
        """Launch the subprocess and do the handshake (``config`` and ``context`` are the
        task's).

        Raises:
            UserCodeError: the subprocess cannot be started or does not answer.
        """
        self._collector = collector
        self._max_pending = max(1, int(setting(config, _MAX_PENDING)))
        self._launch(config, context, heartbeats=True)

    def execute(
        self, handle: H, component: str, stream: str, task: int | None, values: Sequence[Any]
    ) -> None:
        """Hand one input to the subprocess and apply what it answers (``execute_batch`` of
        one input)."""
        self.execute_batch(((handle, component, stream, task, values),))

    def execute_batch(
        self,
        inputs: Iterable[tuple[H, str, str, int | None, Sequence[Any]]],
        due: list[bool] | None = None,
        serve: Callable[[], None] | None = None,
    ) -> None:
        """Hand inputs ``(handle, component, stream, task, values)`` to the subprocess, keeping
        up to ``topology.shellbolt.max.pending`` of them in flight, and apply what it answers;
        return once it has handled every one.

        Inputs go out in chunks of half that bound, each chunk one write ended by a heartbeat
        tuple; the ``sync`` answering it says the chunk is handled. Before a chunk would take
        the inputs in flight past the bound, the answers are applied until the oldest chunk is
        handled. ``handle`` is what acks, fails and anchors of an input give back to the
        collector. An input whose values the serializer cannot carry is failed (and logged).
        When ``due[0]`` is raised, ``serve()`` is called between two chunks (an instance's
        `InputBatch.serve`: it sends what was emitted so far).

        Raises:
            UserCodeError: the subprocess failed or broke the protocol.
        """
        process = self._running()
        limit = self._max_pending
        chunk = max(1, limit // 2)
        marks: collections.deque[tuple[int, int]] = collections.deque()  # (heartbeat, inputs)
        in_flight = 0
        with process.busy():
            pending = iter(inputs)
            while True:
                data, count, taken = self._encode_chunk(process, pending, chunk)
                if not taken:
                    break
                if not count:  # every input of the chunk was failed: nothing to send
                    continue
                while marks and in_flight + count > limit:
                    in_flight -= self._await(process, marks.popleft())
                marks.append((process.write_with_heartbeat(data), count))
                in_flight += count
                if due is not None and due[0] and serve is not None:
                    serve()
            while marks:
                self._await(process, marks.popleft())

    def _encode_chunk(
        self,
        process: ShellProcess,
        pending: Iterator[tuple[H, str, str, int | None, Sequence[Any]]],
        size: int,
    ) -> tuple[bytes, int, int]:
        """Up to ``size`` inputs taken from ``pending``: their tuple messages encoded, how many
        there are (registered as in flight) and how many inputs were taken (one the serializer
        refuses is failed instead of sent)."""
        parts = []
        taken = 0
        encode = process.encode_tuple
        for handle, component, stream, task, values in itertools.islice(pending, size):
            taken += 1
            tick = component == SYSTEM_COMPONENT and stream == TICK_STREAM
            tuple_id = str(next(self._ids))
            try:
                parts.append(
                    encode(tuple_id, component, stream, -1 if task is None else task, values)
                )
            except (TypeError, ValueError) as exc:
                log.error(
                    "%s: cannot send a tuple from %r stream %r to the subprocess (%s); it is "
                    "failed",
                    self.where,
                    component,
                    stream,
                    exc,
                )
                if not tick:
                    self._collector.fail(handle)
                continue
            self._inputs[tuple_id] = None if tick else handle
        return b"".join(parts), len(parts), taken

    def _await(self, process: ShellProcess, mark: tuple[int, int]) -> int:
        """Apply answers until the heartbeat of ``mark`` is answered; its count of inputs."""
        heartbeat, count = mark
        while process.answered < heartbeat:
            answer = process.read()
            if answer.get("command") != "sync":
                self._handle(answer)
        return count

    def _handle(self, message: dict[str, Any]) -> None:
        command = message.get("command")
        if command == "emit":
            self._emit(message)
        elif command == "ack" or command == "fail":
            self._settle(message, command)
        elif not self._common(message):
            self._warn(f"sent a message with an unknown command {command!r}; ignored")

    def _emit(self, message: dict[str, Any]) -> None:
        values, stream, direct, need = self._emit_fields(message)
        anchor_ids = message.get("anchors")
        if isinstance(anchor_ids, str | int):
            anchor_ids = [anchor_ids]
        elif anchor_ids is not None and not isinstance(anchor_ids, list):
            raise self._protocol_error(
                f"sent an emit whose 'anchors' is not a list of tuple ids: {message!r}"
            )
        anchors: list[H] = []
        for anchor_id in anchor_ids or ():
            key = str(anchor_id)
            if key not in self._inputs:
                self._warn("anchored a tuple to an id that is unknown or already acked/failed")
                continue
            handle = self._inputs[key]
            if handle is not None:
                anchors.append(handle)
        task_ids = self._collector.emit(values, stream, anchors, direct, need)
        if need:
            self._running().write(task_ids or [])

    def _settle(self, message: dict[str, Any], command: str) -> None:
        key = str(message.get("id"))
        if key not in self._inputs:
            self._warn(f"sent {command} for an id that is unknown or already acked/failed; ignored")
            return
        handle = self._inputs.pop(key)
        if handle is not None:
            (self._collector.ack if command == "ack" else self._collector.fail)(handle)


class ShellSpoutHost(_Host):
    """Runs a multilang spout for a spout-shaped caller (see the module doc); arguments as
    for :class:`ShellBoltHost`."""

    def start(
        self, config: Mapping[str, Any], context: NativeContext, collector: SpoutCollector
    ) -> None:
        """Launch the subprocess and do the handshake.

        Raises:
            UserCodeError: the subprocess cannot be started or does not answer.
        """
        self._collector = collector
        self._launch(config, context, heartbeats=False)

    def next_tuple(self) -> None:
        """Ask for tuples (``next``)."""
        self._call("next", "")

    def ack(self, msg_id: Any) -> None:
        """The tree of ``msg_id`` completed."""
        self._call("ack", msg_id)

    def fail(self, msg_id: Any) -> None:
        """The tree of ``msg_id`` failed or timed out."""
        self._call("fail", msg_id)

    def activate(self) -> None:
        """The topology was activated."""
        self._call("activate", "")

    def deactivate(self) -> None:
        """The topology was deactivated."""
        self._call("deactivate", "")

    def _call(self, command: str, msg_id: Any) -> None:
        process = self._running()
        with process.busy():
            process.write({"command": command, "id": msg_id})
            while True:
                message = process.read()
                kind = message.get("command")
                if kind == "sync":
                    return
                if kind == "emit":
                    values, stream, direct, need = self._emit_fields(message)
                    msg_id = message.get("id")
                    if isinstance(msg_id, list | dict):
                        raise self._protocol_error(
                            f"sent an emit whose 'id' is a {type(msg_id).__name__}, not a "
                            f"message id: {message!r}"
                        )
                    task_ids = self._collector.emit(values, msg_id, stream, direct, need)
                    if need:
                        process.write(task_ids or [])
                elif not self._common(message):
                    raise self._protocol_error(
                        f"sent {message!r} while answering {command!r}; a spout may send emit, "
                        "log, error, metrics and sync"
                    )
