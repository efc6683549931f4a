"""The installed ``heron`` command with the real daemons on topologies/word_count.py."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from home_support import (  # noqa: F401 - heron_home_fixture is a fixture
    WORD_COUNT,
    heron_home_fixture,
    processes_under,
)

from heron_core.testing.processes import run_command

pytestmark = pytest.mark.processes

HERON = str(Path(sys.executable).with_name("heron"))
TIMEOUT = 240


def _heron(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return run_command([HERON, *args, "--heron-home", str(home)], timeout=TIMEOUT)


def test_run_with_a_time_limit_exits_by_itself(heron_home: Path) -> None:
    jvm = ("--config-property", "topology.worker.childopts=-Xmx2g")
    done = _heron("run", str(WORD_COUNT), "--time", "5", *jvm, home=heron_home)
    assert done.returncode == 0, done.stderr
    assert (
        "note: config key 'topology.worker.childopts' = '-Xmx2g' has no effect: no JVM runs here"
        in done.stderr
    )
    assert "WordCount: ran" in done.stdout and "stopped by time limit" in done.stdout
    assert processes_under(heron_home) == []
    assert not (heron_home / "topologies" / "local" / "WordCount").exists()


def test_run_stops_cleanly_on_ctrl_c(heron_home: Path) -> None:
    proc = subprocess.Popen(
        [HERON, "run", str(WORD_COUNT), "--containers", "2", "--heron-home", str(heron_home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        # printed once the executors are started: the title alone, or the counters already
        # (all zero) when the first metrics came in before it
        first = proc.stdout.readline()
        assert first.startswith(("WordCount: 0 s", "[0 s] sentence emitted 0")), first
        assert processes_under(heron_home)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 0, err
    assert "stopped by SIGINT" in out
    assert processes_under(heron_home) == []


def test_submit_refuses_a_bad_value_before_starting_anything(heron_home: Path) -> None:
    bad = ("--config-property", "topology.stateful.checkpoint.interval.seconds=0")
    refused = _heron("submit", "local", str(WORD_COUNT), *bad, home=heron_home)
    assert refused.returncode != 0
    assert (
        "config key 'topology.stateful.checkpoint.interval.seconds' (from command line)"
        in refused.stderr
    )
    assert "Traceback" not in refused.stderr
    assert processes_under(heron_home) == []
    assert not (heron_home / "topologies" / "local" / "WordCount").exists()


def test_submit_list_kill(heron_home: Path) -> None:
    submitted = _heron("submit", "local", str(WORD_COUNT), "--name", "wc", home=heron_home)
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.startswith("submitted topology 'wc' (id wc-")
    listed = _heron("list", "local", home=heron_home)
    assert listed.returncode == 0
    header, row = listed.stdout.splitlines()
    assert header.split() == ["NAME", "ID", "SUBMITTED", "STATE"]
    assert row.startswith("wc ") and row.endswith("running") and "not running" not in row
    killed = _heron("kill", "local", "wc", home=heron_home)
    assert killed.returncode == 0, killed.stderr
    assert killed.stdout == "killed topology 'wc' on 'local'\n"
    assert processes_under(heron_home) == []
    assert _heron("list", "local", home=heron_home).stdout == "no topologies on cluster 'local'\n"
