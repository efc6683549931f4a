"""Serving the tracker: bind, announce the address, serve until SIGINT or SIGTERM, clean up."""

from __future__ import annotations

import errno
import logging
import signal
import socket
from collections.abc import Callable, Mapping, Sequence
from types import FrameType
from typing import Any

import uvicorn

from heron_core._front_door import FrontDoor, parse_allowed_hosts
from heron_core._http_limits import limited_config
from heron_core.errors import ConfigurationError
from heron_core.tracker._app import create_app
from heron_core.tracker._watch import Tracker

__all__ = ["serve"]

log = logging.getLogger(__name__)


def _bind(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
    except OSError as exc:
        sock.close()
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror})"
        raise ConfigurationError(f"the tracker's address {address}:{port} {why}") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(
    clusters: Mapping[str, Mapping[str, Any]],
    *,
    address: str = "127.0.0.1",
    port: int = 8888,
    allowed_hosts: Sequence[str] = (),
    announce: Callable[[str], None] = print,
    timeout: float = 3.0,
    **options: Any,
) -> None:
    """Watch ``clusters`` (name -> resolved config) and serve the tracker's API on
    ``address:port`` (port 0: any free port) until SIGINT or SIGTERM; then stop every watch
    and return.

    Only requests whose ``Host`` is the bound address and port, a loopback name when that
    address is loopback or a wildcard, or one of ``allowed_hosts`` (``NAME`` or
    ``NAME:PORT``) are answered; others get 400 (see `heron_core._front_door`). Slow, idle
    and too many clients are cut off by the limits of `heron_core._http_limits` (request
    deadline, open connections, head size, requests at once).
    ``announce`` receives ``"serving http://<address>:<port>"`` once the socket is bound (the
    real port when ``port`` is 0). Other ``options`` go to each `ClusterWatch`.

    Raises:
        ConfigurationError: the address cannot be bound (e.g. the port is in use), or an
            allowed host is not a host name.
    """
    extra_hosts = parse_allowed_hosts(allowed_hosts)
    sock = _bind(address, port)
    tracker = Tracker(clusters, timeout=timeout, **options)
    stopped: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        # uvicorn re-raises the signal that stopped it once it is done: let it land here.
        stopped.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        tracker.start()
        host, bound_port = sock.getsockname()[:2]
        door = FrontDoor(address, bound_port, extra_hosts, server="heron tracker")
        config = limited_config(
            create_app(tracker, timeout=timeout, front_door=door),
            server="heron tracker",
            log_config=None,
            access_log=False,
            lifespan="off",
            proxy_headers=False,  # no X-Forwarded-* from a client: a peer is what it is
            timeout_graceful_shutdown=5,
        )
        server = uvicorn.Server(config)
        shown = f"[{host}]" if ":" in host else host
        announce(f"serving http://{shown}:{bound_port}")
        server.run(sockets=[sock])
        log.info("stopping: closing the state managers")
    finally:
        tracker.close()
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
