"""The UI's audit log: one JSON line per operate request (activate, deactivate, restart, kill),
whatever became of it, appended to a file only its owner reads (0600).

Each line holds ``time`` (when the request arrived, UTC, ISO 8601), ``seconds`` (until it was
answered), where it came from (``client`` address and port as the socket saw them, the
``host``, ``origin`` and ``referer`` headers it carried), what it asked (``action``,
``cluster``, ``environ``, ``topology``) and its ``result``: ``"ok"``, or the error the UI
answered (a refused Host, Origin or token, the client's refusal, ...), with the HTTP
``status``. A request that got no answer (its client went away, the server failed) has
``status`` null and says so.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from heron_core.client import HERON_HOME_ENV
from heron_core.config import resolve_path, setting
from heron_core.errors import ConfigurationError

__all__ = ["AUDIT_FILE", "AuditLog", "AuditMiddleware", "default_audit_path"]

log = logging.getLogger(__name__)

AUDIT_FILE = "ui-audit.log"
"""The audit log's name in ``<heron home>/logs``."""

_BODY_KEPT = 64 * 1024
"""Bytes of an answer kept to find its message."""
_HEADER_KEPT = 1000
"""Characters of a header value written."""


def default_audit_path(heron_home: str | os.PathLike[str] | None = None) -> Path:
    """``<heron home>/logs/ui-audit.log``, the heron home being ``heron_home``, else
    ``$HERON_HOME``, else the registry's ``heron.directory.home`` (the home the UI's actions
    use unless a cluster config names another).

    >>> default_audit_path("/h")
    PosixPath('/h/logs/ui-audit.log')
    """
    home = heron_home if heron_home is not None else os.environ.get(HERON_HOME_ENV) or None
    if home is None:
        home = setting({}, "heron.directory.home")
    return resolve_path(home).absolute() / "logs" / AUDIT_FILE


class AuditLog:
    """The audit file ``path``: created (with its directory) if missing, mode 0600.

    Raises:
        ConfigurationError: the file cannot be created or opened for appending, is not a
            regular file, or belongs to another user.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = resolve_path(path).absolute()
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = self._open()
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                    raise ConfigurationError(
                        f"the UI's audit log {self.path} is not a regular file of this user"
                    )
                if info.st_mode & 0o077:
                    os.fchmod(fd, 0o600)
            finally:
                os.close(fd)
        except OSError as exc:
            raise ConfigurationError(
                f"the UI's audit log {self.path} cannot be opened: {exc.strerror or exc} "
                "(choose another file with --audit-log)"
            ) from exc

    def _open(self) -> int:
        return os.open(
            self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )

    def write(self, record: Mapping[str, Any]) -> None:
        """Append ``record`` as one JSON line (the file is opened for each line, so it may be
        rotated meanwhile). A failure is logged, never raised."""
        line = (json.dumps(record, ensure_ascii=True) + "\n").encode()
        try:
            fd = self._open()
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError as exc:
            log.error("cannot write the audit log %s: %s; the entry was: %s", self.path, exc, line)


class AuditMiddleware:
    """ASGI middleware writing one `AuditLog` line for every POST whose path matches
    ``route`` (a Starlette path template with ``{action}``, ``{cluster}``, ``{environ}`` and
    ``{topology}``): put it outside every middleware that may refuse such a request, so its
    refusals are audited too."""

    def __init__(self, app: ASGIApp, audit: AuditLog, route: str) -> None:
        self.app = app
        self.audit = audit
        self._route = compile_path(route)[0]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = (
            self._route.match(scope["path"])
            if scope["type"] == "http" and scope["method"] == "POST"
            else None
        )
        if matched is None:
            await self.app(scope, receive, send)
            return
        started, wall = time.monotonic(), datetime.now(UTC)
        answer: dict[str, Any] = {"status": None, "body": b""}

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body" and len(answer["body"]) < _BODY_KEPT:
                answer["body"] += message.get("body", b"")[:_BODY_KEPT]
            await send(message)

        try:
            await self.app(scope, receive, keep)
        finally:
            seconds = time.monotonic() - started
            record = _record(scope, matched, wall, seconds, answer["status"], answer["body"])
            self.audit.write(record)


def _headers(scope: Scope) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in scope["headers"]:
        name = key.decode("latin-1").lower()
        if name in ("host", "origin", "referer") and name not in found:
            found[name] = value.decode("latin-1")[:_HEADER_KEPT]
    return found


def _result(status: int | None, body: bytes) -> str:
    if status is None:
        return "no answer (the client went away or the server failed; see the UI's log)"
    if status < 400:
        return "ok"
    try:
        decoded = json.loads(body)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict):
        for key in ("error", "detail"):
            if isinstance(decoded.get(key), str):
                return str(decoded[key])
    return f"HTTP {status}"


def _record(
    scope: Scope,
    matched: re.Match[str],
    when: datetime,
    seconds: float,
    status: int | None,
    body: bytes,
) -> dict[str, Any]:
    client = scope.get("client")
    headers = _headers(scope)
    return {
        "time": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "seconds": round(seconds, 3),
        "client": f"{client[0]}:{client[1]}" if client else None,
        "host": headers.get("host"),
        "origin": headers.get("origin"),
        "referer": headers.get("referer"),
        "action": matched["action"],
        "cluster": matched["cluster"],
        "environ": matched["environ"],
        "topology": matched["topology"],
        "status": status,
        "result": _result(status, body),
    }
