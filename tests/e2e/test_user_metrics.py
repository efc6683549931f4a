"""Issue 17, instance side, end to end: user metrics from the native API (any object, heronpy's
classes), a multilang subprocess and an in-process pystorm bolt, and exceptions (reported,
uncaught, multilang ``error``, pystorm ``raise_exception``) reach the topology manager through
the metrics managers; values are checked as the tmanager answers them (all-time, per
instance) and exceptions through its exception log."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_components import CrashOnceBolt
from metrics_components import MetricBolt

from heron_core.api import Grouping, Stream, TopologyBuilder, shell_component
from heron_core.client._tmanager import TManagerClient
from heron_core.proto import tmanager_pb2
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import FixedSpout
from heron_core.testing.processes import isolated_home
from storm_compat.streamparse._adapter import PystormBoltAdapter

pytestmark = pytest.mark.processes

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
NUMBERS = 40
WORDS = ["a", "b", "boom", "c", "boom", "d"]


@pytest.fixture(scope="module", name="run")
def run_fixture(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TopologyRun]:
    root = tmp_path_factory.mktemp("user-metrics")
    code = root / "code"
    code.mkdir()
    for path in (
        HERE / "e2e_components.py",
        HERE / "metrics_components.py",
        TESTS / "multilang" / "scripts" / "probe_bolt.py",
        TESTS / "multilang" / "scripts" / "storm.py",
        TESTS / "streamparse" / "sparse_components.py",
    ):
        shutil.copy(path, code)
    failures = request.session.testsfailed
    with isolated_home(root, lambda: request.session.testsfailed > failures) as home:
        b = TopologyBuilder("user-metrics")
        numbers = b.add_spout("numbers", FixedSpout(["n"], [[n] for n in range(NUMBERS)]))
        b.add_bolt("heronpy", MetricBolt(), inputs={numbers: Grouping.SHUFFLE})
        b.add_bolt("crasher", CrashOnceBolt(str(root / "crashed")), inputs=[numbers])
        actions = b.add_spout(
            "actions",
            FixedSpout(
                ["action", "a", "b"],
                [["metrics", "shell-count", 2]] * 5 + [["error", "it broke", 0]] * 3,
            ),
        )
        probe = shell_component([sys.executable, "probe_bolt.py"], ["x"])
        b.add_bolt("shell", probe, inputs=[actions])
        words = b.add_spout("words", FixedSpout(["word"], [[w] for w in WORDS]))
        components = ["numbers", "heronpy", "crasher", "actions", "shell", "words", "pystorm"]
        pystorm = PystormBoltAdapter("sparse_components.ManualBolt", components)
        pystorm.outputs = [Stream(fields=["word"])]  # ManualBolt's outputs
        b.add_bolt("pystorm", pystorm, inputs=[words])
        with TopologyRun(b.build(), heron_home=home, code_root=code) as run:
            yield run


def value(run: TopologyRun, component: str, name: str) -> float | None:
    """``name``'s all-time value summed over ``component``'s instances (None: not there)."""
    found = [
        float(d.value)
        for m in run.metrics()
        if m.publisher.component_name == component
        for d in m.metrics
        if d.name == name
    ]
    return sum(found) if found else None


def exceptions(run: TopologyRun, component: str) -> list[tmanager_pb2.TmanagerExceptionLog]:
    client = TManagerClient(run.state, run.name)
    try:
        answer = client.ask(tmanager_pb2.ExceptionLogRequest(component_name=component))
    finally:
        client.close()
    if not isinstance(answer, tmanager_pb2.ExceptionLogResponse):
        return []
    return list(answer.exceptions)


def wait_for_value(run: TopologyRun, component: str, name: str, expected: float) -> None:
    run.wait_until(
        lambda: value(run, component, name) == expected,
        f"{component}'s {name} = {expected} (last seen {value(run, component, name)})",
    )


def test_native_register_metric_takes_any_object(run: TopologyRun) -> None:
    wait_for_value(run, "heronpy", "running", NUMBERS)  # a gauge: its newest value


def test_heronpy_metric_classes(run: TopologyRun) -> None:
    wait_for_value(run, "heronpy", "count", NUMBERS)
    wait_for_value(run, "heronpy", "parity/even", NUMBERS // 2)
    wait_for_value(run, "heronpy", "parity/odd", NUMBERS // 2)
    for name in ("mean", "reduced", "means/even", "means/odd"):
        mean = value(run, "heronpy", name)
        assert mean is not None and 0 <= mean <= NUMBERS - 1, (name, mean)


def test_standard_metrics_of_an_instance(run: TopologyRun) -> None:
    wait_for_value(run, "heronpy", "__execute-count/numbers/default", NUMBERS)
    wait_for_value(run, "numbers", "__emit-count/default", NUMBERS)
    latency = value(run, "heronpy", "__execute-latency/numbers/default")
    assert latency is not None and latency >= 0
    run.wait_until(
        lambda: (value(run, "heronpy", "__py-physical-memory-byte") or 0) > 1_000_000,
        "the process metrics",
    )
    assert value(run, "heronpy", "__py-user-cpu-time-secs") is not None


def test_multilang_metrics_command(run: TopologyRun) -> None:
    wait_for_value(run, "shell", "shell-count", 10)  # numbers add up, per interval


def test_pystorm_report_metric_in_process(run: TopologyRun) -> None:
    wait_for_value(run, "pystorm", "seen", len(WORDS) - WORDS.count("boom"))


def test_native_report_error(run: TopologyRun) -> None:
    def reported() -> list[tmanager_pb2.TmanagerExceptionLog]:
        return [e for e in exceptions(run, "heronpy") if "is round" in e.logging]

    run.wait_until(lambda: sum(e.count for e in reported()) == NUMBERS // 10, "4 reports")
    for entry in reported():
        assert entry.logging.startswith("ValueError: number ")
        assert "raise ValueError" in entry.stacktrace
        assert entry.firsttime <= entry.lasttime and entry.lasttime.endswith("Z")
        assert entry.instance_id.startswith("container_1_heronpy_")


def test_uncaught_exception_is_published_before_the_instance_exits(run: TopologyRun) -> None:
    run.wait_until(
        lambda: any(e.logging == "ValueError: boom" for e in exceptions(run, "crasher")),
        "the crash in the exception log",
    )
    [entry] = [e for e in exceptions(run, "crasher") if e.logging == "ValueError: boom"]
    assert entry.count == 1 and 'raise ValueError("boom")' in entry.stacktrace


def test_multilang_error_command(run: TopologyRun) -> None:
    run.wait_until(
        lambda: [(e.stacktrace, e.count) for e in exceptions(run, "shell")] == [("it broke", 3)],
        "three identical errors from the subprocess",
    )


def test_pystorm_raise_exception_in_process(run: TopologyRun) -> None:
    def raised() -> list[tmanager_pb2.TmanagerExceptionLog]:
        return [e for e in exceptions(run, "pystorm") if "ValueError: boom" in e.stacktrace]

    run.wait_until(lambda: sum(e.count for e in raised()) == 2, "two raise_exception reports")
    assert all(e.logging.startswith("Python ValueError raised") for e in raised())
