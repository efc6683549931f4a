"""The Prometheus endpoint (the ``prometheus`` metrics sink, on by default) under slow-loris and
connection floods: a connection that does not finish its request within
``request-timeout-ms`` is dropped, at most ``max-connections`` are open at once on one thread,
and an honest scrape is answered during and after the attack.

Attacker: any process that reaches the container's address (on a shared host: any local
user). The sink runs in a child process of its own, as in the metrics manager, so that its
threads and memory are measured alone. The control runs the same slow-loris against a plain
`http.server.ThreadingHTTPServer` (a thread per connection, no timeout: what the endpoint
was): there the connections stay open past the deadline and each holds a thread."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psutil
import pytest

from heron_core.testing.processes import wait_until

pytestmark = pytest.mark.processes

TIMEOUT_MS = 1000
"""The sink's ``request-timeout-ms`` in the slow-loris tests."""

CLOSE_MARGIN_S = 5.0
"""How long past the timeout a held connection may take to be seen closed (a loaded host)."""

PARTIAL = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
"""A request head without its final empty line: the server waits for the rest."""

SINK_MAIN = """
import json, sys, tempfile
from pathlib import Path
import zmq
from heron_core.config import build_config
from heron_core.metricsmgr import MetricTypes
from heron_core.metricsmgr.sinks import SinkContext
from heron_core.metricsmgr.sinks.prometheus import PrometheusSink
from heron_core.network import Transport
from heron_core.proto import metrics_pb2

config = build_config()
context = SinkContext(
    topology_name="wc", topology_id="wc-1", cluster="local", container=1,
    working_dir=Path(tempfile.mkdtemp()), host="127.0.0.1", config=config,
    types=MetricTypes.from_config(config), zmq_context=zmq.Context.instance(),
    transport=Transport(zmq.Context.instance(), None, "test"), tmanager_location=lambda: None,
)
sink = PrometheusSink("prometheus-sink", {"class": "prometheus", **json.loads(sys.argv[1])},
                      context)
publisher = metrics_pb2.MetricPublisher(component_name="word", instance_id="container_1_word_1")
sink.process(metrics_pb2.MetricPublisherPublishMessage(
    publisher=publisher, metrics=[metrics_pb2.MetricDatum(name="__emit-count/default", value="7")]
))
sink.flush()
print(sink.port, flush=True)
sys.stdin.read()
sink.close()
"""


@dataclass
class Sink:
    process: subprocess.Popen[str]
    port: int

    def threads(self) -> int:
        return psutil.Process(self.process.pid).num_threads()

    def rss(self) -> int:
        return psutil.Process(self.process.pid).memory_info().rss

    def open_connections(self) -> int:
        """Established TCP connections on the endpoint's port, as the sink's process sees."""
        connections = psutil.Process(self.process.pid).net_connections(kind="tcp")
        return sum(
            c.status == psutil.CONN_ESTABLISHED and c.laddr.port == self.port for c in connections
        )


@pytest.fixture(name="start_sink")
def start_sink_fixture() -> Iterator[Any]:
    """Starts a Prometheus sink process with the given options; at teardown its stdin is
    closed (it closes the sink and exits) and it is killed by pid if it has not ended."""
    started: list[subprocess.Popen[str]] = []

    def start(**options: Any) -> Sink:
        process = subprocess.Popen(
            [sys.executable, "-c", SINK_MAIN, json.dumps(options)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        assert line.strip().isdigit(), f"the sink did not start: {line}{process.stderr.read()}"
        return Sink(process, int(line))

    yield start
    for process in started:
        with contextlib.suppress(OSError):
            assert process.stdin is not None
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        errors = process.stderr.read()
        process.stderr.close()
        if errors:
            print(f"--- the sink's stderr ---\n{errors}")


@pytest.fixture(name="sockets")
def sockets_fixture() -> Iterator[list[socket.socket]]:
    """Client sockets a test opens; all closed at teardown."""
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return str(response.read().decode())


def connect(port: int, sockets: list[socket.socket], first: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sockets.append(sock)
    if first:
        sock.sendall(first)
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (end of stream or reset; nothing is ever sent on
    these connections before they are closed)."""
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def trickle(sock: socket.socket, stop: threading.Event) -> None:
    """A client that sends its request one byte every 0.2 s and never finishes it."""
    for byte in PARTIAL * 100:
        if stop.wait(0.2):
            return
        try:
            sock.send(bytes([byte]))
        except OSError:
            return


def test_slow_loris_is_dropped_within_the_timeout_and_scrapes_succeed(
    start_sink: Any, sockets: list[socket.socket]
) -> None:
    sink = start_sink(**{"request-timeout-ms": TIMEOUT_MS})
    assert "heron_emit_count_default_total" in scrape(sink.port)
    threads = sink.threads()
    began = time.monotonic()
    held = [connect(sink.port, sockets, PARTIAL) for _ in range(20)]
    trickling = [connect(sink.port, sockets) for _ in range(5)]
    stop = threading.Event()
    writers = [threading.Thread(target=trickle, args=(s, stop), daemon=True) for s in trickling]
    for writer in writers:
        writer.start()
    try:
        wait_until(lambda: sink.open_connections() >= 25, "the 25 connections to be accepted")
        assert "heron_emit_count_default_total" in scrape(sink.port)  # during the attack
        assert sink.threads() == threads
        wait_until(
            lambda: all(closed_by_server(s) for s in held + trickling),
            "the server to drop every slow connection",
            timeout=TIMEOUT_MS / 1000 + CLOSE_MARGIN_S,
        )
        print(f"every slow connection dropped after {time.monotonic() - began:.2f} s")
        assert time.monotonic() - began >= TIMEOUT_MS / 1000 * 0.9  # not before the deadline
    finally:
        stop.set()
    assert "heron_emit_count_default_total" in scrape(sink.port)  # after it


def test_control_a_threading_http_server_holds_slow_loris_past_the_timeout(
    sockets: list[socket.socket],
) -> None:
    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"heron_emit_count_default_total 7.0\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Plain(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # the held connections end with a broken pipe when the test closes them

    server = Plain(("127.0.0.1", 0), Metrics)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        port = server.server_address[1]
        threads = threading.active_count()
        held = [connect(port, sockets, PARTIAL) for _ in range(20)]
        wait_until(lambda: threading.active_count() >= threads + 20, "a thread per connection")
        with pytest.raises(TimeoutError):
            wait_until(
                lambda: any(closed_by_server(s) for s in held),
                "a slow connection to be dropped",
                timeout=TIMEOUT_MS / 1000 + CLOSE_MARGIN_S,
            )
        assert "heron_emit_count_default_total" in scrape(port)
    finally:
        for sock in sockets:
            sock.close()
        server.shutdown()
        server.server_close()


def test_a_connection_flood_keeps_threads_and_memory_bounded_and_scrapes_succeed(
    start_sink: Any, sockets: list[socket.socket]
) -> None:
    limit = 64
    sink = start_sink(**{"max-connections": limit})
    assert "heron_emit_count_default_total" in scrape(sink.port)
    threads, rss = sink.threads(), sink.rss()
    peak_open = 0
    for i in range(600):
        connect(sink.port, sockets, PARTIAL if i % 2 else b"")
        if i % 50 == 49:
            peak_open = max(peak_open, sink.open_connections())
            assert "heron_emit_count_default_total" in scrape(sink.port)  # during the flood
    dropped = sum(closed_by_server(s) for s in sockets)
    grown = (sink.rss() - rss) >> 20
    print(
        f"600 connections: {dropped} dropped by the sink, at most {peak_open} open at once, "
        f"threads {threads} -> {sink.threads()}, RSS grew {grown} MB"
    )
    assert peak_open <= limit
    assert dropped >= 600 - limit
    assert sink.threads() == threads
    assert grown < 16
    for sock in sockets:
        sock.close()
    sockets.clear()
    assert "heron_emit_count_default_total" in scrape(sink.port)  # after it
    wait_until(lambda: sink.open_connections() == 0, "every connection to end")
