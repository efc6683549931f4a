"""Pure functions turning the tracker's JSON into what the UI's pages show.

They take the tracker's result shapes (``heron-internals.md`` section 10) and return plain
JSON-ready dicts and lists; nothing here does I/O, so every rule of the pages (how a status is
named, how a DAG is layered, which metric names count as "executed") is tested on its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from heron_core.metricsmgr import STMGR_COMPONENT

__all__ = [
    "BACK_PRESSURE_METRIC",
    "COUNTERS",
    "INTERVALS",
    "STMGR_COMPONENT",
    "USER_METRIC_WINDOW_S",
    "average_series",
    "component_metric_names",
    "components",
    "container_of",
    "counter_value",
    "dag_layout",
    "exception_titles",
    "instance_log",
    "sum_series",
    "topology_rows",
    "user_metric_names",
    "user_metric_rows",
]

"""The component name the stream managers publish their metrics under."""

BACK_PRESSURE_METRIC = "__server/__time_spent_back_pressure_initiated"
"""Milliseconds a stream manager spent in back pressure it started, per interval."""

INTERVALS: tuple[tuple[str, int], ...] = (
    ("10 min", 600),
    ("1 h", 3600),
    ("3 h", 10800),
    ("all time", -1),
)
"""The windows of the per-component counters: label and the tracker's ``interval`` (s)."""

COUNTERS = ("emitted", "executed", "acked", "failed", "latency")
"""The per-component counters, in the order the page shows them."""

USER_METRIC_WINDOW_S = 600
"""The recent window of the user metrics table (seconds; the tracker's ``interval``)."""

_STATUS = {"running": "running", "paused": "paused", "killed": "killed"}


def topology_rows(states: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per topology of ``/topologies/states``, sorted by cluster, environ, name.

    The status comes from the execution state's ``status`` (the physical plan's state as the
    tracker reports it): ``running``, ``paused``, ``killed``, else ``unknown``.

    >>> rows = topology_rows({"local": {"alice": {"default": {"wc": {
    ...     "status": "Running", "submission_user": "alice",
    ...     "submission_time": 1700000000}}}}})
    >>> rows[0]["status"], rows[0]["submitted_by"], rows[0]["submitted_at"]
    ('running', 'alice', '2023-11-14 22:13:20 UTC')
    """
    rows: list[dict[str, Any]] = []
    for cluster, roles in _mapping(states).items():
        for role, environs in _mapping(roles).items():
            for environ, topologies in _mapping(environs).items():
                for name, state in _mapping(topologies).items():
                    state = _mapping(state)
                    status = str(state.get("status") or "").lower()
                    rows.append(
                        {
                            "cluster": cluster,
                            "environ": environ,
                            "role": role,
                            "name": name,
                            "status": _STATUS.get(status, "unknown"),
                            "submitted_by": state.get("submission_user") or role or "",
                            "submitted_at": _when(state.get("submission_time")),
                            "release_version": state.get("release_version") or "",
                        }
                    )
    rows.sort(key=lambda r: (r["cluster"], r["environ"], r["name"]))
    return rows


def _when(value: object) -> str:
    """Epoch seconds (or an ISO string) as ``YYYY-mm-dd HH:MM:SS UTC``; '' when absent."""
    if value in (None, ""):
        return ""
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    if seconds > 1e11:  # milliseconds
        seconds /= 1000.0
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def components(logical_plan: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(name, "spout"|"bolt")`` of every component of a ``/topologies/logicalplan`` result,
    spouts first, each kind sorted by name.

    >>> components({"spouts": {"s": {}}, "bolts": {"b2": {}, "b1": {}}})
    [('s', 'spout'), ('b1', 'bolt'), ('b2', 'bolt')]
    """
    return [(name, "spout") for name in sorted(_mapping(logical_plan.get("spouts")))] + [
        (name, "bolt") for name in sorted(_mapping(logical_plan.get("bolts")))
    ]


def dag_layout(logical_plan: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The logical plan as a DAG layered left to right: nodes with ``layer`` and ``row``, edges
    for the streams.

    A node's layer is the length of the longest path to it from a node without inputs; an edge
    that closes a cycle (Storm allows them) is kept as an edge but ignored for layering.

    >>> plan = {"spouts": {"words": {"outputs": [{"stream_name": "default"}]}},
    ...         "bolts": {"count": {"inputs": [{"component_name": "split",
    ...                                          "stream_name": "default", "grouping": "FIELDS"}]},
    ...                   "split": {"inputs": [{"component_name": "words",
    ...                                          "stream_name": "default"}]}}}
    >>> layout = dag_layout(plan)
    >>> [(n["name"], n["layer"], n["row"]) for n in layout["nodes"]]
    [('words', 0, 0), ('split', 1, 0), ('count', 2, 0)]
    >>> [(e["source"], e["target"], e["grouping"]) for e in layout["edges"]]
    [('split', 'count', 'FIELDS'), ('words', 'split', '')]
    """
    kinds = dict(components(logical_plan))
    edges: list[dict[str, Any]] = []
    parents: dict[str, list[str]] = {name: [] for name in kinds}
    for name, bolt in sorted(_mapping(logical_plan.get("bolts")).items()):
        for stream in _mapping(bolt).get("inputs") or []:
            source = str(_mapping(stream).get("component_name", ""))
            if source not in kinds:
                continue
            edges.append(
                {
                    "source": source,
                    "target": name,
                    "stream": str(stream.get("stream_name", "")),
                    "grouping": str(stream.get("grouping", "")),
                }
            )
            parents[name].append(source)
    layer: dict[str, int] = {}
    visiting: set[str] = set()

    def depth(name: str) -> int:
        if name in layer:
            return layer[name]
        visiting.add(name)
        above = [depth(p) + 1 for p in parents[name] if p not in visiting]
        visiting.discard(name)
        layer[name] = max(above, default=0)
        return layer[name]

    rows: dict[int, int] = {}
    nodes = []
    for name, kind in components(logical_plan):
        at = depth(name)
        nodes.append({"name": name, "kind": kind, "layer": at, "row": rows.get(at, 0)})
        rows[at] = rows.get(at, 0) + 1
    nodes.sort(key=lambda n: (n["layer"], n["row"]))
    return {"nodes": nodes, "edges": edges}


def component_metric_names(logical_plan: Mapping[str, Any], component: str) -> dict[str, list[str]]:
    """The metric names whose sum makes each counter of ``component``, from the streams of the
    logical plan (Heron's names: ``__emit-count/<stream>``, ``__execute-count/<source>/<stream>``,
    ...). Latency is ``__complete-latency/<stream>`` for a spout and
    ``__execute-latency/<source>/<stream>`` for a bolt (the ``-ms`` spellings are asked too).

    >>> plan = {"spouts": {"s": {"outputs": [{"stream_name": "default"}]}},
    ...         "bolts": {"b": {"outputs": [], "inputs": [
    ...             {"component_name": "s", "stream_name": "default"}]}}}
    >>> names = component_metric_names(plan, "b")
    >>> names["executed"], names["emitted"]
    (['__execute-count/s/default'], [])
    >>> component_metric_names(plan, "s")["acked"]
    ['__ack-count/default']
    """
    spouts = _mapping(logical_plan.get("spouts"))
    spec = _mapping(spouts.get(component) or _mapping(logical_plan.get("bolts")).get(component))
    outputs = [str(_mapping(o).get("stream_name", "")) for o in spec.get("outputs") or []]
    names: dict[str, list[str]] = {kind: [] for kind in COUNTERS}
    names["emitted"] = [f"__emit-count/{s}" for s in outputs]
    if component in spouts:
        names["acked"] = [f"__ack-count/{s}" for s in outputs]
        names["failed"] = [f"__fail-count/{s}" for s in outputs]
        names["latency"] = [f"__complete-latency{m}/{s}" for s in outputs for m in ("", "-ms")]
        return names
    inputs = [
        f"{_mapping(i).get('component_name', '')}/{_mapping(i).get('stream_name', '')}"
        for i in spec.get("inputs") or []
    ]
    names["executed"] = [f"__execute-count/{key}" for key in inputs]
    names["acked"] = [f"__ack-count/{key}" for key in inputs]
    names["failed"] = [f"__fail-count/{key}" for key in inputs]
    names["latency"] = [f"__execute-latency{m}/{key}" for key in inputs for m in ("", "-ms")]
    return names


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def counter_value(
    metrics: Mapping[str, Any], names: Iterable[str], *, average: bool = False
) -> float | None:
    """The sum (or, with ``average``, the mean) over instances and ``names`` of a
    ``/topologies/metrics`` result's ``metrics`` map; None when none of them has a value.

    >>> m = {"__emit-count/a": {"i1": "3", "i2": 4}, "__emit-count/b": {"i1": "1.5"}}
    >>> counter_value(m, ["__emit-count/a", "__emit-count/b"])
    8.5
    >>> counter_value(m, ["__emit-count/a"], average=True), counter_value(m, ["nope"])
    (3.5, None)
    """
    values = [
        number
        for name in names
        for value in _mapping(metrics.get(name)).values()
        if (number := _number(value)) is not None
    ]
    if not values:
        return None
    return sum(values) / len(values) if average else sum(values)


def _points(timeline: Mapping[str, Any], names: Iterable[str]) -> dict[int, list[float]]:
    by_time: dict[int, list[float]] = {}
    for name in names:
        for series in _mapping(timeline.get(name)).values():
            for ts, value in _mapping(series).items():
                number, when = _number(value), _number(ts)
                if number is not None and when is not None:
                    by_time.setdefault(int(when), []).append(number)
    return by_time


def sum_series(timeline: Mapping[str, Any], names: Iterable[str]) -> list[list[float]]:
    """``[[ts, value], ...]`` sorted by time: at each minute the sum over ``names`` and
    instances of a ``/topologies/metricstimeline`` result's ``timeline`` map.

    >>> sum_series({"m": {"i1": {"60": 1, "0": "2"}, "i2": {"60": 3}}}, ["m", "absent"])
    [[0, 2.0], [60, 4.0]]
    """
    return [[ts, sum(v)] for ts, v in sorted(_points(timeline, names).items())]


def average_series(timeline: Mapping[str, Any], names: Iterable[str]) -> list[list[float]]:
    """Like `sum_series` with the mean instead of the sum (for latencies).

    >>> average_series({"m": {"i1": {"60": 1}, "i2": {"60": 3}}}, ["m"])
    [[60, 2.0]]
    """
    return [[ts, sum(v) / len(v)] for ts, v in sorted(_points(timeline, names).items())]


def container_of(stmgr_id: str) -> str:
    """The container index of a stream manager id (``stmgr-3`` -> ``3``).

    >>> container_of("stmgr-3")
    '3'
    """
    return stmgr_id.rsplit("-", 1)[-1]


def instance_log(physical_plan: Mapping[str, Any], instance: str) -> tuple[str, str] | None:
    """``(container, path)`` of ``instance``'s log in a ``/topologies/physicalplan`` result; None
    when the plan has no such instance.

    The instance's ``logfile`` is either the tracker's ``containerfiledata`` link (its ``path``
    and ``container`` parameters are used) or a path in the container's working directory.

    >>> plan = {"instances": {
    ...     "container_1_b_2": {"stmgr_id": "stmgr-1", "logfile": "logs/container_1_b_2.log"},
    ...     "container_2_c_3": {"stmgr_id": "stmgr-2", "container": 2, "logfile":
    ...         "/topologies/containerfiledata?cluster=local&container=2"
    ...         "&path=logs%2Fcontainer_2_c_3.log&offset=-1&length=1048576"}}}
    >>> instance_log(plan, "container_1_b_2"), instance_log(plan, "x")
    (('1', 'logs/container_1_b_2.log'), None)
    >>> instance_log(plan, "container_2_c_3")
    ('2', 'logs/container_2_c_3.log')
    """
    spec = _mapping(_mapping(physical_plan.get("instances")).get(instance))
    if not spec:
        return None
    container = str(spec.get("container") or container_of(str(spec.get("stmgr_id", ""))))
    logfile = str(spec.get("logfile") or "")
    if "?" in logfile:
        query = parse_qs(urlsplit(logfile).query)
        container = query.get("container", [container])[0]
        logfile = query.get("path", [""])[0]
    return container, logfile


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def exception_titles(
    summary: Iterable[Mapping[str, Any]], traces: Iterable[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``summary`` and ``traces`` of ``/topologies/exceptionsummary`` and ``/exceptions``, each
    entry with a ``title``: the last line of its stack trace (for a Python trace, the exception
    and its message). A summary entry takes the title of the first trace it summarises (whose
    text starts with its ``class_name``), else its ``class_name``.

    >>> trace = "Traceback (most recent call last):\\n  File x\\nValueError: boom\\n"
    >>> summary, traces = exception_titles(
    ...     [{"class_name": "Traceback (most recent call last): File x", "count": 2}],
    ...     [{"stack_trace": trace, "count": 2}])
    >>> summary[0]["title"], traces[0]["title"]
    ('ValueError: boom', 'ValueError: boom')
    """
    full = [{**trace, "title": _last_line(str(trace.get("stack_trace", "")))} for trace in traces]
    titled = []
    for entry in summary:
        head = " ".join(str(entry.get("class_name", "")).split())
        title = next(
            (
                trace["title"]
                for trace in full
                if head and " ".join(str(trace.get("stack_trace", "")).split()).startswith(head)
            ),
            head,
        )
        titled.append({**entry, "title": title or head})
    return titled, full


def user_metric_names(names: Iterable[str]) -> list[str]:
    """The user metrics among a ``/topologies/metricnames`` result's names: those not starting
    with ``__`` (the runtime's own), sorted.

    >>> user_metric_names(["__emit-count/default", "words", "hits/b", "hits/a"])
    ['hits/a', 'hits/b', 'words']
    """
    return sorted(name for name in names if not str(name).startswith("__"))


def user_metric_rows(
    names: Iterable[str], recent: Mapping[str, Any], all_time: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One row ``{metric, instance, recent, all_time}`` per metric of ``names`` and instance,
    sorted by metric then instance, from the ``metrics`` maps of two ``/topologies/metrics``
    results (the recent window and all time); a value the tracker does not give is None.

    Values stay per instance: whether a user metric adds up over instances (a count) or not (a
    mean, a gauge) is not known here.

    >>> rows = user_metric_rows(["words"], {"words": {"i2": "4"}},
    ...                         {"words": {"i1": "10", "i2": "6.5"}})
    >>> [(r["metric"], r["instance"], r["recent"], r["all_time"]) for r in rows]
    [('words', 'i1', None, 10.0), ('words', 'i2', 4.0, 6.5)]
    """
    rows = []
    for name in sorted(set(names)):
        now, ever = _mapping(recent.get(name)), _mapping(all_time.get(name))
        for instance in sorted({*now, *ever}):
            rows.append(
                {
                    "metric": name,
                    "instance": instance,
                    "recent": _number(now.get(instance)),
                    "all_time": _number(ever.get(instance)),
                }
            )
    return rows
