"""Requests to a running scheduler service (``heron restart``, ``heron update``): a JSON file
in ``W/scheduler-requests/`` (owner-only), then SIGHUP to the service's pid (its
``SchedulerLocation``); the service carries the request out and writes the answer beside it.

The service runs on the machine ``heron submit`` ran on, where ``W`` is, as ``heron kill``
assumes too; the directory's mode is the access check.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError

from heron_core.proto import packing_plan_pb2, topology_pb2

__all__ = [
    "REQUESTS_DIR",
    "Request",
    "RequestAnswer",
    "RestartRequest",
    "UpdateRequest",
    "pending_requests",
    "read_answer",
    "write_answer",
    "write_request",
]

REQUESTS_DIR = "scheduler-requests"
_REQUEST = ".request.json"
_ANSWER = ".answer.json"


@dataclass(frozen=True)
class RestartRequest:
    """Restart ``container`` (-1: every container)."""

    container: int


@dataclass(frozen=True)
class UpdateRequest:
    """Run the topology with a new logical plan and packing plan (``heron update``)."""

    topology: topology_pb2.Topology
    packing_plan: packing_plan_pb2.PackingPlan


Request = RestartRequest | UpdateRequest


@dataclass(frozen=True)
class RequestAnswer:
    """What the service did with a request: ``ok``, and a message (the error when not ok)."""

    ok: bool
    message: str


def _write(path: Path, document: dict[str, object]) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(document))
    partial.replace(path)  # readers never see half a file


def _encode(request: Request) -> dict[str, object]:
    if isinstance(request, RestartRequest):
        return {"restart": request.container}
    return {
        "update": {
            "topology": base64.b64encode(request.topology.SerializeToString()).decode(),
            "packing_plan": base64.b64encode(request.packing_plan.SerializeToString()).decode(),
        }
    }


def _decode(document: object) -> Request | None:
    if not isinstance(document, dict):
        return None
    restart = document.get("restart")
    if isinstance(restart, int) and not isinstance(restart, bool):
        return RestartRequest(restart)
    update = document.get("update")
    if isinstance(update, dict):
        try:
            topology_bytes = base64.b64decode(update["topology"], validate=True)
            plan_bytes = base64.b64decode(update["packing_plan"], validate=True)
            topology = topology_pb2.Topology.FromString(topology_bytes)
            plan = packing_plan_pb2.PackingPlan.FromString(plan_bytes)
        except (KeyError, TypeError, ValueError, DecodeError):  # binascii.Error: a ValueError
            return None
        if not topology.id or not plan.containers:
            return None
        return UpdateRequest(topology, plan)
    return None


def write_request(working_dir: Path, request: Request) -> Path:
    """File ``request``; its path.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as w:
    ...     path = write_request(Path(w), RestartRequest(1))
    ...     [(p.name == path.name, r) for p, r in pending_requests(Path(w))]
    [(True, RestartRequest(container=1))]
    """
    directory = working_dir / REQUESTS_DIR
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / f"{uuid.uuid4().hex}{_REQUEST}"
    _write(path, _encode(request))
    return path


def pending_requests(working_dir: Path) -> list[tuple[Path, Request | None]]:
    """The requests not answered yet, oldest first: ``(path, request)``, the request None
    for a file that is not a readable request."""
    directory = working_dir / REQUESTS_DIR
    if not directory.is_dir():
        return []
    found: list[tuple[Path, Request | None]] = []
    for path in sorted(directory.glob(f"*{_REQUEST}"), key=lambda p: p.stat().st_mtime_ns):
        if _answer_path(path).exists():
            continue
        found.append((path, _decode(_read(path))))
    return found


def _answer_path(request: Path) -> Path:
    return request.with_name(request.name.removesuffix(_REQUEST) + _ANSWER)


def write_answer(request: Path, answer: RequestAnswer) -> None:
    """Answer ``request``."""
    _write(_answer_path(request), {"ok": answer.ok, "message": answer.message})


def read_answer(request: Path) -> RequestAnswer | None:
    """The answer to ``request``, or None while there is none; removes both files once read."""
    path = _answer_path(request)
    if not path.exists():
        return None
    document = _read(path)
    for done in (request, path):
        done.unlink(missing_ok=True)
    if not isinstance(document, dict):
        return RequestAnswer(False, f"the scheduler service's answer {path} is not readable")
    return RequestAnswer(bool(document.get("ok")), str(document.get("message", "")))


def _read(path: Path) -> object:
    """The JSON document in ``path``; None for a file that cannot be read or parsed (not
    UTF-8, not JSON, nested past the parser's depth)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
