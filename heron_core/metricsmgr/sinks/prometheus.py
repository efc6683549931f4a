"""The ``prometheus`` sink: an HTTP endpoint for Prometheus to scrape (via ``prometheus-client``).

Each metric becomes ``heron_<name>`` with every character Prometheus does not allow turned into
``_`` (``__emit-count/default`` -> ``heron_emit_count_default``), labelled with the component
and instance (and the topology, with ``include-topology-name``). A metric that aggregates by SUM
is a counter of its all-time total; any other is a gauge of its newest value. The endpoint is
plain HTTP, read-only, bound to the container's address; its address is written to
``W/metrics/prometheus-<container>.json`` in Prometheus' ``file_sd_configs`` format so that a
Prometheus server finds every container.

Anyone who reaches the address can read the metrics (names of components, counts, latencies,
memory), nothing else: the server answers ``GET`` (and ``OPTIONS``) of the one path and parses
nothing but the request line and headers. It serves on one thread (an asyncio loop), whatever
the clients do:

- a connection gets ``request-timeout-ms`` from its accept to the last byte of its response
  (a client that sends its request slowly or reads the response slowly is dropped then);
- a request head (line and headers) is at most 16 KiB;
- at most ``max-connections`` connections are open at once. A new connection beyond that
  takes the place of the oldest one still sending its request head (a client that sends its
  request at once is answered before a flood of idle connections pushes it out); when every
  open connection is being answered, the new one is closed unanswered (the rule of
  `heron_core._connection_bound.ConnectionBound`, which the tracker and the UI follow too).

So a flood of connections costs a bounded number of sockets and a few KiB each, and an honest
scraper is answered during and after it.
"""

from __future__ import annotations

import asyncio
import http.client
import io
import json
import logging
import re
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from heron_core._connection_bound import ConnectionBound
from heron_core.errors import ConfigurationError
from heron_core.metricsmgr._types import SUM
from heron_core.metricsmgr.sinks.base import MetricsSink, SinkContext
from heron_core.proto import metrics_pb2

__all__ = ["BoundedHttpEndpoint", "PrometheusSink", "prometheus_name"]

log = logging.getLogger(__name__)

_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9]+")


def prometheus_name(name: str) -> str:
    """The Prometheus name of metric ``name``.

    >>> prometheus_name("__emit-count/default"), prometheus_name("__process/__mem_used_bytes")
    ('heron_emit_count_default', 'heron_process_mem_used_bytes')
    >>> prometheus_name("my.metric/key 1")
    'heron_my_metric_key_1'
    """
    return "heron_" + _NOT_ALLOWED.sub("_", name.replace("_", " ")).strip("_")


_HEAD_LIMIT = 16 << 10
"""The largest request head (request line and headers) the endpoint reads, in bytes."""

_BACKLOG = 128
"""Connections the kernel holds until the endpoint accepts them (it accepts at once)."""

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass(eq=False)
class _Connection:
    sock: socket.socket
    writer: asyncio.StreamWriter | None = None


class BoundedHttpEndpoint:
    """An HTTP/1.1 server of one WSGI app on one thread, with the limits above.

    Every connection carries one request (the response says ``Connection: close``). The
    limit on connections is exact: a connection counts from the moment it is accepted.

    Args:
        host: the address to bind.
        port: the port (0: a free one; the chosen one is `port`).
        app: the WSGI app answering each request (called on the server's thread; it must
            not block).
        max_connections: how many connections may be open at once.
        timeout_secs: how long a connection may stay open, from its accept.
        name: the thread's name.

    Raises:
        OSError: the address cannot be bound.
    """

    def __init__(
        self,
        host: str,
        port: int,
        app: WsgiApp,
        max_connections: int,
        timeout_secs: float,
        name: str,
    ) -> None:
        self._app = app
        self._bound = ConnectionBound[_Connection](max_connections)
        self._timeout = timeout_secs
        self._open: dict[_Connection, asyncio.Task[None]] = {}
        self._listener = socket.create_server((host, port), backlog=_BACKLOG)
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        """The port it listens on."""
        self._loop = asyncio.new_event_loop()
        self._accepting = self._loop.create_task(self._accept())
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def _accept(self) -> None:
        while True:
            try:
                sock, _ = await self._loop.sock_accept(self._listener)
            except OSError as exc:  # out of file descriptors: let some connections end
                log.warning("the Prometheus endpoint cannot accept a connection: %s", exc)
                await asyncio.sleep(0.1)
                continue
            connection = _Connection(sock)
            admission = self._bound.admit(connection)
            if not admission.admitted:
                sock.close()
                continue
            if admission.evicted is not None:
                self._open.pop(admission.evicted).cancel()
                _end(admission.evicted, graceful=False)
            self._open[connection] = self._loop.create_task(self._serve(connection))

    async def _serve(self, connection: _Connection) -> None:
        done = False
        try:
            async with asyncio.timeout(self._timeout):
                reader, writer = await asyncio.open_connection(
                    sock=connection.sock, limit=_HEAD_LIMIT
                )
                connection.writer = writer
                head = await reader.readuntil(b"\r\n\r\n")
                self._bound.waiting(connection, False)
                writer.write(self._answer(head))
                await writer.drain()
                writer.close()  # it counts as open until its socket is closed
                await writer.wait_closed()
                done = True
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            self._bound.release(connection)  # gone already when it was evicted
            self._open.pop(connection, None)
            _end(connection, graceful=done)

    def _answer(self, head: bytes) -> bytes:
        """The whole response to request head ``head``."""
        line, _, rest = head.partition(b"\r\n")
        parts = line.decode("latin-1").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return _response("400 Bad Request", [], b"bad request line\n")
        method, target, _ = parts
        try:
            headers = http.client.parse_headers(io.BytesIO(rest))
        except http.client.HTTPException:
            return _response("400 Bad Request", [], b"bad request headers\n")
        url = urlsplit(target)
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": unquote(url.path, "latin-1"),
            "QUERY_STRING": url.query,
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        for name in ("Accept", "Accept-Encoding"):
            value = headers.get(name)
            if value is not None:
                environ["HTTP_" + name.upper().replace("-", "_")] = value
        answered: list[Any] = []

        def start_response(status: str, response_headers: list[tuple[str, str]]) -> None:
            answered[:] = [status, response_headers]

        try:
            body = b"".join(self._app(environ, start_response))
        except Exception:  # a collector failed: the scraper sees a 500, the log says why
            log.exception("cannot answer %s %s", method, _shown(target))
            return _response("500 Internal Server Error", [], b"the metrics failed; see the log\n")
        return _response(answered[0], answered[1], body)

    def close(self) -> None:
        """Stop listening, drop every open connection and end the thread."""
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def _shutdown(self) -> None:
        self._accepting.cancel()
        self._listener.close()
        tasks = [self._accepting, *self._open.values()]
        for connection, task in list(self._open.items()):
            task.cancel()
            _end(connection, graceful=False)
        await asyncio.gather(*tasks, return_exceptions=True)


def _end(connection: _Connection, graceful: bool) -> None:
    """Close ``connection``: after what was written is sent (``graceful``), else at once."""
    if connection.writer is not None and graceful:
        connection.writer.close()
        return
    if connection.writer is not None:
        connection.writer.transport.abort()  # off the selector now, the socket closed later
    connection.sock.close()  # so close it now: an evicted connection's place is free at once


def _shown(text: str) -> str:
    """``repr(text)``, cut to 80 characters for a log line."""
    shown = repr(text)
    return shown if len(shown) <= 80 else f"{shown[:79]}...({len(shown)} characters)"


def _response(status: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers)]
    if not any(k.lower() == "content-type" for k, _ in headers):
        lines.append("Content-Type: text/plain; charset=utf-8")
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body


class _Values(Collector):
    """The newest state of every series, read by the HTTP thread under a lock."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self.lock = threading.Lock()
        self.labels = labels
        # prometheus name -> (is a counter, help, {label values: value})
        self.series: dict[str, tuple[bool, str, dict[tuple[str, ...], float]]] = {}

    def collect(self) -> Iterator[Metric]:
        with self.lock:
            snapshot = [(n, c, h, dict(v)) for n, (c, h, v) in self.series.items()]
        for name, counter, text, values in snapshot:
            family: CounterMetricFamily | GaugeMetricFamily
            if counter:
                family = CounterMetricFamily(name, text, labels=self.labels)
            else:
                family = GaugeMetricFamily(name, text, labels=self.labels)
            for label_values, value in values.items():
                family.add_metric(list(label_values), value)
            yield family


class PrometheusSink(MetricsSink):
    """Serves ``path`` on ``port`` (0: a free port; N > 0: N + the container id).

    Its options and their defaults (`DEFAULTS`, also written out in ``metrics_sinks.yaml``):
    ``port``, ``path``, ``include-topology-name``, ``max-connections`` (connections open at
    once) and ``request-timeout-ms`` (how long one connection may take, from its accept to the
    last byte of its response).
    """

    DEFAULTS: Mapping[str, Any] = {
        "port": 0,
        "path": "/metrics",
        "include-topology-name": True,
        "max-connections": 64,
        "request-timeout-ms": 5000,
    }
    """The value of each option its block does not set."""

    OPTIONS = frozenset(DEFAULTS)

    _LIMITS = {"max-connections": (1, 10_000), "request-timeout-ms": (100, 600_000)}

    @classmethod
    def check(cls, kind: str, options: Mapping[str, Any]) -> None:
        values = {**cls.DEFAULTS, **options}
        port = values["port"]
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65000:
            raise ConfigurationError(f"{kind}: port must be 0 or a port number, got {port!r}")
        path = values["path"]
        if not isinstance(path, str) or not path.startswith("/"):
            raise ConfigurationError(f"{kind}: path must start with '/', got {path!r}")
        if not isinstance(values["include-topology-name"], bool):
            raise ConfigurationError(f"{kind}: include-topology-name must be true or false")
        for option, (low, high) in cls._LIMITS.items():
            value = values[option]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigurationError(
                    f"{kind}: {option} must be an integer from {low} to {high}, got {value!r}"
                )

    def __init__(self, name: str, options: Mapping[str, Any], context: SinkContext) -> None:
        super().__init__(name, options, context)
        values = {**self.DEFAULTS, **options}
        self._topology = bool(values["include-topology-name"])
        labels = (
            ("topology", "component", "instance") if self._topology else ("component", "instance")
        )
        self._values = _Values(labels)
        self._pending: list[metrics_pb2.MetricPublisherPublishMessage] = []
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self._values)
        self._path = str(values["path"])
        base = int(values["port"])
        self._endpoint = BoundedHttpEndpoint(
            context.host,
            base + context.container if base else 0,
            _only(self._path, make_wsgi_app(registry)),
            max_connections=int(values["max-connections"]),
            timeout_secs=int(values["request-timeout-ms"]) / 1000,
            name="prometheus-sink",
        )
        self.port = self._endpoint.port
        self.url = f"http://{context.host}:{self.port}{self._path}"
        self._write_target(context)
        log.info("%s: Prometheus endpoint at %s", name, self.url)

    def _write_target(self, context: SinkContext) -> None:
        target = context.working_dir / "metrics" / f"prometheus-{context.container}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        labels = {
            "topology": context.topology_name,
            "container": str(context.container),
            "__metrics_path__": self._path,
        }
        partial = target.with_suffix(".json.tmp")
        partial.write_text(
            json.dumps([{"targets": [f"{context.host}:{self.port}"], "labels": labels}])
        )
        partial.replace(target)

    def process(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        self._pending.append(message)

    def flush(self) -> None:
        if not self._pending:
            return
        types = self.context.types
        publisher_labels: Callable[[metrics_pb2.MetricPublisher], tuple[str, ...]]
        if self._topology:
            topology = self.context.topology_name

            def publisher_labels(p: metrics_pb2.MetricPublisher) -> tuple[str, ...]:
                return (topology, p.component_name, p.instance_id)
        else:

            def publisher_labels(p: metrics_pb2.MetricPublisher) -> tuple[str, ...]:
                return (p.component_name, p.instance_id)

        with self._values.lock:
            series = self._values.series
            for message in self._pending:
                labels = publisher_labels(message.publisher)
                for datum in message.metrics:
                    try:
                        value = float(datum.value)
                    except ValueError:
                        continue
                    name = prometheus_name(datum.name)
                    counter = types.type_of(datum.name, datum.type) == SUM
                    held = series.get(name)
                    if held is None or held[0] != counter:
                        held = series[name] = (counter, f"Heron metric {datum.name}", {})
                    values = held[2]
                    values[labels] = values.get(labels, 0.0) + value if counter else value
        self._pending.clear()

    def close(self) -> None:
        self.flush()
        self._endpoint.close()


def _only(path: str, app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != path:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [f"not found; the metrics are at {path}\n".encode()]
        return app(environ, start_response)

    return serve
