"""The front door of the HTTP servers (``heron tracker``, ``heron ui``): the ``Host`` names they
answer to, and the ``Origin`` a request that changes something must come from.

A DNS rebinding page (``evil.example`` resolved to 127.0.0.1 after the page loaded) reaches a
server bound to loopback from the victim's browser, as the same origin as the page: the only
trace is its ``Host`` header, which names ``evil.example``. So a server answers only requests
whose ``Host`` is a name it is meant to be reached as (`FrontDoor`): the address it is bound to,
``localhost``, ``127.0.0.1`` and ``[::1]`` when that address is loopback or a wildcard
(0.0.0.0, ::), and the names given with ``--allowed-host`` (`ALLOWED_HOST_FLAG`). A request
other than GET, HEAD or OPTIONS must also carry an ``Origin`` (or, without one, a ``Referer``)
of one of those names: a page of another site cannot act through the user's browser.

Ports: a name derived from the bind (its address, the loopback names) is allowed with the
bound port only; ``--allowed-host NAME`` allows ``NAME`` with any port (a proxy's name, say)
and ``--allowed-host NAME:PORT`` with that port only. A header without a port means port 80
(``Host``, ``http:`` origins) or 443 (``https:`` origins).

>>> door = FrontDoor("127.0.0.1", 8889, parse_allowed_hosts(["ui.example"]), server="heron ui")
>>> [door.host_refusal(h) is None for h in ("127.0.0.1:8889", "[::1]:8889", "ui.example:443")]
[True, True, True]
>>> print(door.host_refusal("evil.example:8889"))
refused: Host 'evil.example:8889' is not a name heron ui answers to (it answers to \
127.0.0.1:8889, localhost:8889, [::1]:8889, ui.example); to reach it as evil.example, start it \
with --allowed-host evil.example
>>> door.host_refusal("localhost:8888") is None, door.origin_refusal("http://localhost:8889", None)
(False, None)
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from heron_core.errors import ConfigurationError

__all__ = [
    "ALLOWED_HOST_FLAG",
    "AllowedHost",
    "FrontDoor",
    "FrontDoorMiddleware",
    "parse_allowed_hosts",
]

log = logging.getLogger(__name__)

ALLOWED_HOST_FLAG = "--allowed-host"
"""The command-line flag of ``heron tracker`` and ``heron ui`` naming one more allowed host."""

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing: no ``Origin`` check."""

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})
_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SHOWN = 200
"""Characters of a header value quoted in a refusal."""
_LOG_EVERY_S = 60.0


@dataclass(frozen=True)
class AllowedHost:
    """A name a server answers to: a lower-case host name, or an IP address in its compressed
    form (IPv6 without brackets), with the one port it is allowed with (None: any port)."""

    name: str
    port: int | None = None

    def __str__(self) -> str:
        name = f"[{self.name}]" if ":" in self.name else self.name
        return name if self.port is None else f"{name}:{self.port}"

    def allows(self, name: str, port: int) -> bool:
        """Whether ``name`` (normalized as `parse_host` does) with ``port`` is this host."""
        return name == self.name and (self.port is None or port == self.port)


def _normal_name(text: str) -> str | None:
    """``text`` as a host name (lower case) or an IP address (compressed); None when it is
    neither."""
    try:
        return ipaddress.ip_address(text).compressed
    except ValueError:
        pass
    name = text.lower()
    return name if _NAME.fullmatch(name) and len(name) <= 253 else None


def parse_host(text: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a ``Host`` value (``name``, ``name:port``, ``[v6]``, ``[v6]:port``;
    the port None when absent), or None when ``text`` is not one.

    >>> parse_host("LocalHost:8889"), parse_host("[::1]:80"), parse_host("127.0.0.1")
    (('localhost', 8889), ('::1', 80), ('127.0.0.1', None))
    >>> parse_host("a:b"), parse_host("::1"), parse_host("evil.example:8889@x"), parse_host("")
    (None, None, None, None)
    """
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or ":" not in inside or (rest and not rest.startswith(":")):
            return None
        name, port_text = _normal_name(inside), rest[1:] if rest else None
    else:
        host, colon, after = text.partition(":")
        name, port_text = _normal_name(host), after if colon else None
    if name is None:
        return None
    if port_text is None:
        return name, None
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def parse_allowed_hosts(values: Iterable[str]) -> list[AllowedHost]:
    """The ``--allowed-host`` values: ``NAME`` (any port), ``NAME:PORT``, an IPv6 address bare
    (any port) or in brackets (``[v6]:PORT``).

    Raises:
        ConfigurationError: a value is not one of those, naming it.

    >>> [str(h) for h in parse_allowed_hosts(["UI.example", "ui.example:8443", "::1"])]
    ['ui.example', 'ui.example:8443', '[::1]']
    """
    hosts = []
    for text in values:
        bare = _normal_name(text) if ":" in text and not text.startswith("[") else None
        parsed = (bare, None) if bare is not None else parse_host(text)
        if parsed is None:
            raise ConfigurationError(
                f"{ALLOWED_HOST_FLAG} {text!r} is not a host name or address, with an optional "
                ":PORT (e.g. heron.example.com, heron.example.com:8443, [fd00::1]:8889)"
            )
        hosts.append(AllowedHost(*parsed))
    return hosts


def _is_loopback(address: str) -> bool:
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _quoted(value: str) -> str:
    return repr(value if len(value) <= _SHOWN else value[:_SHOWN] + "...")


class FrontDoor:
    """The ``Host`` and ``Origin`` checks of the server ``server`` (a name for messages, e.g.
    ``"heron ui"``) bound to ``address`` and ``port`` (None: any port, for an app not bound
    to a socket), that also answers to ``extra`` (from `parse_allowed_hosts`).

    See the module's doc for the rule.
    """

    def __init__(
        self,
        address: str,
        port: int | None,
        extra: Sequence[AllowedHost] = (),
        *,
        server: str,
    ) -> None:
        self.server = server
        derived: list[str] = []
        if address not in _WILDCARDS:
            derived.append(_normal_name(address.strip("[]")) or address.lower())
        if address in _WILDCARDS or _is_loopback(address):
            derived += _LOOPBACK_NAMES
        hosts = [AllowedHost(name, port) for name in dict.fromkeys(derived)]
        self.allowed: tuple[AllowedHost, ...] = tuple(dict.fromkeys([*hosts, *extra]))
        """Every host the server answers to."""

    def _allows(self, name: str, port: int) -> bool:
        return any(host.allows(name, port) for host in self.allowed)

    def _listed(self) -> str:
        return ", ".join(map(str, self.allowed))

    def host_refusal(self, host: str | None) -> str | None:
        """Why a request with ``Host`` header ``host`` (None: without one) is refused, or
        None when the server answers to it."""
        if host is None:
            return f"refused: the request has no Host header; {self.server} needs one"
        parsed = parse_host(host)
        if parsed is not None and self._allows(parsed[0], parsed[1] or 80):
            return None
        fix = (
            ""
            if parsed is None
            else f"; to reach it as {parsed[0]}, start it with "
            + (f"{ALLOWED_HOST_FLAG} {AllowedHost(parsed[0])}")
        )
        return (
            f"refused: Host {_quoted(host)} is not a name {self.server} answers to (it answers "
            f"to {self._listed()}){fix}"
        )

    def origin_refusal(self, origin: str | None, referer: str | None) -> str | None:
        """Why a request that changes something is refused, given its ``Origin`` and
        ``Referer`` headers (the Referer counts only without an Origin), or None when it
        comes from a page of one of the server's hosts."""
        header, value = ("Origin", origin) if origin is not None else ("Referer", referer)
        if value is None:
            return (
                f"refused: the request has neither an Origin nor a Referer header; {self.server} "
                "takes such requests only from its own pages"
            )
        try:
            url = urlsplit(value)
            port = url.port
        except ValueError:
            url, port = None, None
        if url is not None and url.scheme in _DEFAULT_PORTS:
            parsed = parse_host(url.netloc)
            effective = port if port is not None else _DEFAULT_PORTS[url.scheme]
            if parsed is not None and "@" not in url.netloc and self._allows(parsed[0], effective):
                return None
        return (
            f"refused: {header} {_quoted(value)} is not a page of {self.server} (its pages are "
            f"at http(s)://{self._listed()}); another site's page may not act on it"
        )


class FrontDoorMiddleware:
    """ASGI middleware refusing what `FrontDoor` ``door`` refuses: a bad ``Host`` with 400,
    a bad ``Origin`` on a method other than GET, HEAD and OPTIONS with 403; the answer is JSON
    ``{error_key: message}``. Other requests reach ``app`` untouched.
    """

    def __init__(self, app: ASGIApp, door: FrontDoor, error_key: str = "detail") -> None:
        self.app = app
        self.door = door
        self.error_key = error_key
        self._logged_at = -_LOG_EVERY_S
        self._unlogged = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: dict[str, list[str]] = {}
        for key, value in scope["headers"]:
            headers.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        hosts = headers.get("host", [])
        status = 400
        if len(hosts) > 1:
            refusal: str | None = "refused: the request has more than one Host header"
        else:
            refusal = self.door.host_refusal(hosts[0] if hosts else None)
        method = scope.get("method", "GET")
        if refusal is None and method not in SAFE_METHODS:
            status = 403
            refusal = self.door.origin_refusal(
                headers.get("origin", [None])[0], headers.get("referer", [None])[0]
            )
        if refusal is None:
            await self.app(scope, receive, send)
            return
        self._note(scope, refusal)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": refusal[:120]})
            return
        body = json.dumps({self.error_key: refusal}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _note(self, scope: Scope, refusal: str) -> None:
        """Log a refusal: the first, then at most one a minute (with the count since)."""
        now = time.monotonic()
        if now - self._logged_at < _LOG_EVERY_S:
            self._unlogged += 1
            return
        client = scope.get("client") or ("?", 0)
        more = f" ({self._unlogged} more refused since)" if self._unlogged else ""
        log.warning(
            "%s %s from %s:%s %s%s",
            scope.get("method", scope["type"]),
            scope.get("path", ""),
            client[0],
            client[1],
            refusal,
            more,
        )
        self._logged_at, self._unlogged = now, 0
