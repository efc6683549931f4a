"""The UI's client of the tracker's REST API (the only peer the UI talks to)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from heron_core.errors import HeronError

__all__ = ["TrackerClient", "TrackerError"]

Params = Mapping[str, str | int | Sequence[str]]


class TrackerError(HeronError):
    """The tracker answered with an error, or could not be reached.

    Attributes:
        status: the HTTP status the UI answers with: the tracker's own 4xx status, else 502.
    """

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


class TrackerClient:
    """Asks the tracker at ``url`` (e.g. ``http://127.0.0.1:8888``) for JSON.

    Args:
        url: the tracker's base URL.
        timeout: seconds to wait for one answer.
    """

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.url, timeout=timeout)

    async def get(self, path: str, params: Params | None = None) -> Any:
        """The JSON result of ``GET <tracker><path>?<params>``.

        Raises:
            TrackerError: the tracker is unreachable, answered an error (its ``detail`` or
                ``message`` is kept) or did not answer JSON.
        """
        try:
            response = await self._http.get(path, params=_query(params))
        except httpx.HTTPError as exc:
            raise TrackerError(f"cannot reach the tracker at {self.url}{path}: {exc}") from exc
        if response.status_code >= 400:
            raise _failure(path, response)
        try:
            return response.json()
        except ValueError as exc:
            raise TrackerError(f"the tracker answered {path} with something not JSON") from exc

    async def stream(self, path: str, params: Params | None = None) -> httpx.Response:
        """The open answer of ``GET <tracker><path>`` (for file downloads): read it with
        ``aiter_raw()``, then ``aclose()`` it.

        Raises:
            TrackerError: as `get` (the answer is then already closed).
        """
        request = self._http.build_request("GET", path, params=_query(params))
        try:
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise TrackerError(f"cannot reach the tracker at {self.url}{path}: {exc}") from exc
        if response.status_code >= 400:
            await response.aread()
            await response.aclose()
            raise _failure(path, response)
        return response

    async def close(self) -> None:
        """Close the connections (idempotent)."""
        await self._http.aclose()


def _query(params: Params | None) -> list[tuple[str, str | int | float | bool | None]]:
    """``params`` as a list of pairs, a sequence value giving one pair per item."""
    return [
        (key, str(v))
        for key, value in (params or {}).items()
        for v in ([value] if isinstance(value, str | int) else value)
    ]


def _failure(path: str, response: httpx.Response) -> TrackerError:
    """The error for an answer >= 400: the tracker's 4xx status is kept, a 5xx becomes 502."""
    status = response.status_code if response.status_code < 500 else 502
    return TrackerError(f"the tracker answered {path}: {_detail(response)}", status)


def _detail(response: httpx.Response) -> str:
    """The error message of a tracker answer: FastAPI's ``detail``, the legacy ``message``,
    else the status line."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        for key in ("detail", "message"):
            if body.get(key):
                detail = body[key]
                return detail if isinstance(detail, str) else str(detail)
    text = response.text.strip()[:300]
    return f"HTTP {response.status_code} {response.reason_phrase}" + (f": {text}" if text else "")
