"""What the tracker knows of one topology (a frozen snapshot of its state-manager nodes) and
the JSON documents its routes answer, built from it by pure functions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from heron_core.proto import (
    execution_state_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    scheduler_pb2,
    tmanager_pb2,
    topology_pb2,
)

__all__ = [
    "DEFAULT_ENVIRON",
    "TopologySnapshot",
    "container_file_url",
    "exception_summary",
    "stages",
]

DEFAULT_ENVIRON = "default"
"""The environ of a topology whose execution state names none (every topology of ours: our
clusters have no environs), as Heron answers for a local cluster."""

_STATUS = {
    topology_pb2.RUNNING: "Running",
    topology_pb2.PAUSED: "Paused",
    topology_pb2.KILLED: "Killed",
}

LOG_TAIL = 1 << 20
"""Bytes of a log a ``logfile`` link asks for (the end of the file; the shell's largest chunk)."""


def container_file_url(
    route: str, cluster: str, environ: str, topology: str, container: int, path: str, **extra: int
) -> str:
    """A tracker URL (relative to the tracker's root) of ``route`` for ``path`` in
    ``container``.

    >>> container_file_url("containerfiledata", "local", "default", "wc", 1, "logs/a.log",
    ...                    offset=-1, length=10)
    '/topologies/containerfiledata?cluster=local&environ=default&topology=wc&container=1&\
path=logs%2Fa.log&offset=-1&length=10'
    """
    query = {
        "cluster": cluster,
        "environ": environ,
        "topology": topology,
        "container": container,
        "path": path,
        **extra,
    }
    return f"/topologies/{route}?{urlencode(query)}"


def _config(message: topology_pb2.Config, *, with_objects: bool) -> dict[str, Any]:
    """A config map: JSON values decoded; pickled ones (never unpickled here) described, or
    left out unless ``with_objects``."""
    out: dict[str, Any] = {}
    for kv in message.kvs:
        if kv.WhichOneof("value") == "pickled_value":
            if with_objects:
                out[kv.key] = f"<a pickled Python object, {len(kv.pickled_value)} bytes>"
            continue
        try:
            out[kv.key] = json.loads(kv.json_value) if kv.json_value else None
        except ValueError:
            out[kv.key] = kv.json_value
    return out


def stages(edges: dict[str, list[str]]) -> int:
    """The number of edges on the longest path of the component graph ``edges`` (component ->
    the components it feeds); a cycle counts each of its edges once.

    >>> stages({"spout": ["split"], "split": ["count"], "count": []})
    2
    >>> stages({"a": ["b"], "b": ["a"]})
    1
    """
    longest: dict[str, int] = {}

    def walk(node: str, seen: frozenset[str]) -> int:
        if node in longest:
            return longest[node]
        best = 0
        for child in edges.get(node, []):
            if child not in seen:
                best = max(best, 1 + walk(child, seen | {child}))
        longest[node] = best
        return best

    return max((walk(node, frozenset({node})) for node in edges), default=0)


def exception_summary(exceptions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Exceptions merged on the first two lines of their stack trace, as Heron summarizes them:
    ``[{class_name, lasttime, firsttime, count}]`` (``class_name`` holds those two lines),
    in order of first appearance.

    >>> summary = exception_summary([
    ...     {"stack_trace": "ValueError: x\\n  at a\\n  at b", "firsttime": "2024-01-02T00:00:00Z",
    ...      "lasttime": "2024-01-03T00:00:00Z", "count": 2},
    ...     {"stack_trace": "ValueError: x\\n  at a\\n  at c", "firsttime": "2024-01-01T00:00:00Z",
    ...      "lasttime": "2024-01-02T00:00:00Z", "count": 1},
    ... ])
    >>> [(s["class_name"], s["firsttime"][:10], s["lasttime"][:10], s["count"]) for s in summary]
    [('ValueError: x\\n  at a', '2024-01-01', '2024-01-03', 3)]
    """
    merged: dict[str, dict[str, Any]] = {}
    for entry in exceptions:
        key = "\n".join(str(entry["stack_trace"]).splitlines()[:2])
        found = merged.get(key)
        if found is None:
            merged[key] = {
                "class_name": key,
                "lasttime": entry["lasttime"],
                "firsttime": entry["firsttime"],
                "count": int(entry["count"]),
            }
            continue
        found["count"] += int(entry["count"])
        found["firsttime"] = min(found["firsttime"], entry["firsttime"])
        found["lasttime"] = max(found["lasttime"], entry["lasttime"])
    return list(merged.values())


@dataclass(frozen=True)
class TopologySnapshot:
    """The state-manager nodes of one topology at one moment (None: the node is absent).

    Attributes:
        cluster: the cluster (state manager) it was read from.
        name: the topology's name.
    """

    cluster: str
    name: str
    topology: topology_pb2.Topology | None = None
    packing_plan: packing_plan_pb2.PackingPlan | None = None
    physical_plan: physical_plan_pb2.PhysicalPlan | None = None
    execution_state: execution_state_pb2.ExecutionState | None = None
    tmanager: tmanager_pb2.TManagerLocation | None = None
    scheduler: scheduler_pb2.SchedulerLocation | None = None

    # ----------------------------------------------------------------------------- identity

    @property
    def visible(self) -> bool:
        """Whether the tracker lists it: its logical plan and execution state are stored, and
        the execution state names this cluster (clusters sharing a ZooKeeper root each list
        only their own topologies)."""
        return (
            self.topology is not None
            and self.execution_state is not None
            and self.execution_state.cluster in ("", self.cluster)
        )

    @property
    def topology_id(self) -> str:
        """The topology's id ("" before its logical plan is read)."""
        return self.topology.id if self.topology is not None else ""

    @property
    def environ(self) -> str:
        """The environ its execution state names, else `DEFAULT_ENVIRON`."""
        state = self.execution_state
        return (state.environ if state is not None else "") or DEFAULT_ENVIRON

    @property
    def role(self) -> str:
        """The role its execution state names, else the submitting user."""
        state = self.execution_state
        return (state.role or state.submission_user) if state is not None else ""

    @property
    def spout_names(self) -> list[str]:
        """The names of its spouts, in logical-plan order."""
        return [s.comp.name for s in self.topology.spouts] if self.topology else []

    @property
    def bolt_names(self) -> list[str]:
        """The names of its bolts, in logical-plan order."""
        return [b.comp.name for b in self.topology.bolts] if self.topology else []

    def instances_of(self, component: str) -> list[str]:
        """The instance ids of ``component`` in the physical plan ([] before there is one)."""
        plan = self.physical_plan
        if plan is None:
            return []
        return [i.instance_id for i in plan.instances if i.info.component_name == component]

    def containers(self) -> dict[int, physical_plan_pb2.StMgr]:
        """The containers of the physical plan ({} before there is one), by id."""
        plan = self.physical_plan
        return {s.container_id: s for s in plan.stmgrs} if plan is not None else {}

    def container_of(self, process: str) -> int | None:
        """The container running ``process``: an instance id of the physical plan, or a daemon
        of a container (``stmgr-K``, ``metricsmgr-K``); None when there is none."""
        plan = self.physical_plan
        if plan is None:
            return None
        stmgr_ids = {s.id: s.container_id for s in plan.stmgrs}
        for instance in plan.instances:
            if instance.instance_id == process:
                return stmgr_ids.get(instance.stmgr_id)
        kind, _, number = process.rpartition("-")
        if kind in ("stmgr", "metricsmgr") and number.isdigit():
            container = int(number)
            return container if container in self.containers() else None
        return None

    # ----------------------------------------------------------------------------- documents

    def _log_url(self, container: int, process: str) -> str:
        return container_file_url(
            "containerfiledata",
            self.cluster,
            self.environ,
            self.name,
            container,
            f"logs/{process}.log",
            offset=-1,
            length=LOG_TAIL,
        )

    def metadata(self) -> dict[str, Any]:
        """``{cluster, environ, role, jobname, submission_time, submission_user,
        release_username, release_tag, release_version, extra_links}``."""
        state = self.execution_state or execution_state_pb2.ExecutionState()
        return {
            "cluster": self.cluster,
            "environ": self.environ,
            "role": self.role,
            "jobname": self.name,
            "submission_time": state.submission_time,
            "submission_user": state.submission_user,
            "release_username": state.submission_user,
            "release_tag": "",
            "release_version": state.release_version,
            "extra_links": [],
        }

    def _presence(self) -> dict[str, bool]:
        return {
            "has_physical_plan": self.physical_plan is not None,
            "has_packing_plan": self.packing_plan is not None,
            "has_tmanager_location": self.tmanager is not None,
            "has_scheduler_location": self.scheduler is not None,
        }

    @property
    def status(self) -> str:
        """``Running``, ``Paused`` or ``Killed`` as the physical plan says, else ``Unknown``."""
        plan = self.physical_plan
        return _STATUS.get(plan.topology.state, "Unknown") if plan is not None else "Unknown"

    def execution_state_doc(self) -> dict[str, Any]:
        """The metadata plus ``has_*`` flags and ``status``."""
        return {**self.metadata(), **self._presence(), "status": self.status}

    def runtime_state(self) -> dict[str, Any]:
        """``{has_*, stmgrs: {}}`` (registration is not tracked)."""
        return {**self._presence(), "stmgrs": {}}

    def logical_plan(self) -> dict[str, Any]:
        """``{spouts: {name: {config, spout_type, spout_source, version, outputs,
        extra_links}}, bolts: {name: {config, outputs, inputs, inputComponents}}, stages}``."""
        topology = self.topology or topology_pb2.Topology()
        spouts = {}
        for spout in topology.spouts:
            config = _config(spout.comp.config, with_objects=False)
            spouts[spout.comp.name] = {
                "config": config,
                "spout_type": str(config.get("spout.type", "default")),
                "spout_source": str(config.get("spout.source", "NA")),
                "version": str(config.get("spout.version", "NA")),
                "outputs": [{"stream_name": o.stream.id} for o in spout.outputs],
                "extra_links": [],
                "parallelism": spout.comp.parallelism,
            }
        bolts = {}
        edges: dict[str, list[str]] = {name: [] for name in spouts}
        for bolt in topology.bolts:
            inputs = [
                {
                    "stream_name": i.stream.id,
                    "component_name": i.stream.component_name,
                    "grouping": topology_pb2.Grouping.Name(i.gtype),
                }
                for i in bolt.inputs
            ]
            bolts[bolt.comp.name] = {
                "config": _config(bolt.comp.config, with_objects=False),
                "outputs": [{"stream_name": o.stream.id} for o in bolt.outputs],
                "inputs": inputs,
                "inputComponents": [i.stream.component_name for i in bolt.inputs],
                "parallelism": bolt.comp.parallelism,
            }
            edges.setdefault(bolt.comp.name, [])
            for i in bolt.inputs:
                edges.setdefault(i.stream.component_name, []).append(bolt.comp.name)
        return {"spouts": spouts, "bolts": bolts, "stages": stages(edges)}

    def physical_plan_doc(self) -> dict[str, Any]:
        """``{instances, instance_groups, stmgrs, spouts, bolts, config, components}``; each
        instance and stream manager links to its log through ``containerfiledata``."""
        plan = self.physical_plan
        topology = self.topology if plan is None else plan.topology
        topology = topology or topology_pb2.Topology()
        comps = [s.comp for s in topology.spouts] + [b.comp for b in topology.bolts]
        components = {c.name: {"config": _config(c.config, with_objects=True)} for c in comps}
        spouts: dict[str, list[str]] = {s.comp.name: [] for s in topology.spouts}
        bolts: dict[str, list[str]] = {b.comp.name: [] for b in topology.bolts}
        stmgrs: dict[str, dict[str, Any]] = {}
        instances: dict[str, dict[str, Any]] = {}
        groups: dict[str, list[str]] = {}
        if plan is not None:
            for stmgr in plan.stmgrs:
                stmgrs[stmgr.id] = {
                    "id": stmgr.id,
                    "container": stmgr.container_id,
                    "host": stmgr.host_name,
                    "port": stmgr.data_port,
                    "shell_port": stmgr.shell_port,
                    "cwd": stmgr.cwd,
                    "pid": stmgr.pid,
                    "joburl": container_file_url(
                        "containerfilestats",
                        self.cluster,
                        self.environ,
                        self.name,
                        stmgr.container_id,
                        ".",
                    ),
                    "logfiles": self._log_url(stmgr.container_id, stmgr.id),
                    "instance_ids": [],
                }
            containers = {s.id: s.container_id for s in plan.stmgrs}
            for instance in plan.instances:
                name, iid = instance.info.component_name, instance.instance_id
                container = containers.get(instance.stmgr_id, 0)
                (spouts if name in spouts else bolts).setdefault(name, []).append(iid)
                if instance.stmgr_id in stmgrs:
                    stmgrs[instance.stmgr_id]["instance_ids"].append(iid)
                instances[iid] = {
                    "id": iid,
                    "name": name,
                    "stmgr_id": instance.stmgr_id,
                    "container": container,
                    "task_id": instance.info.task_id,
                    "component_index": instance.info.component_index,
                    "logfile": self._log_url(container, iid),
                }
                groups.setdefault(f"container_{container}", []).append(iid)
        return {
            "instances": instances,
            "instance_groups": groups,
            "stmgrs": stmgrs,
            "spouts": spouts,
            "bolts": bolts,
            "config": _config(topology.topology_config, with_objects=True),
            "components": components,
        }

    def packing_plan_doc(self) -> dict[str, Any]:
        """``{id, container_plans: [{id, instances, required_resources,
        scheduled_resources}]}`` (cpu in cores, ram and disk in bytes)."""
        plan = self.packing_plan
        if plan is None:
            return {"id": "", "container_plans": []}

        def resource(r: packing_plan_pb2.Resource) -> dict[str, Any]:
            return {"cpu": r.cpu, "ram": r.ram, "disk": r.disk}

        return {
            "id": plan.id,
            "container_plans": [
                {
                    "id": c.id,
                    "instances": [
                        {
                            "component_name": i.component_name,
                            "task_id": i.task_id,
                            "component_index": i.component_index,
                            "instance_resources": resource(i.resource),
                        }
                        for i in c.instances
                    ],
                    "required_resources": resource(c.required_resource),
                    "scheduled_resources": resource(c.scheduled_resource),
                }
                for c in plan.containers
            ],
        }

    def scheduler_location_doc(self) -> dict[str, Any]:
        """``{name, http_endpoint, job_page_link, pid}`` (all None without a scheduler)."""
        location = self.scheduler
        if location is None:
            return {"name": None, "http_endpoint": None, "job_page_link": None, "pid": None}
        return {
            "name": location.topology_name,
            "http_endpoint": location.http_endpoint,
            "job_page_link": location.job_page_link[0] if location.job_page_link else "",
            "pid": location.pid,
        }

    def tmanager_location_doc(self) -> dict[str, Any]:
        """``{name, id, host, controller_port, server_port, stats_port}`` (all None without a
        tmanager)."""
        location = self.tmanager
        if location is None:
            keys = ("name", "id", "host", "controller_port", "server_port", "stats_port")
            return dict.fromkeys(keys)
        return {
            "name": location.topology_name,
            "id": location.topology_id,
            "host": location.host,
            "controller_port": location.controller_port,
            "server_port": location.server_port,
            "stats_port": location.stats_port,
        }

    def info(self) -> dict[str, Any]:
        """Every document at once: ``{name, id, logical_plan, physical_plan, packing_plan,
        execution_state, scheduler_location, tmanager_location, runtime_state, metadata}``."""
        return {
            "name": self.name,
            "id": self.topology_id,
            "logical_plan": self.logical_plan(),
            "physical_plan": self.physical_plan_doc(),
            "packing_plan": self.packing_plan_doc(),
            "execution_state": self.execution_state_doc(),
            "scheduler_location": self.scheduler_location_doc(),
            "tmanager_location": self.tmanager_location_doc(),
            "runtime_state": self.runtime_state(),
            "metadata": self.metadata(),
        }
