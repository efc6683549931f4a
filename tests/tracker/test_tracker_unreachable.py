"""``heron tracker`` when daemons or stores do not answer: topologies written straight into the
state (no processes), a tmanager and a shell that never answer, and a cluster whose ZooKeeper
cannot be reached. Every answer is a 4xx or 503/504 naming the topology, never a 5xx crash;
the tracker still exits cleanly on SIGTERM."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml
from tracker_support import TrackerProcess, home_fixture, running_tracker  # noqa: F401

from heron_core.config import config_to_proto
from heron_core.network import CURVE_KEY, KEYS_DIR, TopologyKeys
from heron_core.proto import (
    execution_state_pb2,
    physical_plan_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.statemgr import create_state_manager
from heron_core.testing.processes import wait_until


def _dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _topology(name: str, curve: bool) -> topology_pb2.Topology:
    spout = topology_pb2.Spout(comp=topology_pb2.Component(name="src", parallelism=1))
    return topology_pb2.Topology(
        id=f"{name}-id",
        name=name,
        spouts=[spout],
        topology_config=config_to_proto({CURVE_KEY: curve}),
    )


@pytest.mark.processes
def test_silent_daemons_and_an_unreachable_store(
    home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    failures = request.session.testsfailed
    configs = tmp_path / "clusters"
    configs.mkdir()
    (configs / "local.yaml").write_text(yaml.safe_dump({"heron.class.state.manager": "localfs"}))
    (configs / "localzk.yaml").write_text(
        yaml.safe_dump(
            {
                "heron.class.state.manager": "zookeeper",
                "heron.statemgr.connection.string": f"127.0.0.1:{_dead_port()}",
                "heron.statemgr.zookeeper.connection.timeout.ms": 500,
            }
        )
    )
    work = tmp_path / "work"
    TopologyKeys.create(work / KEYS_DIR)
    dead = _dead_port()
    state_config = {"heron.statemgr.root.path": str(home / "repository" / "state")}
    with (
        create_state_manager(state_config, "local") as state,
        running_tracker(configs, home, lambda: request.session.testsfailed > failures) as tr,
    ):
        for name, curve in (("silent", True), ("plain", False), ("idle", True)):
            state.set_topology(name, _topology(name, curve))
            state.set_execution_state(
                name,
                execution_state_pb2.ExecutionState(
                    topology_name=name,
                    topology_id=f"{name}-id",
                    cluster="local",
                    submission_user="someone",
                    working_directory=str(work),
                ),
            )
        # Listed in the state, but of another cluster sharing the store: not shown.
        state.set_topology("other", _topology("other", True))
        state.set_execution_state(
            "other", execution_state_pb2.ExecutionState(topology_name="other", cluster="elsewhere")
        )
        for name in ("silent", "plain"):
            state.set_tmanager_location(
                name,
                tmanager_pb2.TManagerLocation(
                    topology_name=name, host="127.0.0.1", stats_port=dead
                ),
            )
            stmgrs = [
                physical_plan_pb2.StMgr(
                    id="stmgr-1", container_id=1, host_name="127.0.0.1", shell_port=dead
                ),
                physical_plan_pb2.StMgr(id="stmgr-2", container_id=2, host_name="127.0.0.1"),
            ]
            instance = physical_plan_pb2.Instance(
                instance_id="container_1_src_1",
                stmgr_id="stmgr-1",
                info=physical_plan_pb2.InstanceInfo(task_id=1, component_name="src"),
            )
            state.set_physical_plan(
                name,
                physical_plan_pb2.PhysicalPlan(
                    topology=_topology(name, True), stmgrs=stmgrs, instances=[instance]
                ),
            )

        wait_until(
            lambda: (
                tr.json("/topologies").get("local", {}).get("someone", {}).get("default")
                == ["idle", "plain", "silent"]
            ),
            "the three topologies to appear",
            timeout=60,
        )
        assert "localzk" not in tr.json("/topologies")

        def answer(status: int, route: str, /, **params: Any) -> str:
            response = tr.get(route, cluster="local", **params)
            assert response.status_code == status, (route, params, response.text)
            return str(response.json()["detail"])

        # No tmanager location: 503, naming the topology.
        detail = answer(
            503, "/topologies/metrics", topology="idle", component="src", metricname="x"
        )
        assert "'idle'" in detail and "tmanager" in detail
        assert "'idle'" in answer(503, "/topologies/metricnames", topology="idle", component="src")
        # No physical plan: the shell routes answer 503.
        assert "'idle'" in answer(
            503, "/topologies/containerfilestats", topology="idle", container=1
        )
        for name in ("silent", "plain"):  # with and without CURVE
            detail = answer(
                504, "/topologies/metrics", topology=name, component="src", metricname="x"
            )
            assert f"'{name}'" in detail and "did not answer" in detail
            detail = answer(504, "/topologies/exceptions", topology=name, component="src")
            assert f"'{name}'" in detail
            detail = answer(504, "/topologies/metricnames", topology=name, component="src")
            assert f"'{name}'" in detail and "did not answer" in detail
            detail = answer(
                504, "/topologies/containerfiledata", topology=name, container=1, path="logs/a.log"
            )
            assert f"container 1 of topology '{name}'" in detail and "did not answer" in detail
            detail = answer(504, "/topologies/pid", topology=name, instance="container_1_src_1")
            assert f"'{name}'" in detail
            detail = answer(503, "/topologies/containerfilestats", topology=name, container=2)
            assert "no shell port" in detail
        # The tracker still serves after the timeouts.
        assert tr.json("/topologies/physicalplan", cluster="local", topology="silent")["stmgrs"]

        # A cluster whose ZooKeeper is unreachable: its lookups say so.
        wait_until(
            lambda: (
                "cannot be reached"
                in tr.get("/topologies/info", cluster="localzk", topology="x").text
            ),
            "the unreachable ZooKeeper to be reported",
            timeout=60,
        )
        assert tr.get("/topologies/info", cluster="localzk", topology="x").status_code == 404

        # A topology deleted from the state disappears; one written appears.
        state.delete_topology("plain")
        wait_until(
            lambda: tr.json("/topologies")["local"]["someone"]["default"] == ["idle", "silent"],
            "'plain' to disappear",
            timeout=60,
        )
        assert tr.stop() == 0, tr.logs()
    assert os.path.isdir(work)
