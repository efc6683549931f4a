"""``heron tracker`` and ``heron ui`` under slow-loris, connection floods and stalled readers: a
connection that does not deliver its request within ``REQUEST_TIMEOUT_S`` of its accept (or of
its previous response) is closed (a head sent byte by byte, half a head held, a body that
trickles, a kept-alive connection that starts its next request and stops), at most
``MAX_CONNECTIONS`` are open at once, a response whose client reads nothing for
``STALL_TIMEOUT_S`` is dropped, a request head over ``MAX_HEAD_BYTES`` is refused, and honest
clients (pages, REST routes, a slow download that pauses longer than the request deadline) are
answered during and after (`heron_core._http_limits`).

Attacker: any process that reaches the servers' address (on a shared host: any local user;
with ``--address 0.0.0.0``: the network). The servers are real processes over a running
topology. The CONTROL is a plain uvicorn server of the same tracker app over the same cluster
(what ``heron tracker`` ran before these limits): it holds the same slow-loris connections
past the deadline, keeps every connection of a flood open, keeps a stalled download open past
the stall timeout and answers a head over the limit that arrives in one piece, so each attack
test can fail."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from security_support import tracked_topology

from heron_core._http_limits import (
    BACKLOG,
    MAX_CONNECTIONS,
    MAX_HEAD_BYTES,
    REPORT_EVERY_S,
    REQUEST_TIMEOUT_S,
    STALL_TIMEOUT_S,
    ConnectionBound,
)
from heron_core.testing.processes import PipeLines, wait_until

NAME = "floods"
MARGIN_S = 8.0
"""How long past a deadline a connection may take to be seen closed (a loaded 2-core host)."""

PARTIAL = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
"""A request head without its final empty line: the server waits for the rest."""

SLOW_POST = b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n"
"""A whole request head announcing a body that then comes a byte at a time."""

BIG_FILE = "download.bin"
BIG_SIZE = 16 << 20
"""A file in the container's logs larger than the kernel's socket buffers, so that a reader
that stops stalls the server's writes (not ``*.log``: a failed test prints those)."""

SMALL_RCVBUF = 64 << 10
"""The receive buffer of the download clients: the server's writes wait on their reads."""

PLAIN_TRACKER = """
import socket, sys
import uvicorn
from heron_core._front_door import FrontDoor
from heron_core.client import client_config
from heron_core.tracker._app import create_app
from heron_core.tracker._watch import Tracker

config_dir, home = sys.argv[1:3]
tracker = Tracker({"local": client_config("local", config_path=config_dir, heron_home=home)})
tracker.start()
sock = socket.create_server(("127.0.0.1", 0))
port = sock.getsockname()[1]
door = FrontDoor("127.0.0.1", port, server="plain tracker")
app = create_app(tracker, timeout=3.0, front_door=door)
print(port, flush=True)
config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off")
uvicorn.Server(config).run(sockets=[sock])
tracker.close()
"""
"""The control: the tracker's app on plain uvicorn, as ``heron tracker`` served it before."""


# --- the decision, without processes --------------------------------------------------------


def test_a_new_connection_takes_the_place_of_the_one_waiting_longest() -> None:
    bound = ConnectionBound[str](3)
    for name in "abc":
        assert bound.admit(name).admitted
    bound.waiting("a", False)  # a's request is being answered
    bound.waiting("a", True)  # and a waits again, from now: b has waited longest
    assert bound.admit("d") == (True, "b")
    bound.waiting("c", False)
    bound.waiting("d", False)
    assert bound.admit("e") == (True, "a")
    bound.waiting("e", False)
    assert bound.admit("f") == (False, None)  # every open one is being answered
    assert len(bound) == 3
    bound.release("c")
    bound.release("c")
    assert bound.admit("f") == (True, None)
    bound.waiting("gone", True)  # not counted: ignored
    assert len(bound) == 3
    with pytest.raises(ValueError, match="at least 1 connection"):
        ConnectionBound[str](0)


# --- the real servers -----------------------------------------------------------------------


@dataclass
class Server:
    """One HTTP server process under attack."""

    name: str
    url: str
    pid: int
    err: PipeLines | None
    routes: tuple[str, ...]
    """GET routes an honest client asks (each must answer 200)."""

    @property
    def port(self) -> int:
        return int(self.url.rpartition(":")[2])

    def honest(self) -> None:
        """GET every route on a fresh connection, as a client that sends its request at once;
        each must answer 200."""
        with httpx.Client(base_url=self.url, timeout=30) as client:
            for route in self.routes:
                answer = client.get(route)
                assert answer.status_code == 200, (self.name, route, answer.text[:300])

    def open_connections(self) -> int:
        """Established TCP connections on the server's port, as its process sees them."""
        connections = psutil.Process(self.pid).net_connections(kind="tcp")
        return sum(
            c.status == psutil.CONN_ESTABLISHED and c.laddr.port == self.port for c in connections
        )

    def holds(self, client: socket.socket) -> bool:
        """Whether the server still has its end of ``client`` open."""
        port = client.getsockname()[1]
        connections = psutil.Process(self.pid).net_connections(kind="tcp")
        return any(c.raddr and c.raddr.port == port for c in connections)

    def logged(self, pattern: str) -> bool:
        """Whether a line of the server's stderr contains ``pattern``."""
        assert self.err is not None
        return bool(self.err.match(f".*{pattern}.*"))

    def threads(self) -> int:
        return psutil.Process(self.pid).num_threads()

    def rss(self) -> int:
        return psutil.Process(self.pid).memory_info().rss


@dataclass
class Servers:
    tracker: Server
    ui: Server
    plain: Server
    """The control: the tracker's app on plain uvicorn."""
    logs: Path
    """The container's logs directory."""
    download: str
    """The tracker's download route of `BIG_FILE` (path and query)."""


@contextlib.contextmanager
def plain_tracker(config_dir: Path, home: Path, failed: Callable[[], bool]) -> Iterator[Server]:
    """The control server in a child process, ended by pid whatever happens."""
    process = subprocess.Popen(
        [sys.executable, "-c", PLAIN_TRACKER, str(config_dir), str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = PipeLines(process.stdout), PipeLines(process.stderr)
    try:
        wait_until(
            lambda: out.match(r"\d+") or process.poll() is not None, "the plain tracker's port"
        )
        assert process.poll() is None, "\n".join(err.lines)
        url = f"http://127.0.0.1:{out.match(r'[0-9]+')[0]}"
        yield Server("plain tracker", url, process.pid, err, ("/health",))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)
        out.join(10)
        err.join(10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        if failed():
            print("--- the plain tracker's stderr ---", *err.lines, sep="\n")


@pytest.fixture(scope="module")
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Servers]:
    """A topology on ``local`` (one container), ``heron tracker`` and ``heron ui`` over it,
    and the plain tracker (the control)."""
    failures = request.session.testsfailed

    def failed() -> bool:
        return request.session.testsfailed > failures

    root = tmp_path_factory.mktemp("floods")
    with (
        tracked_topology(root, NAME, failed) as tracked,
        plain_tracker(tracked.configs, tracked.home, failed) as plain,
    ):
        run, tracker, ui, ids = tracked.run, tracked.tracker, tracked.ui, tracked.ids
        _, container = tracked.bolt_log()
        query = httpx.QueryParams({**ids, "container": container})
        download = f"/topologies/containerfiledownload?{query}&path=logs/{BIG_FILE}"
        page = f"/topologies/local/default/{NAME}"
        yield Servers(
            tracker=Server(
                "heron tracker",
                tracker.url,
                tracker.proc.pid,
                tracker.err,
                ("/health", "/topologies", f"/topologies/logicalplan?{httpx.QueryParams(ids)}"),
            ),
            ui=Server(
                "heron ui",
                ui.url,
                ui.proc.pid,
                ui.err,
                ("/", page, "/api/topologies", f"/api{page}", "/static/ui.js"),
            ),
            plain=plain,
            logs=run.working_dir / "logs",
            download=download,
        )


@pytest.fixture(name="sockets")
def sockets_fixture() -> Iterator[list[socket.socket]]:
    """Client sockets a test opens; all closed at teardown."""
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def connect(
    server: Server, sockets: list[socket.socket], first: bytes = b"", rcvbuf: int = 0
) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sockets.append(sock)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", server.port))
    if first:
        sock.sendall(first)
    return sock


def kept_alive(server: Server, sockets: list[socket.socket]) -> socket.socket:
    """A connection that asks a whole request, reads the whole answer, then sends `PARTIAL`
    of its next request: its deadline runs from the end of the answer."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", server.routes[0])
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 200 and not answer.will_close, server.name
    assert connection.sock is not None
    sockets.append(connection.sock)
    connection.sock.sendall(PARTIAL)
    return connection.sock


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (end of stream or reset), reading (and dropping)
    whatever it sent before."""
    sock.setblocking(False)
    try:
        while sock.recv(1 << 16):
            pass
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


class Trickle:
    """One thread sending the next byte of a request head that never ends to each of its
    sockets every 0.2 s (a send that fails drops that socket)."""

    def __init__(self, sockets: list[socket.socket]) -> None:
        self.sockets = list(sockets)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for byte in PARTIAL * 1000:
            if self.stop.wait(0.2):
                return
            for sock in list(self.sockets):
                try:
                    sock.send(bytes([byte]))
                except OSError:
                    self.sockets.remove(sock)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)


@pytest.mark.processes
def test_slow_loris_is_closed_within_the_deadline_and_honest_clients_are_answered(
    servers: Servers, sockets: list[socket.socket]
) -> None:
    attacked = (servers.tracker, servers.ui)
    for server in attacked:
        server.honest()
    began = time.monotonic()
    slow: list[socket.socket] = []
    trickling: list[socket.socket] = []
    for server in attacked:
        held = [connect(server, sockets, PARTIAL) for _ in range(20)]
        dripping = [connect(server, sockets) for _ in range(20)]
        posting = [connect(server, sockets, SLOW_POST) for _ in range(5)]
        idle = [kept_alive(server, sockets) for _ in range(5)]
        slow += held + dripping + posting + idle
        trickling += dripping + posting
    trickle = Trickle(trickling)
    try:
        for server in attacked:
            wait_until(
                lambda: server.open_connections() >= 50,  # noqa: B023 (called at once)
                f"{server.name} to accept the 50 slow connections",
            )
            server.honest()  # during the attack
        wait_until(
            lambda: all(closed_by_server(s) for s in slow),
            "both servers to close every slow connection",
            timeout=REQUEST_TIMEOUT_S + MARGIN_S,
        )
        elapsed = time.monotonic() - began
        print(f"every slow connection closed after {elapsed:.2f} s")
        assert elapsed >= REQUEST_TIMEOUT_S * 0.9  # not before the deadline
    finally:
        trickle.close()
    for server in attacked:
        server.honest()  # after it
    for server in attacked:
        line = f"{server.name} closed connections at its limits: .*sent part of a request"
        wait_until(
            lambda: server.logged(line),  # noqa: B023 (called before the next iteration)
            f"{server.name} to log the connections it closed",
            timeout=REPORT_EVERY_S + MARGIN_S,
        )


@pytest.mark.processes
@pytest.mark.parametrize("which", ["tracker", "ui"])
def test_a_connection_flood_stays_bounded_and_honest_clients_are_answered(
    servers: Servers, sockets: list[socket.socket], which: str
) -> None:
    server: Server = getattr(servers, which)
    server.honest()
    wait_until(lambda: server.open_connections() == 0, f"{server.name} to be idle")
    threads, rss = server.threads(), server.rss()
    flood = 3 * MAX_CONNECTIONS
    peak_open = 0
    began = time.monotonic()
    for i in range(flood):
        connect(server, sockets, PARTIAL if i % 2 else b"")
        if i % 64 == 63:
            peak_open = max(peak_open, server.open_connections())
            server.honest()  # during the flood
            assert server.threads() <= threads
    took = time.monotonic() - began
    # the bound decides about a burst of accepted connections in the next turn of the loop
    wait_until(
        lambda: sum(not closed_by_server(s) for s in sockets) <= MAX_CONNECTIONS,
        f"{server.name} to keep at most {MAX_CONNECTIONS} connections",
        timeout=MARGIN_S,
    )
    assert server.open_connections() <= MAX_CONNECTIONS
    dropped = sum(closed_by_server(s) for s in sockets)
    grown = (server.rss() - rss) >> 20
    print(
        f"{server.name}: {flood} connections in {took:.1f} s: {dropped} closed by the server, "
        f"at most {peak_open} open at once, threads {threads} -> {server.threads()}, "
        f"RSS grew {grown} MB"
    )
    assert peak_open <= MAX_CONNECTIONS + BACKLOG
    assert server.threads() <= threads
    assert grown < 16
    for sock in sockets:
        sock.close()
    sockets.clear()
    server.honest()  # after it
    wait_until(lambda: server.open_connections() == 0, f"{server.name} to close every connection")


@pytest.mark.processes
def test_a_request_head_over_the_limit_is_refused(servers: Servers) -> None:
    """Control: the same request with a head under the limit is answered, and plain uvicorn
    (h11 limits only a head still incomplete) answers the one over it."""

    def head(server: Server, size: int) -> bytes:
        route = server.routes[0].encode()
        start = b"GET " + route + b" HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Pad:" % server.port
        return start + b"a" * (size - len(start) - 4) + b"\r\n\r\n"

    def status(server: Server, request: bytes) -> int | str:
        """The status of the answer to ``request``, or "reset" (a server that refuses a
        head may close before it read all of it)."""
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            try:
                sock.sendall(request)  # in one write: whole in one read of the server's
                answer = http.client.HTTPResponse(sock)
                answer.begin()
                answer.read()
            except ConnectionResetError:
                return "reset"
            return answer.status

    for server in (servers.tracker, servers.ui):
        assert status(server, head(server, MAX_HEAD_BYTES - 1024)) == 200, server.name
        for size in (MAX_HEAD_BYTES + 1024, 200 << 10):
            assert status(server, head(server, size)) in (400, "reset"), (server.name, size)
        server.honest()
    assert status(servers.plain, head(servers.plain, MAX_HEAD_BYTES + 1024)) == 200


def read_download(
    server: Server, path: str, sockets: list[socket.socket], pause_after: int, pause_s: float
) -> bytes:
    """GET ``path`` over a small receive buffer, reading the body in 64 KiB pieces; after
    ``pause_after`` bytes it stops reading for ``pause_s`` seconds. The body (chunked)."""
    sock = connect(server, sockets, rcvbuf=SMALL_RCVBUF)
    sock.settimeout(REQUEST_TIMEOUT_S + STALL_TIMEOUT_S)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    answer = http.client.HTTPResponse(sock)
    answer.begin()
    assert answer.status == 200, answer.read()[:300]
    body = bytearray()
    paused = False
    while piece := answer.read1(64 << 10):
        body += piece
        if not paused and len(body) >= pause_after:
            paused = True
            time.sleep(pause_s)
    return bytes(body)


@pytest.mark.processes
def test_a_slow_download_is_served_whole_and_a_stalled_one_is_dropped(
    servers: Servers, sockets: list[socket.socket]
) -> None:
    content = os.urandom(BIG_SIZE)
    (servers.logs / BIG_FILE).write_bytes(content)
    try:
        check_downloads(servers, sockets, content)
    finally:
        (servers.logs / BIG_FILE).unlink()


def check_downloads(servers: Servers, sockets: list[socket.socket], content: bytes) -> None:
    tracker, plain = servers.tracker, servers.plain
    pause_s = 2 * REQUEST_TIMEOUT_S
    slow: dict[str, Any] = {}

    def read_slowly() -> None:
        try:
            slow["body"] = read_download(tracker, servers.download, sockets, BIG_SIZE // 4, pause_s)
        except Exception as exc:  # shown by the test, not lost in the thread
            slow["error"] = exc
        slow["took"] = time.monotonic() - began

    reader = threading.Thread(target=read_slowly, daemon=True)
    began = time.monotonic()
    reader.start()
    request = f"GET {servers.download} HTTP/1.1\r\nHost: 127.0.0.1:{{}}\r\n\r\n"
    stalled = connect(tracker, sockets, request.format(tracker.port).encode(), SMALL_RCVBUF)
    control = connect(plain, sockets, request.format(plain.port).encode(), SMALL_RCVBUF)
    wait_until(lambda: tracker.holds(stalled) and plain.holds(control), "the servers to accept")
    wait_until(
        lambda: not tracker.holds(stalled),
        "the tracker to drop the download nobody reads",
        timeout=STALL_TIMEOUT_S + REQUEST_TIMEOUT_S + MARGIN_S,
    )
    dropped_after = time.monotonic() - began
    print(f"the stalled download dropped after {dropped_after:.1f} s")
    assert dropped_after >= STALL_TIMEOUT_S * 0.9
    assert plain.holds(control), "control: plain uvicorn holds the stalled download"
    reader.join(STALL_TIMEOUT_S)
    assert not reader.is_alive(), "the slow download did not end"
    print(f"the slow download (paused {pause_s} s) took {slow['took']:.1f} s")
    assert "error" not in slow, f"the slow download failed: {slow['error']!r}"
    body = slow["body"]
    assert len(body) == BIG_SIZE and hashlib.sha256(body).digest() == (
        hashlib.sha256(content).digest()
    )
    tracker.honest()


@pytest.mark.processes
def test_control_plain_uvicorn_holds_slow_loris_and_every_connection_of_a_flood(
    servers: Servers, sockets: list[socket.socket]
) -> None:
    plain = servers.plain
    plain.honest()
    held = [connect(plain, sockets, PARTIAL) for _ in range(20)]
    dripping = [connect(plain, sockets) for _ in range(20)]
    trickle = Trickle(dripping)
    try:
        with pytest.raises(TimeoutError):
            wait_until(
                lambda: any(closed_by_server(s) for s in held + dripping),
                "a slow connection to be closed",
                timeout=REQUEST_TIMEOUT_S + MARGIN_S,
            )
    finally:
        trickle.close()
    plain.honest()
    flood = MAX_CONNECTIONS + 64
    for i in range(flood):
        connect(plain, sockets, PARTIAL if i % 2 else b"")
    wait_until(
        lambda: plain.open_connections() >= flood + 40,
        "plain uvicorn to hold every connection of the flood",
    )
    assert not any(closed_by_server(s) for s in sockets)
    plain.honest()
