"""The metrics manager daemon of one container (Heron's metricsmgr-K).

One zmq loop reads a PULL socket on the container's `metrics_endpoint` (ipc), where the
instances and the stream manager push `MetricPublisherPublishMessage` values, hands every
message to each sink of ``heron.metrics.sinks`` and flushes each sink every
``flush-frequency-ms`` of its block. The same loop answers the container's shell on a ROUTER
socket (TCP, CURVE server) on ``--shell-port`` (see `Shell`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from heron_core.config import config_from_proto
from heron_core.errors import HeronError
from heron_core.metricsmgr._shell import Shell
from heron_core.metricsmgr._types import MetricTypes
from heron_core.metricsmgr.sinks import MetricsSink, SinkContext, build_sinks, check_sinks
from heron_core.network import Dispatcher, ProtocolError, Transport, metrics_endpoint
from heron_core.proto import metrics_pb2, tmanager_pb2, topology_pb2
from heron_core.statemgr import StateManager

__all__ = ["MetricsManager", "MetricsManagerArgs"]

log = logging.getLogger(__name__)

_STATE_WAIT_S = 60.0
_POLL_MS = 200
_READ_BURST = 1000


@dataclass(frozen=True)
class MetricsManagerArgs:
    """The daemon's flags (see ``python -m heron_core.metricsmgr --help``)."""

    topology_name: str
    topology_id: str
    cluster: str
    container: int
    working_dir: Path
    local_endpoint: str
    shell_port: int = 0
    shell_fd: int = -1
    host: str = "127.0.0.1"

    @property
    def name(self) -> str:
        return f"metricsmgr-{self.container}"


class MetricsManager:
    """The daemon; `run` returns the process exit status."""

    def __init__(
        self,
        args: MetricsManagerArgs,
        state: StateManager,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.args = args
        self.state = state
        self._clock = clock
        self._stop = False
        self._zmq: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self._tmanager: tmanager_pb2.TManagerLocation | None = None
        self._sinks: list[tuple[MetricsSink, float]] = []
        self._received = 0
        self._dispatcher = Dispatcher(f"{args.name} (metrics)")
        self._dispatcher.register(metrics_pb2.MetricPublisherPublishMessage, self._on_message)

    def stop(self, *_: Any) -> None:
        """Ask the loop to end (safe from a signal handler)."""
        self._stop = True

    def _on_tmanager(self, location: tmanager_pb2.TManagerLocation | None) -> None:
        self._tmanager = location

    def _load(self) -> tuple[dict[str, Any], Transport]:
        name = self.args.topology_name
        deadline = self._clock() + _STATE_WAIT_S
        topology: topology_pb2.Topology | None = self.state.get_topology(name)
        while topology is None:
            if self._clock() > deadline:
                raise HeronError(
                    f"topology {name!r} did not appear in the state manager within "
                    f"{_STATE_WAIT_S:.0f}s"
                )
            time.sleep(0.1)
            topology = self.state.get_topology(name)
        config = config_from_proto(topology.topology_config)
        check_sinks(config)
        transport = Transport.for_topology(
            self._zmq, config, self.args.working_dir, f"topology {name!r} {self.args.name}"
        )
        return config, transport

    def _on_message(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        self._received += 1
        for sink, _ in self._sinks:
            try:
                sink.process(message)
            except Exception:
                log.exception("%s: sink %r failed to take a message", self.args.name, sink.name)

    def _flush(self, sink: MetricsSink) -> None:
        try:
            sink.flush()
        except Exception:
            log.exception("%s: sink %r failed to flush", self.args.name, sink.name)

    def run(self) -> int:
        """Serve until `stop`; 0 then, 1 when it cannot start."""
        inbox: zmq.Socket[bytes] | None = None
        shell_socket: zmq.Socket[bytes] | None = None
        transport: Transport | None = None
        watch = None
        try:
            config, transport = self._load()
            inbox = self._zmq.socket(zmq.PULL)
            inbox.setsockopt(zmq.LINGER, 0)
            inbox.bind(metrics_endpoint(self.args.local_endpoint))
            shell_socket = transport.server(self._zmq.socket(zmq.ROUTER), "shell port")
            shell_socket.setsockopt(zmq.LINGER, 0)
            if self.args.shell_fd >= 0:
                shell_socket.setsockopt(zmq.USE_FD, self.args.shell_fd)
            shell_socket.bind(f"tcp://{self.args.host}:{self.args.shell_port}")
            shell = Shell(shell_socket, self.args.working_dir, self.args.container)
            watch = self.state.watch("tmanagers", self.args.topology_name, self._on_tmanager)
            context = SinkContext(
                topology_name=self.args.topology_name,
                topology_id=self.args.topology_id,
                cluster=self.args.cluster,
                container=self.args.container,
                working_dir=self.args.working_dir,
                host=self.args.host,
                config=config,
                types=MetricTypes.from_config(config),
                zmq_context=self._zmq,
                transport=transport,
                tmanager_location=lambda: self._tmanager,
            )
            self._sinks = [
                (sink, int(sink.options.get("flush-frequency-ms", 1000)) / 1000.0)
                for sink in build_sinks(config, context)
            ]
            log.info(
                "%s: sinks %s; shell on port %s",
                self.args.name,
                ", ".join(sink.name for sink, _ in self._sinks) or "none",
                shell_socket.getsockopt_string(zmq.LAST_ENDPOINT).rsplit(":", 1)[-1],
            )
            self._loop(inbox, shell)
            return 0
        except HeronError as exc:
            log.error("%s: %s", self.args.name, exc)
            return 1
        finally:
            if inbox is not None:
                self._drain(inbox)
            for sink, _ in self._sinks:
                try:
                    sink.close()
                except Exception:
                    log.exception("%s: sink %r failed to close", self.args.name, sink.name)
            if watch is not None:
                watch.cancel()
            for sock in (inbox, shell_socket):
                if sock is not None:
                    sock.close(linger=0)
            if transport is not None:
                transport.close()
            self._zmq.term()

    def _drain(self, inbox: zmq.Socket[bytes]) -> None:
        for _ in range(_READ_BURST):
            try:
                frames = inbox.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            self._dispatch(frames)

    def _dispatch(self, frames: list[bytes]) -> None:
        try:
            self._dispatcher.dispatch(frames)
        except ProtocolError as exc:
            log.warning("%s: unreadable metrics message dropped: %s", self.args.name, exc)

    def _loop(self, inbox: zmq.Socket[bytes], shell: Shell) -> None:
        poller = zmq.Poller()
        poller.register(inbox, zmq.POLLIN)
        poller.register(shell.socket, zmq.POLLIN)
        now = self._clock()
        due = [now + interval for _, interval in self._sinks]
        while not self._stop:
            timeout = min([_POLL_MS / 1000.0, *(d - now for d in due)])
            events = dict(poller.poll(int(max(timeout, 0.0) * 1000.0)))
            if inbox in events:
                self._drain(inbox)
            if shell.socket in events:
                shell.on_readable()
            now = self._clock()
            for index, (sink, interval) in enumerate(self._sinks):
                if now >= due[index]:
                    self._flush(sink)
                    due[index] = now + interval
