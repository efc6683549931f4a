"""``heron sparse`` on a real ``sparse quickstart`` project, through the real process model."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from sparse_components import FailOnceBolt, NumberSpout
from sparse_support import counts_are_consistent, logged_totals, quickstart
from streamparse import Topology

from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import run_command
from storm_compat.streamparse import topology_class_plan

pytestmark = pytest.mark.processes

HERON = str(Path(sys.executable).with_name("heron"))


def heron(project: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return run_command([HERON, "sparse", *args], cwd=project, timeout=timeout)


@pytest.mark.parametrize("mode", [[], ["--multilang"]], ids=["in-process", "multilang"])
def test_sparse_run_of_the_quickstart_project_logs_correct_counts(
    tmp_path: Path, mode: list[str]
) -> None:
    project = quickstart(tmp_path)
    home = tmp_path / "home"
    done = heron(project, "run", "-t", "20", "--keep-dir", "--heron-home", str(home), *mode)
    logs_dir = home / "topologies" / "local" / "wordcount" / "logs"
    logs = {p.stem: p.read_text(errors="replace") for p in sorted(logs_dir.glob("*.log"))}
    dump = "\n".join(f"===== {name} =====\n{text[-3000:]}" for name, text in logs.items())
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{dump}"
    assert "count_bolt" in done.stdout and "stopped by time limit" in done.stdout
    totals = logged_totals({k: v for k, v in logs.items() if "count_bolt" in k})
    assert sum(len(t) for t in totals.values()) >= 2, dump
    assert counts_are_consistent(totals, tasks=2), totals


def test_sparse_submit_list_tail_and_kill(tmp_path: Path) -> None:
    project = quickstart(tmp_path)
    home = ("--heron-home", str(tmp_path / "home"))
    submitted = heron(project, "submit", *home)
    try:
        assert submitted.returncode == 0, submitted.stderr
        assert "submitted topology 'wordcount'" in submitted.stdout
        listed = heron(project, "list", *home)
        assert "wordcount" in listed.stdout and "running" in listed.stdout, listed.stderr
        deadline = time.monotonic() + 120
        while True:
            tail = heron(project, "tail", "-l", "3", *home)
            assert tail.returncode == 0, tail.stderr
            if "counted [" in tail.stdout:
                break
            assert time.monotonic() < deadline, f"no counts logged:\n{tail.stdout}"
            time.sleep(0.5)
        assert "==> container_1_count_bolt_" in tail.stdout
    finally:
        killed = heron(project, "kill", *home)
    assert killed.returncode == 0, killed.stderr
    assert "no topologies on cluster 'local'" in heron(project, "list", *home).stdout


@pytest.mark.parametrize("multilang", [False, True], ids=["in-process", "multilang"])
def test_a_reliable_spout_replays_what_a_bolt_fails(tmp_path: Path, multilang: bool) -> None:
    class Replays(Topology):
        words = NumberSpout.spec()
        once = FailOnceBolt.spec(inputs=[words])

    plan = topology_class_plan(Replays, "replays", {}, multilang=multilang)
    with TopologyRun(plan, heron_home=tmp_path, code_root=Path(__file__).parent) as run:
        try:
            # Each process exports its own metrics on its own clock: wait for all three.
            wanted = (("words", "__ack-count"), ("words", "__fail-count"), ("once", "__emit-count"))
            run.wait_until(
                lambda: all(run.counter(*key) >= 10 for key in wanted), "10 acks, fails, emits"
            )
            assert [run.counter(*key) for key in wanted] == [10, 10, 10]
        except BaseException:
            print(run.dump_logs())
            raise
