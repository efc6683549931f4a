"""Serving the UI with uvicorn until SIGINT or SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable, Sequence
from types import FrameType

import uvicorn

from heron_core._front_door import FrontDoor, parse_allowed_hosts
from heron_core._http_limits import limited_config
from heron_core.errors import ConfigurationError
from heron_core.ui._app import create_app

__all__ = ["serve"]


def serve(
    tracker_url: str,
    *,
    port: int = 8889,
    address: str = "127.0.0.1",
    base_url: str = "",
    config_path: str | os.PathLike[str] | None = None,
    heron_home: str | os.PathLike[str] | None = None,
    allowed_hosts: Sequence[str] = (),
    audit_log: str | os.PathLike[str] | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the UI over the tracker at ``tracker_url`` until SIGINT or SIGTERM.

    The socket is bound first, then ``announce`` gets the URL it answers on (with the real
    port when ``port`` is 0) and the audit log's path; uvicorn then serves it and returns
    after a graceful shutdown. The topology page's actions (activate, deactivate, restart,
    kill) use the clusters of ``config_path`` and the heron home ``heron_home`` (None: as the
    CLI verbs); an action under way when the signal comes runs to its end before the process
    exits (its worker thread is not a daemon), so a kill is not left half done.

    Only requests whose ``Host`` is the bound address and port, a loopback name when that
    address is loopback or a wildcard, or one of ``allowed_hosts`` (``NAME`` or
    ``NAME:PORT``) are answered (400 otherwise); an action must come from a page of those
    hosts (403 otherwise). Every action, refused or not, is appended to ``audit_log`` (None:
    ``<heron home>/logs/ui-audit.log``, see `heron_core.ui._audit`). Slow, idle and too many
    clients are cut off by the limits of `heron_core._http_limits` (request deadline, open
    connections, head size, requests at once).

    Raises:
        ConfigurationError: ``tracker_url`` is not an http(s) URL, an allowed host is not a
            host name, the audit log cannot be opened, or the address cannot be bound.
    """
    if not tracker_url.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"--tracker-url must be an http:// or https:// URL, got {tracker_url!r}"
        )
    extra_hosts = parse_allowed_hosts(allowed_hosts)
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
        family = infos[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
    except OSError as exc:
        raise ConfigurationError(f"the UI cannot listen on {address}:{port}: {exc}") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    bound = sock.getsockname()[1]
    base = "/" + base_url.strip("/") if base_url.strip("/") else ""
    host = f"[{address}]" if ":" in address else address
    try:
        app = create_app(
            tracker_url,
            base,
            config_path=config_path,
            heron_home=heron_home,
            front_door=FrontDoor(address, bound, extra_hosts, server="heron ui"),
            audit_log=audit_log,
        )
    except ConfigurationError:
        sock.close()
        raise
    server = uvicorn.Server(
        limited_config(
            app,
            server="heron ui",
            log_level="warning",
            access_log=False,
            lifespan="on",
            proxy_headers=False,  # no X-Forwarded-* from a client: the audit logs the peer
            timeout_graceful_shutdown=5,
        )
    )
    stopped: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        # uvicorn re-raises the signal that stopped it once it has shut down: land it here, so
        # the command returns (exit status 0) instead of dying of the signal.
        stopped.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    announce(f"Heron UI listening on http://{host}:{bound}{base}/ (tracker {tracker_url})")
    announce(f"Heron UI audit log: {app.state.audit.path}")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
