"""The tracker's REST API: Heron's routes and JSON shapes (the bare results of Heron's FastAPI
tracker), served from the snapshots a `Tracker` keeps.

Bad parameters answer 4xx with ``{"detail": message}``: 404 for an unknown cluster, topology,
component, instance, container or file, 400 for a bad value (interval, time range, path), 422
for a missing or ill-typed parameter. A tmanager or shell that cannot be reached answers 503,
one that does not answer in time 504; the message names the topology.

Routes that ask a tmanager or a shell are plain (sync) functions: FastAPI runs them on its
thread pool, so a slow daemon never stalls the event loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import PurePosixPath
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import PlainTextResponse, StreamingResponse
from google.protobuf.message import Message

from heron_core._front_door import FrontDoor, FrontDoorMiddleware
from heron_core.errors import HeronError
from heron_core.metricsmgr import STMGR_COMPONENT, path_refusal
from heron_core.proto import common_pb2, metrics_pb2, physical_plan_pb2, tmanager_pb2
from heron_core.tracker._topology import TopologySnapshot, exception_summary
from heron_core.tracker._watch import Clients, Tracker

__all__ = ["create_app"]

log = logging.getLogger(__name__)

"""The component name stream managers publish their metrics under."""

_CHUNK = 1 << 20
_I64 = (1 << 63) - 1
"""The largest number a request to a daemon carries (protobuf int64)."""

M = TypeVar("M", bound=Message)

Cluster = Annotated[str, Query(description="the cluster (state manager) name")]
Environ = Annotated[
    str | None, Query(description="the environ (ours is always 'default'); optional")
]
Role = Annotated[str | None, Query(description="the role (the submitting user); optional")]
TopologyName = Annotated[str, Query(description="the topology name")]
Component = Annotated[str, Query(description="a spout or bolt name")]
Instances = Annotated[
    list[str] | None,
    Query(alias="instance", description="instance ids (repeatable); default: every instance"),
]
Container = Annotated[int, Query(description="a container id (1..N)")]
FilePath = Annotated[
    str, Query(description="a file of the container's logs: logs/<name> (nothing else is served)")
]
DirPath = Annotated[
    str, Query(description="logs, or . (the working directory, listing logs alone)")
]


def _not_found(message: str) -> HTTPException:
    return HTTPException(status_code=404, detail=message)


def _bad(message: str) -> HTTPException:
    return HTTPException(status_code=400, detail=message)


def _ok(status: common_pb2.Status) -> bool:
    return status.status in (common_pb2.OK, common_pb2.STATUS_UNSPECIFIED)


def _checked(answer: Message | None, request: Message, expected: type[M], who: str, late: str) -> M:
    """``answer`` if it is an ``expected``; 504 (``late``) when there is none, 502 when it is
    another message. ``who`` names the daemon asked."""
    if answer is None:
        raise HTTPException(504, late)
    if not isinstance(answer, expected):
        raise HTTPException(
            502,
            f"{who} answered a {type(request).__name__} with a {type(answer).__name__}",
        )
    return answer


def create_app(
    tracker: Tracker, *, timeout: float = 3.0, front_door: FrontDoor | None = None
) -> FastAPI:
    """The FastAPI application serving ``tracker`` (its OpenAPI page is at ``/``).

    Args:
        tracker: a started tracker.
        timeout: seconds the tmanager or a shell gets to answer one request (for messages).
        front_door: the ``Host`` names (and ``Origin`` of a request other than GET) it
            answers; others get 400 (403). None: the loopback names with any port.
    """
    app = FastAPI(
        title="Heron tracker",
        summary="The topologies of the configured clusters: plans, metrics, exceptions, logs.",
        docs_url="/",
        redoc_url=None,
    )
    door = front_door or FrontDoor("127.0.0.1", None, server="heron tracker")
    app.add_middleware(FrontDoorMiddleware, door=door, error_key="detail")

    @app.middleware("http")
    async def process_time(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        response.headers["x-process-time"] = f"{time.perf_counter() - started:.6f}"
        return response

    # ----------------------------------------------------------------------------- lookups

    def topology_of(
        cluster: str, topology: str, environ: str | None, role: str | None
    ) -> TopologySnapshot:
        watch = tracker.watches.get(cluster)
        if watch is None:
            known = ", ".join(tracker.clusters) or "none"
            raise _not_found(f"unknown cluster {cluster!r}; known clusters: {known}")
        for snapshot in watch.snapshots():
            if snapshot.name == topology and snapshot.visible:
                break
        else:
            names = [s.name for s in watch.snapshots() if s.visible]
            listed = ", ".join(names) or "none"
            why = (
                f" (its state manager cannot be reached: {watch.problem})" if watch.problem else ""
            )
            raise _not_found(
                f"no topology {topology!r} on cluster {cluster!r}{why}; its topologies: {listed}"
            )
        if environ is not None and environ != snapshot.environ:
            raise _not_found(
                f"topology {topology!r} of cluster {cluster!r} is in environ "
                f"{snapshot.environ!r}, not {environ!r}"
            )
        if role is not None and role != snapshot.role:
            raise _not_found(
                f"topology {topology!r} of cluster {cluster!r} has role {snapshot.role!r}, "
                f"not {role!r}"
            )
        return snapshot

    def check_component(snapshot: TopologySnapshot, component: str) -> None:
        names = [*snapshot.spout_names, *snapshot.bolt_names]
        if component not in names and component != STMGR_COMPONENT:
            raise _not_found(
                f"topology {snapshot.name!r} has no component {component!r}; its components: "
                f"{', '.join(names)}"
            )

    def check_instances(
        snapshot: TopologySnapshot, component: str, instances: list[str] | None
    ) -> list[str]:
        if not instances or component == STMGR_COMPONENT:
            return instances or []
        known = snapshot.instances_of(component)
        for instance in instances:
            if instance not in known:
                raise _not_found(
                    f"component {component!r} of topology {snapshot.name!r} has no instance "
                    f"{instance!r}; its instances: {', '.join(known) or 'none yet'}"
                )
        return instances

    def clients_of(snapshot: TopologySnapshot) -> Clients:
        clients = tracker.watches[snapshot.cluster].clients(snapshot.name)
        if clients is None:
            raise _not_found(f"topology {snapshot.name!r} is gone from {snapshot.cluster!r}")
        return clients

    def ask_tmanager(snapshot: TopologySnapshot, request: Message, expected: type[M]) -> M:
        name = snapshot.name
        if snapshot.tmanager is None:
            raise HTTPException(
                503, f"topology {name!r} has no running tmanager (no location stored)"
            )
        clients = clients_of(snapshot)
        with clients.lock:
            try:
                answer = clients.tmanager.ask(request)
            except HeronError as exc:
                raise HTTPException(503, f"topology {name!r}: {exc}") from exc
            endpoint = clients.tmanager.endpoint
        who = f"the tmanager of topology {name!r}"
        answer = _checked(
            answer,
            request,
            expected,
            who,
            f"{who} ({endpoint or 'no location'}) did not answer a "
            f"{type(request).__name__} within {timeout:g} s",
        )
        status = getattr(answer, "status", None)
        if isinstance(status, common_pb2.Status) and not _ok(status):
            raise _bad(f"{who}: {status.message or 'NOTOK'}")
        return answer

    def ask_shell(
        snapshot: TopologySnapshot, container: int, request: Message, expected: type[M]
    ) -> M:
        name = snapshot.name
        if snapshot.physical_plan is None:
            raise HTTPException(503, f"topology {name!r} has no physical plan yet")
        stmgrs = snapshot.containers()
        if container not in stmgrs:
            known = ", ".join(str(c) for c in sorted(stmgrs))
            raise _not_found(
                f"topology {name!r} has no container {container}; its containers: {known}"
            )
        stmgr = stmgrs[container]
        if not stmgr.shell_port:
            raise HTTPException(
                503, f"container {container} of topology {name!r} names no shell port"
            )
        clients = clients_of(snapshot)
        with clients.lock:
            try:
                answer = clients.shell.ask(container, request)
            except HeronError as exc:
                raise HTTPException(503, f"topology {name!r}: {exc}") from exc
        who = f"the shell of container {container} of topology {name!r}"
        answer = _checked(
            answer,
            request,
            expected,
            who,
            f"{who} (tcp://{stmgr.host_name}:{stmgr.shell_port}) did not answer within "
            f"{timeout:g} s",
        )
        status = getattr(answer, "status", None)
        if isinstance(status, common_pb2.Status) and not _ok(status):
            raise _not_found(status.message or f"the shell of container {container} said NOTOK")
        return answer

    def check_path(path: str, *, listing: bool = False) -> str:
        """``path`` if the shell serves it (`path_refusal`, the shell's own rule), else 400
        naming the path and the rule."""
        refused = path_refusal(path, listing=listing)
        if refused is not None:
            raise _bad(refused)
        return path

    # ----------------------------------------------------------------------------- routes

    @app.get("/health", response_class=PlainTextResponse)
    def health() -> str:
        """``ok`` while the tracker serves."""
        return "ok"

    @app.get("/clusters")
    def clusters() -> list[str]:
        """The names of the clusters whose state managers are watched."""
        return tracker.clusters

    @app.get("/topologies")
    def topologies(
        cluster: Annotated[list[str] | None, Query()] = None,
        environ: Annotated[list[str] | None, Query()] = None,
        role: Role = None,
    ) -> dict[str, dict[str, dict[str, list[str]]]]:
        """``{cluster: {role: {environ: [topology names]}}}``, filtered by the repeatable
        ``cluster`` and ``environ`` and by ``role``."""
        result: dict[str, dict[str, dict[str, list[str]]]] = {}
        for snapshot in tracker.topologies():
            if _excluded(snapshot, cluster, environ, role):
                continue
            result.setdefault(snapshot.cluster, {}).setdefault(snapshot.role, {}).setdefault(
                snapshot.environ, []
            ).append(snapshot.name)
        return result

    @app.get("/topologies/states")
    def states(
        cluster: Annotated[list[str] | None, Query()] = None,
        environ: Annotated[list[str] | None, Query()] = None,
        role: Role = None,
    ) -> dict[str, Any]:
        """``{cluster: {role: {environ: {topology: execution state}}}}``."""
        result: dict[str, Any] = {}
        for snapshot in tracker.topologies():
            if _excluded(snapshot, cluster, environ, role):
                continue
            result.setdefault(snapshot.cluster, {}).setdefault(snapshot.role, {}).setdefault(
                snapshot.environ, {}
            )[snapshot.name] = snapshot.execution_state_doc()
        return result

    @app.get("/machines")
    def machines(
        cluster: Annotated[list[str] | None, Query()] = None,
        environ: Annotated[list[str] | None, Query()] = None,
        topology: Annotated[list[str] | None, Query()] = None,
    ) -> dict[str, Any]:
        """``{cluster: {environ: {topology: [hosts]}}}``: the hosts of the stream managers."""
        result: dict[str, Any] = {}
        for snapshot in tracker.topologies():
            if _excluded(snapshot, cluster, environ, None):
                continue
            if topology and snapshot.name not in topology:
                continue
            hosts = sorted({s.host_name for s in snapshot.containers().values()})
            result.setdefault(snapshot.cluster, {}).setdefault(snapshot.environ, {})[
                snapshot.name
            ] = hosts
        return result

    def document(route: str, render: Callable[[TopologySnapshot], Any], summary: str) -> None:
        def handler(
            cluster: Cluster, topology: TopologyName, environ: Environ = None, role: Role = None
        ) -> Any:
            return render(topology_of(cluster, topology, environ, role))

        handler.__doc__ = summary
        app.get(f"/topologies/{route}", name=route)(handler)

    document("info", TopologySnapshot.info, "Every document of the topology at once.")
    document("logicalplan", TopologySnapshot.logical_plan, "The logical plan.")
    document("physicalplan", TopologySnapshot.physical_plan_doc, "The physical plan.")
    document("packingplan", TopologySnapshot.packing_plan_doc, "The packing plan.")
    document("executionstate", TopologySnapshot.execution_state_doc, "The execution state.")
    document(
        "schedulerlocation", TopologySnapshot.scheduler_location_doc, "The scheduler location."
    )
    document("metadata", TopologySnapshot.metadata, "The topology's metadata.")
    document("runtimestate", TopologySnapshot.runtime_state, "Which nodes are stored.")
    document(
        "config",
        lambda s: s.physical_plan_doc()["config"],
        "The topology config (pickled values described, never unpickled).",
    )

    @app.get("/topologies/metrics")
    def metrics(
        cluster: Cluster,
        topology: TopologyName,
        component: Component,
        metricname: Annotated[list[str], Query(description="metric names (repeatable)")],
        instance: Instances = None,
        interval: Annotated[int, Query(description="seconds back from now; -1: all time")] = -1,
        environ: Environ = None,
        role: Role = None,
    ) -> dict[str, Any]:
        """``{metrics: {metricname: {instance: value}}, interval, component}``: each metric
        aggregated over the last ``interval`` seconds (-1: since the topology started)."""
        snapshot = topology_of(cluster, topology, environ, role)
        check_component(snapshot, component)
        instances = check_instances(snapshot, component, instance)
        if interval != -1 and not 1 <= interval <= _I64:
            raise _bad(
                f"interval must be -1 (all time) or a positive number of seconds, got {interval}"
            )
        request = tmanager_pb2.MetricRequest(
            component_name=component, instance_id=instances, metric=metricname, interval=interval
        )
        answer = ask_tmanager(snapshot, request, tmanager_pb2.MetricResponse)
        values: dict[str, dict[str, str]] = {}
        for task in answer.metric:
            for metric in task.metric:
                values.setdefault(metric.name, {})[task.instance_id] = metric.value
        return {"metrics": values, "interval": answer.interval, "component": component}

    @app.get("/topologies/metricnames")
    def metricnames(
        cluster: Cluster,
        topology: TopologyName,
        component: Component,
        instance: Instances = None,
        environ: Environ = None,
        role: Role = None,
    ) -> dict[str, Any]:
        """``{component, metricnames: [sorted names]}``: every metric name the tmanager holds
        for the component's instances (all of them, or those named by ``instance``). An
        extension of ours, not in Heron: `/topologies/metrics` needs the names, and only the
        tmanager knows those of user metrics."""
        snapshot = topology_of(cluster, topology, environ, role)
        check_component(snapshot, component)
        instances = check_instances(snapshot, component, instance)
        # an empty `metric` list asks for every metric; -1: all time, so none is left out
        request = tmanager_pb2.MetricRequest(
            component_name=component, instance_id=instances, interval=-1
        )
        answer = ask_tmanager(snapshot, request, tmanager_pb2.MetricResponse)
        names = {metric.name for task in answer.metric for metric in task.metric}
        return {"component": component, "metricnames": sorted(names)}

    @app.get("/topologies/metricstimeline")
    def metrics_timeline(
        cluster: Cluster,
        topology: TopologyName,
        component: Component,
        metricname: Annotated[list[str], Query(description="metric names (repeatable)")],
        starttime: Annotated[int, Query(description="unix seconds")],
        endtime: Annotated[int, Query(description="unix seconds")],
        instance: Instances = None,
        environ: Environ = None,
        role: Role = None,
    ) -> dict[str, Any]:
        """``{component, starttime, endtime, timeline: {metricname: {instance: {minute start:
        value}}}}``: the minutely values between ``starttime`` and ``endtime``."""
        snapshot = topology_of(cluster, topology, environ, role)
        check_component(snapshot, component)
        instances = check_instances(snapshot, component, instance)
        if starttime < 0 or endtime < starttime or endtime > _I64:
            raise _bad(
                f"starttime ({starttime}) must be at least 0 and at most endtime ({endtime}), "
                f"which is at most {_I64}"
            )
        request = tmanager_pb2.MetricRequest(
            component_name=component,
            instance_id=instances,
            metric=metricname,
            explicit_interval=tmanager_pb2.MetricInterval(start=starttime, end=endtime),
            minutely=True,
        )
        answer = ask_tmanager(snapshot, request, tmanager_pb2.MetricResponse)
        timeline: dict[str, dict[str, dict[str, str]]] = {}
        for task in answer.metric:
            for metric in task.metric:
                points = timeline.setdefault(metric.name, {}).setdefault(task.instance_id, {})
                for point in metric.interval_values:
                    points[str(point.interval.start)] = point.value
        return {
            "component": component,
            "starttime": starttime,
            "endtime": endtime,
            "timeline": timeline,
        }

    def exception_log(
        cluster: str,
        topology: str,
        component: str,
        instance: list[str] | None,
        environ: str | None,
        role: str | None,
    ) -> list[dict[str, Any]]:
        snapshot = topology_of(cluster, topology, environ, role)
        check_component(snapshot, component)
        instances = check_instances(snapshot, component, instance)
        request = tmanager_pb2.ExceptionLogRequest(component_name=component, instances=instances)
        answer = ask_tmanager(snapshot, request, tmanager_pb2.ExceptionLogResponse)
        return [
            {
                "hostname": e.hostname,
                "instance_id": e.instance_id,
                "stack_trace": e.stacktrace,
                "lasttime": e.lasttime,
                "firsttime": e.firsttime,
                "count": e.count,
                "logging": e.logging,
            }
            for e in answer.exceptions
        ]

    @app.get("/topologies/exceptions")
    def exceptions(
        cluster: Cluster,
        topology: TopologyName,
        component: Component,
        instance: Instances = None,
        environ: Environ = None,
        role: Role = None,
    ) -> list[dict[str, Any]]:
        """``[{hostname, instance_id, stack_trace, lasttime, firsttime, count, logging}]``:
        each distinct exception of each instance (times in ISO 8601, UTC)."""
        return exception_log(cluster, topology, component, instance, environ, role)

    @app.get("/topologies/exceptionsummary")
    def exceptionsummary(
        cluster: Cluster,
        topology: TopologyName,
        component: Component,
        instance: Instances = None,
        environ: Environ = None,
        role: Role = None,
    ) -> list[dict[str, Any]]:
        """``[{class_name, lasttime, firsttime, count}]``: the exceptions merged on the first
        two lines of their stack trace."""
        return exception_summary(
            exception_log(cluster, topology, component, instance, environ, role)
        )

    @app.get("/topologies/pid")
    def pid(
        cluster: Cluster,
        topology: TopologyName,
        instance: Annotated[
            str, Query(description="an instance id, or a daemon: stmgr-K, metricsmgr-K")
        ],
        environ: Environ = None,
        role: Role = None,
    ) -> dict[str, Any]:
        """``{command, stdout, stderr, pid}``: the pid of a process (``stdout`` holds it as
        text, as Heron's shell answers)."""
        snapshot = topology_of(cluster, topology, environ, role)
        container = snapshot.container_of(instance)
        if container is None:
            known = sorted(
                i.instance_id
                for i in (snapshot.physical_plan or physical_plan_pb2.PhysicalPlan()).instances
            )
            raise _not_found(
                f"topology {topology!r} has no instance {instance!r}; its instances: "
                f"{', '.join(known) or 'none yet'} (and the stmgr-K, metricsmgr-K daemons)"
            )
        request = metrics_pb2.ShellPidRequest(instance_id=instance)
        answer = ask_shell(snapshot, container, request, metrics_pb2.ShellPidResponse)
        return {
            "command": f"pid of {instance} in container {container}",
            "stdout": str(answer.pid),
            "stderr": None,
            "pid": answer.pid,
        }

    @app.get("/topologies/containerfiledata")
    def containerfiledata(
        cluster: Cluster,
        topology: TopologyName,
        container: Container,
        path: FilePath,
        offset: Annotated[int, Query(description="byte offset; -1: the last `length` bytes")] = 0,
        length: Annotated[int, Query(description="bytes to read (at most 1 MiB)")] = _CHUNK,
        environ: Environ = None,
        role: Role = None,
    ) -> dict[str, Any]:
        """``{data, offset, length, size}``: a chunk of a file of the container's logs
        (``data`` decoded as UTF-8, invalid bytes replaced)."""
        snapshot = topology_of(cluster, topology, environ, role)
        relative = check_path(path)
        if not -1 <= offset <= _I64:
            raise _bad(f"offset must be -1 (the end of the file) or from 0 to {_I64}, got {offset}")
        if not 1 <= length <= _I64:
            raise _bad(f"length must be from 1 to {_I64}, got {length}")
        request = metrics_pb2.ShellFileRequest(path=relative, offset=offset, length=length)
        answer = ask_shell(snapshot, container, request, metrics_pb2.ShellFileResponse)
        return {
            "data": answer.data.decode("utf-8", errors="replace"),
            "offset": answer.offset,
            "length": answer.length,
            "size": answer.size,
        }

    @app.get("/topologies/containerfilestats")
    def containerfilestats(
        cluster: Cluster,
        topology: TopologyName,
        container: Container,
        path: DirPath = ".",
        environ: Environ = None,
        role: Role = None,
    ) -> dict[str, Any]:
        """``{name: {is_dir, size, mtime, path, formatted_stat}}``: the log files of the
        container (``path`` logs), or the working directory's served entry (``path`` .:
        logs alone)."""
        snapshot = topology_of(cluster, topology, environ, role)
        relative = check_path(path, listing=True)
        request = metrics_pb2.ShellListRequest(path=relative)
        answer = ask_shell(snapshot, container, request, metrics_pb2.ShellListResponse)
        listing = {}
        for entry in answer.files:
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(entry.mtime))
            listing[entry.name] = {
                "is_dir": entry.is_dir,
                "size": entry.size,
                "mtime": entry.mtime,
                "path": str(PurePosixPath(relative or ".", entry.name)),
                "formatted_stat": (
                    f"{'d' if entry.is_dir else '-'} {entry.size:>12} {when} {entry.name}"
                ),
            }
        return listing

    @app.get("/topologies/containerfiledownload")
    def containerfiledownload(
        cluster: Cluster,
        topology: TopologyName,
        container: Container,
        path: FilePath,
        environ: Environ = None,
        role: Role = None,
    ) -> StreamingResponse:
        """The whole log file ``path``, streamed as an attachment."""
        snapshot = topology_of(cluster, topology, environ, role)
        relative = check_path(path)
        first = ask_shell(
            snapshot,
            container,
            metrics_pb2.ShellFileRequest(path=relative, offset=0, length=_CHUNK),
            metrics_pb2.ShellFileResponse,
        )

        def chunks() -> Iterator[bytes]:
            answer = first
            while True:
                yield answer.data
                position = answer.offset + answer.length
                if answer.length == 0 or position >= answer.size:
                    return
                request = metrics_pb2.ShellFileRequest(
                    path=relative, offset=position, length=_CHUNK
                )
                try:
                    answer = ask_shell(snapshot, container, request, metrics_pb2.ShellFileResponse)
                except HTTPException as exc:  # the status is sent: cut the download short
                    log.warning("download of %r cut short: %s", relative, exc.detail)
                    return

        filename = PurePosixPath(relative).name.replace('"', "_")
        return StreamingResponse(
            chunks(),
            media_type="application/octet-stream",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    return app


def _excluded(
    snapshot: TopologySnapshot,
    clusters: list[str] | None,
    environs: list[str] | None,
    role: str | None,
) -> bool:
    return bool(
        (clusters and snapshot.cluster not in clusters)
        or (environs and snapshot.environ not in environs)
        or (role is not None and snapshot.role != role)
    )
