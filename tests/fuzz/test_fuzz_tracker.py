"""Hypothesis against the tracker's query parameters, in-process through httpx's ASGI transport:
any value of any parameter gets an answer (2xx, or a 4xx naming what is wrong), never a 500.
The topology is a stored snapshot whose tmanager and shell are stand-ins answering OK."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fuzz_support import small_topology
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heron_core.proto import (
    common_pb2,
    execution_state_pb2,
    metrics_pb2,
    physical_plan_pb2,
    tmanager_pb2,
)
from heron_core.tracker._app import create_app
from heron_core.tracker._topology import TopologySnapshot

OK = common_pb2.Status(status=common_pb2.OK)


class _Answers:
    """A tmanager or shell client that answers every request with an empty OK."""

    endpoint = "tcp://127.0.0.1:1"
    answers = {
        tmanager_pb2.MetricRequest: tmanager_pb2.MetricResponse(status=OK),
        tmanager_pb2.ExceptionLogRequest: tmanager_pb2.ExceptionLogResponse(status=OK),
        metrics_pb2.ShellFileRequest: metrics_pb2.ShellFileResponse(status=OK),
        metrics_pb2.ShellListRequest: metrics_pb2.ShellListResponse(status=OK),
        metrics_pb2.ShellPidRequest: metrics_pb2.ShellPidResponse(status=OK, pid=1),
    }

    def ask(self, *args: Any) -> Any:
        return self.answers[type(args[-1])]


class _Clients:
    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.tmanager = _Answers()
        self.shell = _Answers()


class _Watch:
    problem = ""

    def __init__(self, snapshot: TopologySnapshot) -> None:
        self._snapshot = snapshot

    def snapshots(self) -> list[TopologySnapshot]:
        return [self._snapshot]

    def clients(self, name: str) -> _Clients:
        return _Clients()


class _Tracker:
    def __init__(self) -> None:
        topology = small_topology()
        plan = physical_plan_pb2.PhysicalPlan(
            topology=topology,
            stmgrs=[
                physical_plan_pb2.StMgr(id="stmgr-1", container_id=1, host_name="h", shell_port=9)
            ],
            instances=[
                physical_plan_pb2.Instance(
                    instance_id=f"container_1_{c}_{t}",
                    stmgr_id="stmgr-1",
                    info=physical_plan_pb2.InstanceInfo(task_id=t, component_name=c),
                )
                for c, t in (("word", 1), ("count", 2), ("count", 3))
            ],
        )
        snapshot = TopologySnapshot(
            "local",
            "fz",
            topology=topology,
            physical_plan=plan,
            execution_state=execution_state_pb2.ExecutionState(cluster="local"),
            tmanager=tmanager_pb2.TManagerLocation(host="127.0.0.1", stats_port=1),
        )
        self.watches = {"local": _Watch(snapshot)}
        self.clusters = ["local"]

    def topologies(self) -> list[TopologySnapshot]:
        return self.watches["local"].snapshots()


@pytest.fixture(scope="module")
def app() -> FastAPI:
    return create_app(_Tracker())  # type: ignore[arg-type]


def _get(app: FastAPI, route: str, params: dict[str, str]) -> httpx.Response:
    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.get(route, params=params)

    return asyncio.run(ask())


ROUTES = [
    "/topologies/metrics",
    "/topologies/metricnames",
    "/topologies/metricstimeline",
    "/topologies/exceptions",
    "/topologies/exceptionsummary",
    "/topologies/pid",
    "/topologies/containerfiledata",
    "/topologies/containerfilestats",
    "/topologies/logicalplan",
    "/topologies/physicalplan",
    "/topologies",
]
NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["-1", "0", "1", str(2**63), str(-(2**63) - 1), "1e3", "nan", ""]),
)
TEXT = st.text(max_size=12)
PARAMS = st.fixed_dictionaries(
    {"cluster": st.sampled_from(["local", "nowhere"]), "topology": st.sampled_from(["fz", "x"])},
    optional={
        "component": st.sampled_from(["word", "count", "__stmgr__", "nope"]) | TEXT,
        "metricname": TEXT,
        "instance": st.sampled_from(["container_1_count_2", "stmgr-1", "x"]) | TEXT,
        "interval": NUMBERS,
        "starttime": NUMBERS,
        "endtime": NUMBERS,
        "container": NUMBERS,
        "path": st.sampled_from([".", "logs", "../x", "/etc", "a\x00b"]) | TEXT,
        "offset": NUMBERS,
        "length": NUMBERS,
        "environ": TEXT,
        "role": TEXT,
    },
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(ROUTES), PARAMS)
@example(  # regression: 2**63 went into a protobuf int64 and the tracker answered 500
    "/topologies/metrics",
    {"cluster": "local", "topology": "fz", "component": "count", "metricname": "m",
     "interval": str(2**63)},
)  # fmt: skip
@example(
    "/topologies/containerfiledata",
    {"cluster": "local", "topology": "fz", "container": "1", "path": "a", "length": str(2**64)},
)
def test_any_query_gets_an_answer_or_a_client_error(
    app: FastAPI, route: str, params: dict[str, str]
) -> None:
    response = _get(app, route, params)
    assert response.status_code < 500, (route, params, response.text)
