"""The UI's web application: three pages and the JSON API their scripts call.

The pages are static shells (``static/*.js`` draws them); the ``GET /api`` routes ask the
tracker, reshape its answers with `heron_core.ui._views` and return JSON. The browser only ever
talks to the UI: no tracker URL reaches it and every asset is served from ``/static``.

The ``POST /api/topologies/{cluster}/{environ}/{topology}/{action}`` routes (activate,
deactivate, restart, kill) act on the cluster through `heron_core.ui._actions`. Each needs the
server's random token in the `TOKEN_HEADER` header, which only its own pages carry (in their
``data-config``): a page of another site can neither read the token nor send the header
without a CORS preflight the UI never grants, so it cannot make a browser act (403).

Every request is first checked by the front door (`heron_core._front_door`): a ``Host`` the
UI does not answer to is refused (400) before any page, and so before any token, is served
(DNS rebinding); a POST must come from a page of the UI's own hosts (``Origin``, else
``Referer``; 403). Every operate request, refused or not, is written to the audit log
(`heron_core.ui._audit`).
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from heron_core._front_door import FrontDoor, FrontDoorMiddleware
from heron_core.errors import ConfigurationError, HeronError
from heron_core.ui import _views as views
from heron_core.ui._actions import ACTIONS, Controller
from heron_core.ui._audit import AuditLog, AuditMiddleware, default_audit_path
from heron_core.ui._tracker import TrackerClient, TrackerError

__all__ = ["TOKEN_HEADER", "create_app"]

logger = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
REFRESH_MS = 5000
LOG_TAIL_BYTES = 64 * 1024
TIMELINE_MINUTES = 60
TOKEN_HEADER = "X-Heron-UI-Token"
"""The request header carrying the server's token on every action (``POST``)."""


def create_app(
    tracker_url: str,
    base_url: str = "",
    *,
    config_path: str | os.PathLike[str] | None = None,
    heron_home: str | os.PathLike[str] | None = None,
    token: str | None = None,
    front_door: FrontDoor | None = None,
    audit_log: str | os.PathLike[str] | None = None,
) -> FastAPI:
    """The UI as an ASGI app serving under ``base_url`` (e.g. ``""`` or ``"/heron"``).

    Args:
        tracker_url: where the tracker answers, e.g. ``http://127.0.0.1:8888``.
        base_url: the path prefix the UI is served under (behind a proxy).
        config_path: the cluster config directory the actions use (None: as the CLI verbs,
            ``$HERON_CONFIG_PATH``, else the built-in clusters).
        heron_home: the heron home the actions use (None: as the CLI verbs).
        token: the token actions must carry in `TOKEN_HEADER` (None: a new random one; it is
            ``app.state.token``).
        front_door: the ``Host`` names the UI answers to and its pages' origins (None: the
            loopback names with any port).
        audit_log: the file operate requests are appended to (None: `default_audit_path` of
            ``heron_home``); it is ``app.state.audit``.

    Raises:
        ConfigurationError: the audit log cannot be opened.
    """
    base = "/" + base_url.strip("/") if base_url.strip("/") else ""
    audit = AuditLog(audit_log if audit_log is not None else default_audit_path(heron_home))
    tracker = TrackerClient(tracker_url)
    controller = Controller(config_path, heron_home)
    secret = token or secrets.token_urlsafe(32)
    acting: dict[tuple[str, str], str] = {}
    """The action running on each (cluster, topology): one at a time per topology."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await tracker.close()

    app = FastAPI(title="Heron UI", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.state.tracker = tracker
    app.state.token = secret
    app.state.controller = controller
    app.state.audit = audit
    app.mount(f"{base}/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(TrackerError)
    async def tracker_error(_: Request, exc: TrackerError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    # --- pages -------------------------------------------------------------------------------
    @app.get(f"{base}/", response_class=HTMLResponse)
    async def list_page() -> HTMLResponse:
        return _page(base, secret, "Topologies", "list", {})

    if base:

        @app.get(base, include_in_schema=False)
        async def bare_base() -> HTMLResponse:
            return _page(base, secret, "Topologies", "list", {})

    @app.get(f"{base}/topologies/{{cluster}}/{{environ}}/{{topology}}")
    async def topology_page(cluster: str, environ: str, topology: str) -> HTMLResponse:
        ids = {"cluster": cluster, "environ": environ, "topology": topology}
        return _page(base, secret, topology, "topology", ids)

    @app.get(f"{base}/topologies/{{cluster}}/{{environ}}/{{topology}}/instances/{{instance}}/log")
    async def log_page(cluster: str, environ: str, topology: str, instance: str) -> HTMLResponse:
        ids = {"cluster": cluster, "environ": environ, "topology": topology, "instance": instance}
        return _page(base, secret, f"{instance} log", "log", ids)

    # --- API ---------------------------------------------------------------------------------
    api = f"{base}/api/topologies"
    one = f"{api}/{{cluster}}/{{environ}}/{{topology}}"

    @app.get(api)
    async def topologies() -> dict[str, Any]:
        states = await tracker.get("/topologies/states")
        return {"topologies": views.topology_rows(states)}

    @app.get(one)
    async def topology(cluster: str, environ: str, topology: str) -> dict[str, Any]:
        ids = _ids(cluster, environ, topology)
        logical, physical, state = await asyncio.gather(
            tracker.get("/topologies/logicalplan", ids),
            tracker.get("/topologies/physicalplan", ids),
            tracker.get("/topologies/executionstate", ids),
        )
        return {
            "dag": views.dag_layout(logical),
            "physical_plan": physical,
            "execution_state": state,
            "status": views.topology_rows({cluster: {"": {environ: {topology: state}}}})[0][
                "status"
            ],
        }

    @app.get(f"{one}/metrics")
    async def metrics(cluster: str, environ: str, topology: str) -> dict[str, Any]:
        ids = _ids(cluster, environ, topology)
        logical = await tracker.get("/topologies/logicalplan", ids)
        parts = views.components(logical)
        names = {name: views.component_metric_names(logical, name) for name, _ in parts}

        async def fetch(component: str, interval: int) -> dict[str, Any]:
            wanted = sorted({n for ns in names[component].values() for n in ns})
            if not wanted:
                return {}
            params = {**ids, "component": component, "metricname": wanted}
            answer = await tracker.get("/topologies/metrics", {**params, "interval": str(interval)})
            return dict(answer.get("metrics") or {})

        jobs = [(c, label, fetch(c, s)) for c, _ in parts for label, s in views.INTERVALS]
        results = await asyncio.gather(*(job for _, _, job in jobs))
        table: dict[str, dict[str, dict[str, float | None]]] = {}
        for (component, label, _), result in zip(jobs, results, strict=True):
            table.setdefault(component, {})[label] = {
                kind: views.counter_value(result, names[component][kind], average=kind == "latency")
                for kind in views.COUNTERS
            }
        return {
            "intervals": [label for label, _ in views.INTERVALS],
            "counters": list(views.COUNTERS),
            "components": [{"name": c, "kind": k, "values": table[c]} for c, k in parts],
        }

    @app.get(f"{one}/usermetrics")
    async def user_metrics(cluster: str, environ: str, topology: str) -> dict[str, Any]:
        ids = _ids(cluster, environ, topology)
        logical = await tracker.get("/topologies/logicalplan", ids)
        parts = views.components(logical)
        listed = await asyncio.gather(
            *(tracker.get("/topologies/metricnames", {**ids, "component": c}) for c, _ in parts)
        )
        names = {
            c: views.user_metric_names(answer.get("metricnames") or [])
            for (c, _), answer in zip(parts, listed, strict=True)
        }

        async def fetch(component: str, interval: int) -> dict[str, Any]:
            if not names[component]:
                return {}
            params = {**ids, "component": component, "metricname": names[component]}
            answer = await tracker.get("/topologies/metrics", {**params, "interval": str(interval)})
            return dict(answer.get("metrics") or {})

        windows = (views.USER_METRIC_WINDOW_S, -1)
        values = await asyncio.gather(*(fetch(c, w) for c, _ in parts for w in windows))
        shown = []
        for i, (component, kind) in enumerate(parts):
            recent, all_time = values[2 * i], values[2 * i + 1]
            rows = views.user_metric_rows(names[component], recent, all_time)
            shown.append({"name": component, "kind": kind, "rows": rows})
        return {"window": f"{views.USER_METRIC_WINDOW_S // 60} min", "components": shown}

    @app.get(f"{one}/timeline")
    async def timeline(
        cluster: str, environ: str, topology: str, minutes: int = TIMELINE_MINUTES
    ) -> dict[str, Any]:
        ids = _ids(cluster, environ, topology)
        logical = await tracker.get("/topologies/logicalplan", ids)
        parts = views.components(logical)
        end = int(time.time())
        window = {"starttime": str(end - max(1, min(minutes, 180)) * 60), "endtime": str(end)}

        async def fetch(component: str, wanted: list[str]) -> dict[str, Any]:
            if not wanted:
                return {}
            params = {**ids, **window, "component": component, "metricname": wanted}
            answer = await tracker.get("/topologies/metricstimeline", params)
            return dict(answer.get("timeline") or {})

        names = {name: views.component_metric_names(logical, name) for name, _ in parts}
        wanted = {c: sorted({n for ns in names[c].values() for n in ns}) for c, _ in parts}
        results = await asyncio.gather(
            *(fetch(c, wanted[c]) for c, _ in parts),
            fetch(views.STMGR_COMPONENT, [views.BACK_PRESSURE_METRIC]),
        )
        rates, latency, failures = [], [], []
        for (component, kind), data in zip(parts, results, strict=False):
            counted = names[component]["emitted" if kind == "spout" else "executed"]
            rates.append({"name": component, "points": views.sum_series(data, counted)})
            latency.append(
                {
                    "name": component,
                    "points": views.average_series(data, names[component]["latency"]),
                }
            )
            failures.append(
                {"name": component, "points": views.sum_series(data, names[component]["failed"])}
            )
        pressure = results[-1].get(views.BACK_PRESSURE_METRIC) or {}
        back_pressure = [
            {"name": stmgr, "points": views.sum_series({"m": {stmgr: series}}, ["m"])}
            for stmgr, series in sorted(pressure.items())
        ]
        return {
            "starttime": int(window["starttime"]),
            "endtime": end,
            "charts": [
                {"id": "rates", "title": "Throughput (tuples / minute)", "series": rates},
                {"id": "latency", "title": "Latency (ms)", "series": latency},
                {"id": "failures", "title": "Failures (tuples / minute)", "series": failures},
                {
                    "id": "backpressure",
                    "title": "Back pressure initiated (ms / minute)",
                    "series": back_pressure,
                },
            ],
        }

    @app.get(f"{one}/exceptions")
    async def exceptions(cluster: str, environ: str, topology: str) -> dict[str, Any]:
        ids = _ids(cluster, environ, topology)
        logical = await tracker.get("/topologies/logicalplan", ids)
        parts = [c for c, _ in views.components(logical)]
        answers = await asyncio.gather(
            *(
                tracker.get(path, {**ids, "component": c})
                for c in parts
                for path in ("/topologies/exceptionsummary", "/topologies/exceptions")
            )
        )
        shown = []
        for i, component in enumerate(parts):
            summary, traces = views.exception_titles(answers[2 * i] or [], answers[2 * i + 1] or [])
            shown.append({"name": component, "summary": summary, "traces": traces})
        return {"components": shown}

    async def locate(ids: dict[str, str], instance: str) -> tuple[str, str]:
        physical = await tracker.get("/topologies/physicalplan", ids)
        found = views.instance_log(physical, instance)
        if found is None:
            raise TrackerError(
                f"topology {ids['topology']!r} has no instance {instance!r} in its physical plan",
                404,
            )
        if not found[1]:
            raise TrackerError(f"the physical plan gives no log file for instance {instance!r}")
        return found

    @app.get(f"{one}/instances/{{instance}}/log")
    async def log(
        cluster: str, environ: str, topology: str, instance: str, tail: int = LOG_TAIL_BYTES
    ) -> dict[str, Any]:
        ids = _ids(cluster, environ, topology)
        container, path = await locate(ids, instance)
        # offset -1: the last `length` bytes of the file
        chunk = await tracker.get(
            "/topologies/containerfiledata",
            {
                **ids,
                "container": container,
                "path": path,
                "offset": "-1",
                "length": str(max(1, tail)),
            },
        )
        return {
            "instance": instance,
            "container": container,
            "path": path,
            "size": chunk.get("size"),
            "offset": chunk.get("offset"),
            "data": chunk.get("data") or "",
        }

    @app.get(f"{one}/instances/{{instance}}/log/download")
    async def download(
        cluster: str, environ: str, topology: str, instance: str
    ) -> StreamingResponse:
        ids = _ids(cluster, environ, topology)
        container, path = await locate(ids, instance)
        answer = await tracker.stream(
            "/topologies/containerfiledownload", {**ids, "container": container, "path": path}
        )
        filename = path.rsplit("/", 1)[-1].replace('"', "_") or f"{instance}.log"
        return StreamingResponse(
            answer.aiter_raw(),
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
            background=BackgroundTask(answer.aclose),
        )

    # --- actions -----------------------------------------------------------------------------
    act_route = f"{one}/{{action}}"
    # added last, so outermost: the audit sees the front door's refusals too
    door = front_door or FrontDoor("127.0.0.1", None, server="heron ui")
    app.add_middleware(FrontDoorMiddleware, door=door, error_key="error")
    app.add_middleware(AuditMiddleware, audit=audit, route=act_route)

    @app.post(act_route)
    async def act(
        cluster: str, environ: str, topology: str, action: str, request: Request
    ) -> JSONResponse:
        """Run ``action`` on the topology in a worker thread (the client blocks: a restart
        waits until the containers run again); the environ is the tracker's and not used.

        Answers 200 with the action's message, 403 without the token (or, from the front
        door, from another site's page), 404 for an unknown action, 409 while another action
        runs on the topology or when the client refused (no such topology, no scheduler
        service, ...), 400 for a configuration error (unknown cluster, ...), each with
        ``{"error": message}``."""
        given = request.headers.get(TOKEN_HEADER, "")
        if not secrets.compare_digest(given.encode(), secret.encode()):
            reason = "without the" if not given else "with a wrong"
            return _error(
                f"refused {action!r} of topology {topology!r}: the request came {reason} "
                f"{TOKEN_HEADER} header (only the UI's own pages may act; reload the page)",
                403,
            )
        if action not in ACTIONS:
            return _error(f"unknown action {action!r}; the actions are {', '.join(ACTIONS)}", 404)
        key = (cluster, topology)
        if key in acting:
            return _error(
                f"cannot {action} topology {topology!r} on {cluster!r}: a {acting[key]} of it "
                "is still running; wait for it to finish",
                409,
            )
        acting[key] = action
        try:
            result = await run_in_threadpool(controller.run, action, cluster, topology)
        except ConfigurationError as exc:
            return _error(str(exc), 400)
        except HeronError as exc:
            return _error(str(exc), 409)
        except Exception as exc:
            logger.exception("%s of topology %r on %r failed", action, topology, cluster)
            return _error(
                f"{action} of topology {topology!r} on {cluster!r} failed unexpectedly: "
                f"{type(exc).__name__}: {exc} (see the UI server's log)",
                500,
            )
        finally:
            del acting[key]
        return JSONResponse(
            {
                "action": action,
                "cluster": cluster,
                "topology": topology,
                "message": result.message,
                "changed": result.changed,
                "containers": list(result.containers),
            }
        )

    return app


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _ids(cluster: str, environ: str, topology: str) -> dict[str, str]:
    return {"cluster": cluster, "environ": environ, "topology": topology}


def _page(base: str, token: str, title: str, kind: str, ids: dict[str, str]) -> HTMLResponse:
    """A page shell: the script for ``kind`` fills ``<main>`` from the API; its config holds
    the token its actions send in `TOKEN_HEADER`."""
    csrf = {"header": TOKEN_HEADER, "token": token}
    config = html.escape(
        json.dumps({"base": base, "page": kind, "refresh": REFRESH_MS, "csrf": csrf, **ids})
    )
    crumbs = f'<a href="{html.escape(base)}/">Topologies</a>'
    if "topology" in ids:
        href = html.escape(
            "/".join(quote(ids[k], safe="") for k in ("cluster", "environ", "topology"))
        )
        crumbs += f' / <a href="{html.escape(base)}/topologies/{href}">'
        crumbs += f"{html.escape(ids['topology'])}</a>"
    if "instance" in ids:
        crumbs += f" / {html.escape(ids['instance'])}"
    body = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} · Heron UI</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{html.escape(base)}/static/ui.css">
</head>
<body data-config="{config}">
<header><a class="brand" href="{html.escape(base)}/">Heron</a><nav>{crumbs}</nav>
<span id="updated" class="muted"></span></header>
<div id="error" class="error" role="alert" hidden></div>
<div id="notice" class="notice" role="status" hidden></div>
<main id="main"></main>
<script src="{html.escape(base)}/static/ui.js"></script>
<script src="{html.escape(base)}/static/{kind}.js"></script>
</body>
</html>
"""
    # no-store: the token changes with each server; no framing: no click on Kill from a page
    # that hides the UI in a frame
    headers = {
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
        "Content-Security-Policy": "frame-ancestors 'none'",
    }
    return HTMLResponse(body, headers=headers)
