"""The request files of ``heron restart`` and ``heron update``
(``heron_core.scheduler._requests``)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.scheduler import (
    RequestAnswer,
    RestartRequest,
    UpdateRequest,
    read_answer,
    write_request,
)
from heron_core.scheduler._requests import REQUESTS_DIR, pending_requests, write_answer


def test_a_request_is_pending_until_answered_and_read_once(tmp_path: Path) -> None:
    first = write_request(tmp_path, RestartRequest(1))
    second = write_request(tmp_path, RestartRequest(-1))
    assert stat.S_IMODE((tmp_path / REQUESTS_DIR).stat().st_mode) == 0o700
    assert [r for _, r in pending_requests(tmp_path)] == [RestartRequest(1), RestartRequest(-1)]
    assert read_answer(first) is None
    write_answer(first, RequestAnswer(True, "restarted container 1"))
    assert [p for p, _ in pending_requests(tmp_path)] == [second]
    assert read_answer(first) == RequestAnswer(True, "restarted container 1")
    assert not first.exists() and read_answer(first) is None


def test_an_update_request_carries_both_plans(tmp_path: Path) -> None:
    topology = topology_pb2.Topology(id="wc-1", name="wc")
    topology.bolts.add().comp.CopyFrom(topology_pb2.Component(name="count", parallelism=3))
    plan = packing_plan_pb2.PackingPlan(id="p", containers=[packing_plan_pb2.ContainerPlan(id=1)])
    write_request(tmp_path, UpdateRequest(topology, plan))
    [(_, request)] = pending_requests(tmp_path)
    assert isinstance(request, UpdateRequest)
    assert request.topology == topology and request.packing_plan == plan


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[1]",
        json.dumps({"restart": True}),
        json.dumps({"restart": "1"}),
        json.dumps({"update": {"topology": "!!", "packing_plan": ""}}),
        json.dumps({"update": {"topology": ""}}),
        json.dumps({"reboot": 1}),
    ],
)
def test_a_file_that_is_not_a_request_is_pending_with_no_request(tmp_path: Path, text: str) -> None:
    (tmp_path / REQUESTS_DIR).mkdir()
    junk = tmp_path / REQUESTS_DIR / "x.request.json"
    junk.write_text(text)
    assert pending_requests(tmp_path) == [(junk, None)]
    assert pending_requests(tmp_path / "nowhere") == []
