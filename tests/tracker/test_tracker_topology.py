"""``heron tracker`` against a real topology on ``local`` and on ``localzk``: the topology appears
when submitted and disappears when killed, and every route answers Heron's shapes."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from tracker_components import LIMIT, MARKER, USER_METRIC, NumberSpout, ReportingBolt
from tracker_support import HERE, TrackerProcess, home_fixture, running_tracker  # noqa: F401

from heron_core.api import Grouping, TopologyBuilder
from heron_core.proto import scheduler_pb2
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import wait_until

NAME = "tracked"


def _plan() -> Any:
    b = TopologyBuilder(NAME)
    numbers = b.add_spout("numbers", NumberSpout, par=1)
    b.add_bolt("report", ReportingBolt, par=2, inputs={numbers: Grouping.SHUFFLE})
    return b.build()


def _configs(tmp_path: Path, zk: dict[str, Any] | None) -> Path:
    directory = tmp_path / "clusters"
    directory.mkdir()
    local = {"heron.class.scheduler": "local", "heron.class.state.manager": "localfs"}
    (directory / "local.yaml").write_text(yaml.safe_dump(local))
    if zk is not None:
        localzk = {
            "heron.class.scheduler": "local",
            "heron.class.state.manager": "zookeeper",
            "heron.statemgr.connection.string": zk["heron.statemgr.connection.string"],
            "heron.statemgr.root.path": zk["heron.statemgr.root.path"],
        }
        (directory / "localzk.yaml").write_text(yaml.safe_dump(localzk))
    return directory


def _code(tmp_path: Path) -> Path:
    code = tmp_path / "code"
    code.mkdir()
    shutil.copy(HERE / "tracker_components.py", code)
    return code


def _eventually(what: str, probe: Callable[[], Any], timeout: float = 120.0) -> Any:
    """Poll ``probe`` until it returns something true; that value."""
    found: list[Any] = []

    def done() -> bool:
        value = probe()
        if value:
            found.append(value)
        return bool(value)

    wait_until(done, what, timeout=timeout, interval=0.25)
    return found[0]


@pytest.mark.processes
@pytest.mark.parametrize("cluster", ["local", pytest.param("localzk", marks=pytest.mark.zookeeper)])
def test_a_topology_through_every_route(
    cluster: str, home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    zk = request.getfixturevalue("zk_config") if cluster == "localzk" else None
    failures = request.session.testsfailed
    config_dir = _configs(tmp_path, zk)
    overrides = {} if zk is None else {k: v for k, v in zk.items() if "statemgr" in k}
    with running_tracker(config_dir, home, lambda: request.session.testsfailed > failures) as tr:
        expected_clusters = ["local", "localzk"] if zk else ["local"]
        assert tr.json("/clusters") == expected_clusters
        assert tr.get("/health").text == "ok"
        assert tr.json("/topologies") == {}
        run = TopologyRun(
            _plan(),
            heron_home=home,
            code_root=_code(tmp_path),
            containers=2,
            cluster=cluster,
            config=overrides,
        )
        with run:
            user = getpass.getuser()
            topologies = _eventually(
                "the topology to appear", lambda: tr.json("/topologies").get(cluster)
            )
            assert topologies == {user: {"default": [NAME]}}
            base = {"cluster": cluster, "environ": "default", "topology": NAME}
            _check_documents(tr, base, cluster, run)
            _check_metrics_and_exceptions(tr, base)
            _check_metric_names(tr, base)
            _check_prometheus(tr, base, run)
            _check_shell(tr, base, run)
            _check_bad_parameters(tr, base, cluster)
        _eventually("the topology to disappear", lambda: tr.json("/topologies") == {})
        missing = tr.get("/topologies/info", **base)
        assert missing.status_code == 404 and NAME in missing.json()["detail"]
        assert tr.stop() == 0, tr.logs()


def _check_documents(tr: TrackerProcess, base: dict[str, Any], cluster: str, run: Any) -> None:
    states = tr.json("/topologies/states")
    assert states[cluster][getpass.getuser()]["default"][NAME]["jobname"] == NAME

    logical = tr.json("/topologies/logicalplan", **base)
    assert set(logical["spouts"]) == {"numbers"} and set(logical["bolts"]) == {"report"}
    assert logical["stages"] == 1
    assert logical["spouts"]["numbers"]["outputs"] == [{"stream_name": "default"}]
    bolt = logical["bolts"]["report"]
    assert bolt["inputs"] == [
        {"stream_name": "default", "component_name": "numbers", "grouping": "SHUFFLE"}
    ]
    assert bolt["inputComponents"] == ["numbers"]

    physical = _eventually(
        "the physical plan",
        lambda: (doc := tr.json("/topologies/physicalplan", **base))["instances"] and doc,
    )
    assert set(physical["stmgrs"]) == {"stmgr-1", "stmgr-2"}
    assert sorted(physical["instance_groups"]) == ["container_1", "container_2"]
    assert len(physical["spouts"]["numbers"]) == 1 and len(physical["bolts"]["report"]) == 2
    for stmgr in physical["stmgrs"].values():
        assert stmgr["host"] and stmgr["shell_port"] > 0 and stmgr["pid"] > 0
        assert "path=logs%2F" + stmgr["id"] + ".log" in stmgr["logfiles"]
    for iid, instance in physical["instances"].items():
        assert instance["id"] == iid and instance["stmgr_id"] in physical["stmgrs"]
        assert instance["logfile"].startswith("/topologies/containerfiledata?")
        assert f"path=logs%2F{iid}.log" in instance["logfile"]

    packing = tr.json("/topologies/packingplan", **base)
    assert packing["id"] and [c["id"] for c in packing["container_plans"]] == [1, 2]
    first = packing["container_plans"][0]
    assert set(first["instances"][0]) == {
        "component_name",
        "task_id",
        "component_index",
        "instance_resources",
    }
    assert set(first["required_resources"]) == {"cpu", "ram", "disk"}

    state = tr.json("/topologies/executionstate", **base)
    assert state["cluster"] == cluster and state["environ"] == "default"
    assert state["role"] == getpass.getuser() == state["submission_user"]
    assert state["jobname"] == NAME and state["status"] == "Running"
    assert state["has_physical_plan"] and state["has_packing_plan"]
    assert state["has_tmanager_location"]
    assert abs(state["submission_time"] - time.time()) < 3600

    # TopologyRun schedules in the test's process, which stores no scheduler location: store
    # one, as `heron submit`'s scheduler does, and watch the tracker follow the change.
    assert tr.json("/topologies/schedulerlocation", **base)["name"] is None
    location = scheduler_pb2.SchedulerLocation(
        topology_name=NAME, http_endpoint="http://127.0.0.1:1", pid=os.getpid()
    )
    run.state.set_scheduler_location(NAME, location)
    scheduler = _eventually(
        "the scheduler location",
        lambda: (doc := tr.json("/topologies/schedulerlocation", **base))["name"] and doc,
    )
    assert scheduler == {
        "name": NAME,
        "http_endpoint": "http://127.0.0.1:1",
        "job_page_link": "",
        "pid": os.getpid(),
    }
    assert tr.json("/topologies/executionstate", **base)["has_scheduler_location"] is True

    info = tr.json("/topologies/info", **base)
    assert info["name"] == NAME and info["id"] == run.topology_id
    assert info["logical_plan"] == logical and info["packing_plan"] == packing
    assert info["tmanager_location"]["stats_port"] > 0
    assert set(info) == {
        "name",
        "id",
        "logical_plan",
        "physical_plan",
        "packing_plan",
        "execution_state",
        "scheduler_location",
        "tmanager_location",
        "runtime_state",
        "metadata",
    }


def _check_metrics_and_exceptions(tr: TrackerProcess, base: dict[str, Any]) -> None:
    physical = tr.json("/topologies/physicalplan", **base)
    bolts = sorted(physical["bolts"]["report"])
    executes = "__execute-count/numbers/default"

    def counted() -> Any:
        doc = tr.json(
            "/topologies/metrics", **base, component="report", metricname=[executes, USER_METRIC]
        )
        values = doc["metrics"]
        ready = all(
            float(values.get(name, {}).get(i, 0)) > 0
            for name in (executes, USER_METRIC)
            for i in bolts
        )
        return doc if ready else None

    doc = _eventually("__execute-count and the user metric of every bolt instance", counted)
    assert doc["component"] == "report" and doc["interval"] > 0
    assert set(doc["metrics"][executes]) == set(bolts)

    one = tr.json(
        "/topologies/metrics",
        **base,
        component="report",
        metricname=executes,
        instance=bolts[0],
        interval=60,
    )
    assert set(one["metrics"][executes]) == {bolts[0]}

    now = int(time.time())
    timeline = tr.json(
        "/topologies/metricstimeline",
        **base,
        component="report",
        metricname=executes,
        starttime=now - 600,
        endtime=now + 60,
    )
    assert timeline["component"] == "report" and timeline["starttime"] == now - 600
    points = timeline["timeline"][executes]
    assert set(points) == set(bolts)
    for series in points.values():
        assert series and all(now - 660 <= int(ts) <= now + 60 for ts in series)

    exceptions = _eventually(
        "the reported exceptions",
        lambda: tr.json("/topologies/exceptions", **base, component="report"),
    )
    first = exceptions[0]
    assert set(first) == {
        "hostname",
        "instance_id",
        "stack_trace",
        "lasttime",
        "firsttime",
        "count",
        "logging",
    }
    assert "ValueError" in first["stack_trace"] and first["instance_id"] in bolts
    assert first["count"] >= 1
    summary = tr.json("/topologies/exceptionsummary", **base, component="report")
    assert summary and all(
        set(s) == {"class_name", "lasttime", "firsttime", "count"} for s in summary
    )
    assert sum(s["count"] for s in summary) == sum(e["count"] for e in exceptions)
    assert len(summary) <= len(exceptions)
    assert tr.json("/topologies/exceptions", **base, component="numbers") == []


def _check_metric_names(tr: TrackerProcess, base: dict[str, Any]) -> None:
    """Our extension ``/topologies/metricnames`` lists the user metric beside the built-in ones,
    for the component and for one of its instances, and checks its parameters like the others."""
    executes = "__execute-count/numbers/default"
    bolts = sorted(tr.json("/topologies/physicalplan", **base)["bolts"]["report"])
    one = tr.json("/topologies/metricnames", **base, component="report", instance=bolts[0])
    assert one["component"] == "report"
    assert USER_METRIC in one["metricnames"] and executes in one["metricnames"]
    doc = tr.json("/topologies/metricnames", **base, component="report")
    assert doc["component"] == "report"
    names = doc["metricnames"]
    assert USER_METRIC in names and executes in names
    assert names == sorted(set(names))
    assert set(one["metricnames"]) <= set(names)  # asked later: the tmanager forgets no name

    def spout_names() -> list[str] | None:
        found = tr.json("/topologies/metricnames", **base, component="numbers")["metricnames"]
        return found if "__emit-count/default" in found else None

    spout = _eventually("the spout's emit count among its metric names", spout_names)
    assert USER_METRIC not in spout

    ghost = tr.get("/topologies/metricnames", **base, component="ghost")
    assert ghost.status_code == 404 and "no component 'ghost'" in ghost.json()["detail"]
    stranger = tr.get(
        "/topologies/metricnames", **base, component="report", instance="container_9_x_9"
    )
    assert stranger.status_code == 404
    assert "no instance 'container_9_x_9'" in stranger.json()["detail"]
    missing = tr.get("/topologies/metricnames", **base)
    assert missing.status_code == 422 and "component" in missing.text


def _scrape(run: Any) -> dict[tuple[str, str], float]:
    """Every Prometheus endpoint of the topology (from the file_sd targets its metrics managers
    write): (sample name, instance) -> value, summed over the endpoints."""
    values: dict[tuple[str, str], float] = {}
    targets = sorted((run.working_dir / "metrics").glob("prometheus-*.json"))
    assert len(targets) == 2, targets  # one per container
    for path in targets:
        for group in json.loads(path.read_text()):
            for target in group["targets"]:
                url = f"http://{target}{group['labels']['__metrics_path__']}"
                with urllib.request.urlopen(url, timeout=10) as response:
                    text = response.read().decode()
                for family in text_string_to_metric_families(text):
                    for sample in family.samples:
                        if sample.labels.get("topology") == NAME:
                            key = (sample.name, sample.labels["instance"])
                            values[key] = values.get(key, 0.0) + sample.value
    return values


def _check_prometheus(tr: TrackerProcess, base: dict[str, Any], run: Any) -> None:
    """Once the spout has emitted its LIMIT numbers, the tracker and Prometheus show the same
    counts: every number executed once, and counted once by the user metric."""
    bolts = sorted(tr.json("/topologies/physicalplan", **base)["bolts"]["report"])
    executes = "__execute-count/numbers/default"

    def tracked() -> dict[str, dict[str, float]]:
        doc = tr.json(
            "/topologies/metrics", **base, component="report", metricname=[executes, USER_METRIC]
        )
        return {
            name: {i: float(doc["metrics"].get(name, {}).get(i, 0)) for i in bolts}
            for name in (executes, USER_METRIC)
        }

    def scraped() -> dict[str, dict[str, float]]:
        values = _scrape(run)
        names = {
            executes: "heron_execute_count_numbers_default_total",
            USER_METRIC: "heron_seen_count_total",
        }
        return {
            name: {i: values.get((sample, i), 0.0) for i in bolts} for name, sample in names.items()
        }

    def settled() -> bool:
        tracker = tracked()
        return all(sum(tracker[n].values()) == LIMIT for n in tracker) and scraped() == tracker

    wait_until(settled, f"{LIMIT} tuples counted alike by the tracker and Prometheus", 180, 0.5)


def _check_shell(tr: TrackerProcess, base: dict[str, Any], run: Any) -> None:
    physical = tr.json("/topologies/physicalplan", **base)
    iid = sorted(physical["bolts"]["report"])[0]
    instance = physical["instances"][iid]
    pid = tr.json("/topologies/pid", **base, instance=iid)
    assert set(pid) == {"command", "stdout", "stderr", "pid"}
    assert pid["pid"] == run.instance_process("report", instance["component_index"]).pid
    assert pid["stdout"] == str(pid["pid"])
    stmgr_pid = tr.json("/topologies/pid", **base, instance="stmgr-1")
    assert stmgr_pid["pid"] == physical["stmgrs"]["stmgr-1"]["pid"]

    log = _eventually(
        "the marker in the bolt's log, through its logfile link",
        lambda: MARKER in (doc := tr.json(instance["logfile"]))["data"] and doc,
    )
    assert set(log) == {"data", "offset", "length", "size"} and log["size"] >= log["length"] > 0
    path = f"logs/{iid}.log"
    head = tr.json(
        "/topologies/containerfiledata",
        **base,
        container=instance["container"],
        path=path,
        offset=0,
        length=5,
    )
    assert head["offset"] == 0 and head["length"] == len(head["data"]) == 5

    listing = tr.json(
        "/topologies/containerfilestats", **base, container=instance["container"], path="logs"
    )
    assert f"{iid}.log" in listing
    entry = listing[f"{iid}.log"]
    assert entry["is_dir"] is False and entry["path"] == path and entry["size"] > 0
    root = tr.json("/topologies/containerfilestats", **base, container=instance["container"])
    assert list(root) == ["logs"] and root["logs"]["is_dir"] is True  # never keys/ or code/

    download = tr.get(
        "/topologies/containerfiledownload", **base, container=instance["container"], path=path
    )
    assert download.status_code == 200
    assert "attachment" in download.headers["content-disposition"]
    on_disk = (run.working_dir / path).read_bytes()
    assert download.content and on_disk.startswith(download.content)


def _check_bad_parameters(tr: TrackerProcess, base: dict[str, Any], cluster: str) -> None:
    def detail(status: int, route: str, /, **params: Any) -> str:
        response = tr.get(route, **params)
        assert response.status_code == status, (route, params, response.text)
        return str(response.json()["detail"])

    assert "unknown cluster 'nowhere'" in detail(
        404, "/topologies/info", **{**base, "cluster": "nowhere"}
    )
    assert "no topology 'nope'" in detail(404, "/topologies/info", **{**base, "topology": "nope"})
    assert "'prod'" in detail(404, "/topologies/info", **{**base, "environ": "prod"})
    assert "no component 'ghost'" in detail(
        404, "/topologies/metrics", **base, component="ghost", metricname="x"
    )
    assert "no instance 'container_9_x_9'" in detail(
        404,
        "/topologies/metrics",
        **base,
        component="report",
        metricname="x",
        instance="container_9_x_9",
    )
    for interval in (0, -2):
        assert "interval" in detail(
            400,
            "/topologies/metrics",
            **base,
            component="report",
            metricname="x",
            interval=interval,
        )
    assert "starttime" in detail(
        400,
        "/topologies/metricstimeline",
        **base,
        component="report",
        metricname="x",
        starttime=200,
        endtime=100,
    )
    assert "no component 'ghost'" in detail(
        404, "/topologies/exceptions", **base, component="ghost"
    )
    assert "no instance 'ghost'" in detail(404, "/topologies/pid", **base, instance="ghost")
    assert "no container 7" in detail(
        404, "/topologies/containerfiledata", **base, container=7, path="logs/x.log"
    )
    served = "is not served: only the container's logs are served: a file 'logs/<name>'"
    for path in ("../secret", "/etc/passwd", "logs/../../x", "keys/topology.key_secret"):
        for route in ("containerfiledata", "containerfilestats", "containerfiledownload"):
            assert f"path {path!r} {served}" in detail(
                400, f"/topologies/{route}", **base, container=1, path=path
            )
    assert "cannot read 'logs/no-such.log' in container 1" in detail(
        404, "/topologies/containerfiledata", **base, container=1, path="logs/no-such.log"
    )
    missing = tr.get("/topologies/metrics", **base, component="report")
    assert missing.status_code == 422 and "metricname" in missing.text
    assert (
        tr.get("/topologies/containerfiledata", **base, container="one", path="x").status_code
        == 422
    )
