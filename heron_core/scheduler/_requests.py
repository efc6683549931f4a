"""Requests to a running scheduler service (``heron restart``): a JSON file in
``W/scheduler-requests/`` (owner-only), then SIGHUP to the service's pid (its
``SchedulerLocation``); the service carries the request out and writes the answer beside it.

The service runs on the machine ``heron submit`` ran on, where ``W`` is, as ``heron kill``
assumes too; the directory's mode is the access check.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REQUESTS_DIR",
    "RequestAnswer",
    "pending_requests",
    "read_answer",
    "write_answer",
    "write_request",
]

REQUESTS_DIR = "scheduler-requests"
_REQUEST = ".request.json"
_ANSWER = ".answer.json"


@dataclass(frozen=True)
class RequestAnswer:
    """What the service did with a request: ``ok``, and a message (the error when not ok)."""

    ok: bool
    message: str


def _write(path: Path, document: dict[str, object]) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(document))
    partial.replace(path)  # readers never see half a file


def write_request(working_dir: Path, container: int) -> Path:
    """File a request to restart ``container`` (-1: every container); its path.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as w:
    ...     path = write_request(Path(w), 1)
    ...     [(p.name == path.name, c) for p, c in pending_requests(Path(w))]
    [(True, 1)]
    """
    directory = working_dir / REQUESTS_DIR
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / f"{uuid.uuid4().hex}{_REQUEST}"
    _write(path, {"restart": container})
    return path


def pending_requests(working_dir: Path) -> list[tuple[Path, int | None]]:
    """The requests not answered yet, oldest first: ``(path, container)``, the container None
    for a file that is not a readable request."""
    directory = working_dir / REQUESTS_DIR
    if not directory.is_dir():
        return []
    found = []
    for path in sorted(directory.glob(f"*{_REQUEST}"), key=lambda p: p.stat().st_mtime_ns):
        if _answer_path(path).exists():
            continue
        try:
            container = json.loads(path.read_text())["restart"]
        except (OSError, ValueError, KeyError, TypeError):
            container = None
        found.append((path, container if isinstance(container, int) else None))
    return found


def _answer_path(request: Path) -> Path:
    return request.with_name(request.name.removesuffix(_REQUEST) + _ANSWER)


def write_answer(request: Path, answer: RequestAnswer) -> None:
    """RequestAnswer ``request``."""
    _write(_answer_path(request), {"ok": answer.ok, "message": answer.message})


def read_answer(request: Path) -> RequestAnswer | None:
    """The answer to ``request``, or None while there is none; removes both files once read."""
    path = _answer_path(request)
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    for done in (request, path):
        done.unlink(missing_ok=True)
    return RequestAnswer(bool(document.get("ok")), str(document.get("message", "")))
