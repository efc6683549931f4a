"""LocalScheduler in this process, running fake executors (tests/executor/fake_daemon.py)."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from scheduler_support import (  # noqa: F401 - root_fixture is a fixture
    FAKE_DAEMON,
    alive,
    events,
    root_fixture,
    starts,
    wait_until,
)

from heron_core.config import build_config
from heron_core.errors import ConfigurationError, SchedulerError
from heron_core.proto import packing_plan_pb2
from heron_core.scheduler import LocalScheduler, Scheduler, TopologyRuntime, create_scheduler

CONFIG = build_config(
    overrides={
        "heron.executor.restart.backoff.initial.secs": 0.1,
        "heron.executor.restart.backoff.max.secs": 0.2,
    }
)
PLAN = packing_plan_pb2.PackingPlan(
    id="p", containers=[packing_plan_pb2.ContainerPlan(id=1), packing_plan_pb2.ContainerPlan(id=2)]
)


def _scheduler(
    root: Path, grace_secs: float | None = 10.0, config: dict[str, Any] = CONFIG
) -> LocalScheduler:
    scheduler = LocalScheduler(
        command_prefix=(sys.executable, str(FAKE_DAEMON)), grace_secs=grace_secs
    )
    scheduler.initialize(config, TopologyRuntime("fake", "fake-1", "local", root))
    return scheduler


def test_create_scheduler_knows_local_and_rejects_unknown_names() -> None:
    assert isinstance(create_scheduler("local"), LocalScheduler)
    with pytest.raises(ConfigurationError, match="unknown scheduler 'aurora'; known: local"):
        create_scheduler("aurora")
    mine = LocalScheduler()
    assert create_scheduler(mine) is mine
    assert isinstance(mine, Scheduler)


@pytest.mark.processes
def test_schedules_one_executor_per_container_and_kills_them(root: Path) -> None:
    scheduler = _scheduler(root)
    try:
        scheduler.on_schedule(PLAN)
        names = ("executor-0", "executor-1", "executor-2")
        wait_until(lambda: all(starts(root, n) for n in names), "three executors")
        pids = scheduler.executor_pids()
        assert sorted(pids) == [0, 1, 2]
        argv = psutil.Process(pids[2]).cmdline()
        assert argv[argv.index("--container") + 1] == "2"
        assert json.loads(argv[argv.index("--state-config") + 1])["heron.class.state.manager"]
        assert os.getsid(pids[2]) == pids[2]  # its own session: a terminal's Ctrl-C skips it
        assert (root / "logs" / "executor-2.log").exists()
        with pytest.raises(SchedulerError, match="already scheduled"):
            scheduler.on_schedule(PLAN)
    finally:
        scheduler.on_kill()
    for name in names:
        (pid,) = starts(root, name)
        assert ("stop", pid) in events(root, name)
        assert not alive(pid)
    assert scheduler.executor_pids() == {}
    scheduler.close()


@pytest.mark.processes
def test_restarts_an_executor_that_dies(root: Path) -> None:
    scheduler = _scheduler(root)
    try:
        scheduler.on_schedule(PLAN)
        wait_until(lambda: starts(root, "executor-1"), "executor-1")
        first = starts(root, "executor-1")[0]
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: len(starts(root, "executor-1")) == 2, "executor-1's restart")
        assert len(starts(root, "executor-0")) == 1
    finally:
        scheduler.close()
    assert not any(alive(pid) for pid in starts(root, "executor-1"))


@pytest.mark.processes
def test_on_restart_replaces_one_container_or_all(root: Path) -> None:
    scheduler = _scheduler(root)
    try:
        scheduler.on_schedule(PLAN)
        wait_until(lambda: all(starts(root, f"executor-{k}") for k in range(3)), "executors")
        with pytest.raises(SchedulerError, match="no container 5; containers: 0, 1, 2"):
            scheduler.on_restart(5)
        scheduler.on_restart(2)
        wait_until(lambda: len(starts(root, "executor-2")) == 2, "executor-2's restart")
        first = starts(root, "executor-2")[0]
        assert ("stop", first) in events(root, "executor-2")
        scheduler.on_restart(-1)
        wait_until(
            lambda: [len(starts(root, f"executor-{k}")) for k in range(3)] == [2, 2, 3],
            "every executor's restart",
        )
    finally:
        scheduler.close()
    with pytest.raises(SchedulerError, match="not running"):
        scheduler.on_restart(0)


def _kill_with_executor_1_ignoring_sigterm(root: Path, scheduler: Any) -> int:
    """Schedule PLAN with a fake executor-1 that ignores SIGTERM, then kill; its pid."""
    (root / "fake").mkdir()
    (root / "fake" / "behaviour.json").write_text(json.dumps({"executor-1": "ignore_term"}))
    try:
        scheduler.on_schedule(PLAN)
        wait_until(lambda: all(starts(root, f"executor-{k}") for k in range(3)), "executors")
    finally:
        scheduler.on_kill()
    (stubborn,) = starts(root, "executor-1")
    return stubborn


@pytest.mark.processes
def test_on_kill_sigkills_an_executor_that_ignores_sigterm(root: Path) -> None:
    stubborn = _kill_with_executor_1_ignoring_sigterm(root, _scheduler(root, grace_secs=0.5))
    assert not alive(stubborn)
    assert ("stop", stubborn) not in events(root, "executor-1")


@pytest.mark.processes
def test_on_kill_gives_executors_the_topologys_stop_grace_plus_5_s(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = {**CONFIG, "heron.executor.stop.grace.secs": 0.5}
    scheduler = _scheduler(root, grace_secs=None, config=config)
    stubborn = _kill_with_executor_1_ignoring_sigterm(root, scheduler)
    assert not alive(stubborn)
    assert f"executor pid {stubborn} ignored SIGTERM for 6 s: SIGKILL" in caplog.text
