"""The daemon in this process (a thread), with an injected clock: start-up, heartbeats and
the metrics cache's config."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from heron_core.config import config_to_proto
from heron_core.metricsmgr import SUM
from heron_core.network import encode
from heron_core.proto import common_pb2, metrics_pb2, packing_plan_pb2, tmanager_pb2, topology_pb2
from heron_core.statemgr import LocalFileSystemStateManager, StateKey
from heron_core.tmanager import TManager


class Clock:
    """A clock that moves only when told to, or by ``step`` on every read."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class Running:
    """A `TManager` running on a thread; `stop` returns its exit status."""

    def __init__(self, tmanager: TManager) -> None:
        self.tmanager = tmanager
        self.status: int | None = None
        self.thread = threading.Thread(target=self._run, name="tmanager-under-test")
        self.thread.start()

    def _run(self) -> None:
        self.status = self.tmanager.run()

    def stop(self) -> int | None:
        self.tmanager.stop()
        self.thread.join(30)
        assert not self.thread.is_alive(), "run() did not return within 30 s of stop()"
        return self.status


@pytest.fixture
def running() -> Iterator[Callable[[TManager], Running]]:
    """Run tmanagers on threads; every one is stopped after the test."""
    started: list[Running] = []

    def start(tmanager: TManager) -> Running:
        started.append(Running(tmanager))
        return started[-1]

    yield start
    for run in started:
        run.stop()


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_missing_packing_plan_gives_up_after_the_startup_timeout(
    working_dir: Path,
    state: LocalFileSystemStateManager,
    topology: topology_pb2.Topology,
    caplog: pytest.LogCaptureFixture,
) -> None:
    state.set_topology("wc", topology)
    tmanager = TManager(
        state, "wc", "wc-1", working_dir=working_dir, clock=Clock(step=1.0), retry_interval=0.001
    )
    assert tmanager.run() == 1
    assert errors(caplog) == [
        "tmanager of topology 'wc' failed: topology 'wc': no packing plan (packingplans/) "
        "in the state manager after 30 s; was the topology submitted?"
    ]
    assert state.get_tmanager_location("wc") is None


def test_topology_with_another_id_is_refused(
    working_dir: Path,
    state: LocalFileSystemStateManager,
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
    caplog: pytest.LogCaptureFixture,
) -> None:
    topology.id = "wc-0"
    state.set_topology("wc", topology)
    state.set_packing_plan("wc", packing_plan)
    assert TManager(state, "wc", "wc-1", working_dir=working_dir).run() == 1
    assert "with id 'wc-0'; expected topology 'wc' with id 'wc-1'" in (errors(caplog)[0])


def test_inconsistent_packing_plan_is_refused(
    working_dir: Path,
    submitted: LocalFileSystemStateManager,
    packing_plan: packing_plan_pb2.PackingPlan,
    caplog: pytest.LogCaptureFixture,
) -> None:
    packing_plan.containers[0].instances[0].component_name = "ghost"
    submitted.set_packing_plan("wc", packing_plan)
    assert TManager(submitted, "wc", "wc-1", working_dir=working_dir).run() == 1
    assert "component 'ghost', which is not in the topology" in errors(caplog)[0]
    assert submitted.get_tmanager_location("wc") is None


def test_plans_written_late_are_picked_up_and_stop_while_waiting_exits_zero(
    working_dir: Path,
    state: LocalFileSystemStateManager,
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
    running: Callable[[TManager], Running],
    wait_until: Callable[[str, Callable[[], Any]], Any],
) -> None:
    waiting = running(TManager(state, "wc", "wc-1", working_dir=working_dir, retry_interval=0.01))
    state.set_topology("wc", topology)
    state.set_packing_plan("wc", packing_plan)
    wait_until("tmanager location", lambda: state.get_tmanager_location("wc"))
    assert waiting.stop() == 0
    assert state.get_tmanager_location("wc") is None

    never = running(TManager(state, "other", "o-1", working_dir=working_dir))
    assert never.stop() == 0


def test_stale_location_blocks_until_it_goes_away(
    working_dir: Path,
    submitted: LocalFileSystemStateManager,
    tmp_path: Path,
    running: Callable[[TManager], Running],
    wait_until: Callable[[str, Callable[[], Any]], Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    holder = LocalFileSystemStateManager({"heron.statemgr.root.path": str(tmp_path)}, "local")
    holder.add_key(StateKey.load("wc", working_dir))
    with holder:  # a live owner whose advertised ports answer nothing
        stale = tmanager_pb2.TManagerLocation(
            topology_name="wc", topology_id="wc-1", host="127.0.0.1", server_port=1, stats_port=1
        )
        holder.set_tmanager_location("wc", stale)
        impatient = TManager(
            submitted, "wc", "wc-1", working_dir=working_dir, clock=Clock(step=30.0)
        )
        assert impatient.run() == 1
        assert (
            "names 127.0.0.1, server port 1, which does not answer, after 30 s"
            in (errors(caplog)[0])
        )
        assert submitted.get_tmanager_location("wc") == stale

        patient = running(
            TManager(submitted, "wc", "wc-1", working_dir=working_dir, retry_interval=0.01)
        )
        holder.delete_tmanager_location("wc")

        def replaced() -> tmanager_pb2.TManagerLocation | None:
            current = submitted.get_tmanager_location("wc")
            return current if current not in (None, stale) else None

        assert wait_until("a new location", replaced).server_port > 1
        assert patient.stop() == 0
        assert submitted.get_tmanager_location("wc") is None


def test_silent_stmgrs_are_reported_once_per_silence_by_the_injected_clock(
    working_dir: Path,
    state: LocalFileSystemStateManager,
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
    running: Callable[[TManager], Running],
    wait_until: Callable[[str, Callable[[], Any]], Any],
    stmgr: Callable[[int, str], Any],
    dealer: Callable[[int], zmq.Socket[bytes]],
    receive: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    topology.topology_config.CopyFrom(
        config_to_proto({"heron.tmanager.stmgr.state.timeout.sec": 5})
    )
    state.set_topology("wc", topology)
    state.set_packing_plan("wc", packing_plan)
    clock = Clock()
    run = running(TManager(state, "wc", "wc-1", working_dir=working_dir, clock=clock))
    location = wait_until("tmanager location", lambda: state.get_tmanager_location("wc"))
    s1 = stmgr(location.server_port, "stmgr-1")
    assert s1.register(data_port=1).status.status == common_pb2.OK
    stats = dealer(location.stats_port)

    def poke() -> None:
        """Wake the loop and wait until it has served a request."""
        stats.send_multipart(encode(tmanager_pb2.MetricsRequest()))
        receive(stats, tmanager_pb2.MetricsResponse)

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]

    clock.now = 5.0
    poke()
    assert wait_until("a warning", warnings) == ["stmgr-1 has sent no heartbeat for 5 s"]
    clock.now = 100.0
    poke()
    assert s1.heartbeat() == common_pb2.OK
    assert warnings() == ["stmgr-1 has sent no heartbeat for 5 s"]
    assert "stmgr-1 is heartbeating again" in caplog.messages

    clock.now = 105.0
    poke()
    wait_until("a second warning", lambda: len(warnings()) == 2)
    assert run.stop() == 0


def test_topology_state_requests_store_and_rebroadcast_the_plan(
    working_dir: Path,
    submitted: LocalFileSystemStateManager,
    running: Callable[[TManager], Running],
    wait_until: Callable[[str, Callable[[], Any]], Any],
    stmgr: Callable[[int, str], Any],
    dealer: Callable[[int], zmq.Socket[bytes]],
    receive: Callable[..., Any],
) -> None:
    run = running(TManager(submitted, "wc", "wc-1", working_dir=working_dir))
    location = wait_until("tmanager location", lambda: submitted.get_tmanager_location("wc"))
    client = dealer(location.stats_port)

    def request(state: topology_pb2.TopologyState.ValueType) -> common_pb2.Status:
        client.send_multipart(encode(tmanager_pb2.TopologyStateRequest(state=state)))
        status: common_pb2.Status = receive(client, tmanager_pb2.TopologyStateResponse).status
        return status

    assert request(topology_pb2.PAUSED).status == common_pb2.OK  # before any plan exists
    stored = submitted.get_topology("wc")
    assert stored is not None and stored.state == topology_pb2.PAUSED
    s1, s2 = stmgr(location.server_port, "stmgr-1"), stmgr(location.server_port, "stmgr-2")
    s1.register(data_port=1)
    assert s2.register(data_port=2).pplan.topology.state == topology_pb2.PAUSED
    assert s1.next_plan().topology.state == topology_pb2.PAUSED
    assert s2.next_plan().topology.state == topology_pb2.PAUSED

    assert request(topology_pb2.RUNNING).status == common_pb2.OK
    for fake in (s1, s2):
        assert fake.next_plan().topology.state == topology_pb2.RUNNING
    pplan = submitted.get_physical_plan("wc")
    assert pplan is not None and pplan.topology.state == topology_pb2.RUNNING
    stored = submitted.get_topology("wc")
    assert stored is not None and stored.state == topology_pb2.RUNNING

    assert request(topology_pb2.RUNNING).status == common_pb2.TOPOLOGY_ALREADY_ACTIVE
    assert request(topology_pb2.PAUSED).status == common_pb2.OK
    assert request(topology_pb2.PAUSED).status == common_pb2.TOPOLOGY_ALREADY_DEACTIVE
    refused = request(topology_pb2.KILLED)
    assert refused.status == common_pb2.NOTOK
    assert "cannot change to state KILLED" in refused.message
    assert run.stop() == 0


def test_the_topology_config_sizes_the_exception_log_and_types_the_metrics(
    working_dir: Path,
    state: LocalFileSystemStateManager,
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
    running: Callable[[TManager], Running],
    wait_until: Callable[[str, Callable[[], Any]], Any],
    dealer: Callable[[int], zmq.Socket[bytes]],
    receive: Callable[..., Any],
) -> None:
    sinks = {"tmanager-sink": {"tmanager-metrics-type": {"my-metric": "AVG"}}}
    topology.topology_config.CopyFrom(
        config_to_proto(
            {"heron.tmanager.metrics.collector.maximum.exception": 1, "heron.metrics.sinks": sinks}
        )
    )
    state.set_topology("wc", topology)
    state.set_packing_plan("wc", packing_plan)
    run = running(TManager(state, "wc", "wc-1", working_dir=working_dir))
    location = wait_until("tmanager location", lambda: state.get_tmanager_location("wc"))
    publisher = metrics_pb2.MetricPublisher(component_name="word", instance_id="container_1_word_1")
    messages = [
        metrics_pb2.MetricPublisherPublishMessage(
            publisher=publisher,
            timestamp=1000 * second,
            metrics=[metrics_pb2.MetricDatum(name="my-metric", value=str(second), type=SUM)],
            exceptions=[
                metrics_pb2.ExceptionData(
                    stacktrace=f"trace {second}", lasttime=f"2024-01-01T00:00:0{second}Z"
                )
            ],
        )
        for second in (1, 2)
    ]
    dealer(location.server_port).send_multipart(
        encode(tmanager_pb2.PublishMetrics(messages=messages))
    )
    stats = dealer(location.stats_port)

    def exceptions() -> list[str]:
        stats.send_multipart(encode(tmanager_pb2.ExceptionLogRequest(component_name="word")))
        answer = receive(stats, tmanager_pb2.ExceptionLogResponse)
        return [e.stacktrace for e in answer.exceptions]

    assert wait_until("the exception log", exceptions) == ["trace 2"]
    stats.send_multipart(encode(tmanager_pb2.MetricRequest(component_name="word", interval=-1)))
    (task,) = receive(stats, tmanager_pb2.MetricResponse).metric
    assert [(m.name, m.value) for m in task.metric] == [("my-metric", "1.5")]  # the table's AVG
    assert run.stop() == 0


def test_a_bad_metrics_cache_size_fails_the_start_naming_topology_and_key(
    working_dir: Path,
    state: LocalFileSystemStateManager,
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
    caplog: pytest.LogCaptureFixture,
) -> None:
    topology.topology_config.CopyFrom(
        config_to_proto({"heron.tmanager.metrics.collector.maximum.interval.min": 0})
    )
    state.set_topology("wc", topology)
    state.set_packing_plan("wc", packing_plan)
    assert TManager(state, "wc", "wc-1", working_dir=working_dir).run() == 1
    (error,) = errors(caplog)
    assert "tmanager of topology 'wc' failed" in error
    assert "'heron.tmanager.metrics.collector.maximum.interval.min'" in error
