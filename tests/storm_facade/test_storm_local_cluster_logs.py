"""LocalCluster prints what the spouts and bolts write, and their crashes, as Storm's local
mode prints its workers' logs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from log_components import ChattySpout, MissingFileBolt

from heron_core.testing.processes import isolated_home, wait_until
from heron_core.testing.processes import processes_mentioning as processes_under
from storm_compat import LocalCluster
from storm_compat.topology import TopologyBuilder

pytestmark = pytest.mark.processes

TIMEOUT = 240


@pytest.fixture
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; afterwards no process may mention it, and its logs are printed if the
    test failed."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home


class Stderr:
    """What the test's stderr received so far (LocalCluster prints from a thread)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys
        self.lines: list[str] = []

    def match(self, pattern: str) -> list[str]:
        self.lines += self._capsys.readouterr().err.splitlines()
        return [line for line in self.lines if re.fullmatch(pattern, line)]


@pytest.mark.parametrize("show_logs", [True, False], ids=["default", "quiet"])
def test_local_cluster_prints_component_lines_and_crashes(
    home: Path, capsys: pytest.CaptureFixture[str], show_logs: bool
) -> None:
    builder = TopologyBuilder()
    builder.setSpout("numbers", ChattySpout())
    builder.setBolt("lookup", MissingFileBolt(), 2).shuffleGrouping("numbers")
    conf = {"heron.executor.restart.backoff.initial.secs": 0.2}
    err = Stderr(capsys)
    crash = r"lookup:\d+ \| exited with exit status 1 \(crash 1\); the executor restarts it"
    with LocalCluster(heron_home=home, keep_logs=True, show_logs=show_logs) as cluster:
        cluster.submitTopology("chatty", conf, builder.createTopology())
        wait_until(lambda: err.match(crash), "a crash report", timeout=TIMEOUT)
        if show_logs:
            wait_until(
                lambda: err.match(r"numbers:\d+ \| opened task \d+"), "a print", timeout=TIMEOUT
            )
            wait_until(
                lambda: err.match(r"numbers:\d+ \| the spout is ready"),
                "a logged line",
                timeout=TIMEOUT,
            )
            assert err.match(
                r"lookup:\d+ \| FileNotFoundError: \[Errno 2\] No such file or directory: "
                r"'lookup.csv'"
            )
        cluster.killTopology("chatty")
        assert processes_under(home) == []
    lines = err.match(".*")
    logs = home / "topologies" / "local" / "chatty" / "logs"
    assert f"logs: {logs}" in lines
    if not show_logs:
        assert not [line for line in lines if "opened task" in line or "Traceback" in line]
    assert not [line for line in lines if "registered with" in line]  # the kernel's chatter
