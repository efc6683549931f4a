"""The real daemon process (``python -m heron_core.tmanager``) against two fake stream managers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from heron_core.network import encode
from heron_core.proto import common_pb2, metrics_pb2, tmanager_pb2
from heron_core.statemgr import LocalFileSystemStateManager

pytestmark = pytest.mark.processes


@pytest.fixture
def tmanagers(
    tmp_path: Path, working_dir: Path
) -> Iterator[Callable[[], tuple[subprocess.Popen[bytes], Path]]]:
    """Start tmanager processes; kill (by pid) any still running and print every log after."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start() -> tuple[subprocess.Popen[bytes], Path]:
        log = tmp_path / f"tmanager-{len(started)}.log"
        state_config = {
            "heron.class.state.manager": "localfs",
            "heron.statemgr.root.path": str(tmp_path),
        }
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "heron_core.tmanager",
                    "--topology-name=wc",
                    "--topology-id=wc-1",
                    "--cluster=local",
                    f"--working-dir={working_dir}",
                    "--container=0",
                    f"--state-config={json.dumps(state_config)}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=tmp_path,
            )
        started.append((proc, log))
        return proc, log

    yield start
    for proc, log in started:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        print(f"----- {log.name} (exit {proc.returncode})\n{log.read_text()}")


def test_registration_plan_broadcast_metrics_and_clean_exit(
    submitted: LocalFileSystemStateManager,
    stmgr: Callable[[int, str], Any],
    dealer: Callable[[int], zmq.Socket[bytes]],
    receive: Callable[..., Any],
    wait_until: Callable[[str, Callable[[], Any]], Any],
    tmanagers: Callable[[], tuple[subprocess.Popen[bytes], Path]],
) -> None:
    state = submitted
    proc, log = tmanagers()
    location = wait_until("tmanager location", lambda: state.get_tmanager_location("wc"))
    assert (location.topology_name, location.topology_id, location.host) == (
        "wc",
        "wc-1",
        "127.0.0.1",
    )
    assert location.server_port > 0 and location.stats_port > 0

    s1 = stmgr(location.server_port, "stmgr-1")
    first = s1.register(data_port=1001)
    assert first.status.status == common_pb2.OK and not first.HasField("pplan")
    # Anything sent to s1 before the heartbeat's answer (such as a plan) would fail here.
    assert s1.heartbeat() == common_pb2.OK
    assert state.get_physical_plan("wc") is None

    stranger = stmgr(location.server_port, "stmgr-7")
    assert stranger.register(data_port=7).status.status == common_pb2.INVALID_STMGR

    s2 = stmgr(location.server_port, "stmgr-2")
    second = s2.register(data_port=1002)
    assert second.status.status == common_pb2.OK
    plan = second.pplan
    assert [(s.id, s.container_id, s.data_port) for s in plan.stmgrs] == [
        ("stmgr-1", 1, 1001),
        ("stmgr-2", 2, 1002),
    ]
    assert [i.instance_id for i in plan.instances] == [
        "container_1_word_1",
        "container_2_word_2",
        "container_1_count_3",
        "container_2_count_4",
    ]
    assert plan.topology == state.get_topology("wc")
    assert s1.next_plan() == plan and s2.next_plan() == plan
    assert state.get_physical_plan("wc") == plan

    # stmgr-1 restarts: a new connection re-registers; the plan is rebuilt and re-broadcast.
    s1_new = stmgr(location.server_port, "stmgr-1")
    again = s1_new.register(data_port=2001)
    assert [s.data_port for s in again.pplan.stmgrs] == [2001, 1002]
    assert s1_new.next_plan() == again.pplan and s2.next_plan() == again.pplan
    assert state.get_physical_plan("wc") == again.pplan
    assert s1.heartbeat() == common_pb2.STMGR_DIDNT_REGISTER  # the old connection got no plan

    # Each container's metrics manager connects its own DEALER, never registers and only sends
    # PublishMetrics; every value is one interval's (a count since the previous message).
    now_ms = int(time.time() * 1000)

    def published(component: str, instance: str, timestamp: int, count: str) -> Any:
        return metrics_pb2.MetricPublisherPublishMessage(
            publisher=metrics_pb2.MetricPublisher(component_name=component, instance_id=instance),
            timestamp=timestamp,
            metrics=[metrics_pb2.MetricDatum(name="__emit-count/default", value=count)],
        )

    boom = metrics_pb2.ExceptionData(
        stacktrace="Traceback ...\nValueError: boom",
        firsttime="2024-01-01T00:00:01+00:00",
        lasttime="2024-01-01T00:00:02+00:00",
        count=2,
        logging="boom",
    )
    word_late = published("word", "container_2_word_2", now_ms, "7")
    word_late.exceptions.append(boom)
    count = published("count", "container_2_count_4", now_ms - 1000, "3")
    batch = [published("word", "container_2_word_2", 10, "5"), word_late, count]
    metricsmgr = dealer(location.server_port)
    metricsmgr.send_multipart(encode(tmanager_pb2.PublishMetrics(messages=batch)))
    metricsmgr.send_multipart(encode(tmanager_pb2.PublishMetrics(messages=[batch[0]])))

    client = dealer(location.stats_port)

    def ask(request: Any, answer: type[Any]) -> Any:
        client.send_multipart(encode(request))
        return receive(client, answer)

    def all_time(component: str = "") -> list[tuple[str, int, list[tuple[str, str, int]]]]:
        """(instance, timestamp, [(metric, value, type)]) of each message of the answer."""
        request = tmanager_pb2.MetricsRequest(component_name=component)
        response = ask(request, tmanager_pb2.MetricsResponse)
        assert response.status.status == common_pb2.OK
        return [
            (m.publisher.instance_id, m.timestamp, [(d.name, d.value, d.type) for d in m.metrics])
            for m in response.messages
        ]

    # The SUM of the word instance's three intervals, stamped with its newest interval.
    word = ("container_2_word_2", now_ms, [("__emit-count/default", "17", metrics_pb2.SUM)])
    wait_until("both publications", lambda: all_time("word") == [word])
    assert all_time() == [
        ("container_2_count_4", now_ms - 1000, [("__emit-count/default", "3", metrics_pb2.SUM)]),
        word,
    ]

    recent = ask(
        tmanager_pb2.MetricRequest(
            component_name="word", metric=["__emit-count/"], interval=600, minutely=True
        ),
        tmanager_pb2.MetricResponse,
    )
    assert recent.status.status == common_pb2.OK and recent.interval == 600
    (task,) = recent.metric
    (metric,) = task.metric
    assert (task.instance_id, metric.name, metric.value) == (
        "container_2_word_2",
        "__emit-count/default",
        "7",  # the intervals stamped in 1970 are outside the 3-hour window
    )
    assert [v.value for v in metric.interval_values] == ["7"]
    unknown = ask(
        tmanager_pb2.MetricRequest(component_name="nope", interval=-1),
        tmanager_pb2.MetricResponse,
    )
    assert unknown.status.status == common_pb2.NOTOK
    assert "topology 'wc': no component 'nope'" in unknown.status.message
    bad = ask(
        tmanager_pb2.MetricRequest(component_name="word", interval=0), tmanager_pb2.MetricResponse
    )
    assert bad.status.status == common_pb2.NOTOK and "interval 0" in bad.status.message

    logged = ask(
        tmanager_pb2.ExceptionLogRequest(component_name="word"),
        tmanager_pb2.ExceptionLogResponse,
    )
    assert logged.status.status == common_pb2.OK
    assert [(e.instance_id, e.stacktrace, e.count, e.logging) for e in logged.exceptions] == [
        ("container_2_word_2", boom.stacktrace, 2, "boom")
    ]
    assert s2.heartbeat() == common_pb2.OK  # the server port still serves the stream managers

    # A second tmanager for the same topology refuses to start while this one lives.
    rival, rival_log = tmanagers()
    assert wait_until("rival exit", lambda: rival.poll() is not None) and rival.returncode == 1
    assert "another live tmanager" in rival_log.read_text()
    assert state.get_tmanager_location("wc") == location

    os.kill(proc.pid, signal.SIGTERM)
    wait_until("tmanager exit", lambda: proc.poll() is not None)
    assert proc.returncode == 0
    assert not (state.root / "tmanagers" / "wc").exists()
    assert "[topology=wc role=tmanager task=0]" in log.read_text()


def test_sigint_before_any_registration_exits_zero(
    submitted: LocalFileSystemStateManager,
    wait_until: Callable[[str, Callable[[], Any]], Any],
    tmanagers: Callable[[], tuple[subprocess.Popen[bytes], Path]],
) -> None:
    state = submitted
    proc, _ = tmanagers()
    wait_until("tmanager location", lambda: state.get_tmanager_location("wc"))
    os.kill(proc.pid, signal.SIGINT)
    wait_until("tmanager exit", lambda: proc.poll() is not None)
    assert proc.returncode == 0
    assert not (state.root / "tmanagers" / "wc").exists()
