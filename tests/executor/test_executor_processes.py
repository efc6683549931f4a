"""The executor as a real process, supervising fake daemons (see fake_daemon.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil
import pytest
from executor_support import (  # noqa: F401 - fake_container_fixture is a fixture
    FAST,
    GIVE_UP_AFTER_TWO,
    FakeContainer,
    alive,
    fake_container_fixture,
    wait_until,
    write_topology,
)

from heron_core.executor import ipc_dir, ipc_dirs, stop_processes

pytestmark = pytest.mark.processes

TASKS_1 = ("container_1_word_1", "container_1_count_3")


def test_runs_the_container_and_stops_everything_on_sigterm(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **FAST)
    executor = fake_container.executor(1)
    names = ("stmgr-1", *TASKS_1)
    wait_until(lambda: all(fake_container.starts(n) for n in names), "container 1's processes")
    pids = [fake_container.starts(n)[0] for n in names]
    assert fake_container.starts("container_2_word_2") == []
    ipc = next(a for a in psutil.Process(pids[0]).cmdline() if a.startswith("ipc://"))
    assert ipc == f"ipc://{ipc_dir(fake_container.root, 1)}/"
    assert len(ipc) < 60

    executor.send_signal(signal.SIGTERM)
    assert executor.wait(timeout=60) == 0
    assert not any(alive(pid) for pid in pids)
    for name in names:
        assert ("stop", fake_container.starts(name)[0]) in fake_container.events(name)
    log = fake_container.log("executor-1")
    assert "received SIGTERM" in log
    assert f"container_1_count_3 (pid {pids[2]}) exited with exit status 0" in log
    assert ipc_dirs(fake_container.root) == []
    assert "running as pid" in fake_container.log("stmgr-1")


def test_container_zero_runs_the_tmanager(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **FAST)
    executor = fake_container.executor(0)
    wait_until(lambda: fake_container.starts("tmanager"), "the tmanager")
    executor.send_signal(signal.SIGINT)
    assert executor.wait(timeout=60) == 0
    assert "received SIGINT" in fake_container.log("executor-0")


def test_a_crashed_instance_is_restarted(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **FAST)
    fake_container.behave(container_1_count_3="crash_once")
    fake_container.executor(1)
    wait_until(lambda: len(fake_container.starts("container_1_count_3")) == 2, "a restart")
    first = fake_container.starts("container_1_count_3")[0]
    wait_until(
        lambda: (
            f"container_1_count_3 (pid {first}) exited with exit status 3"
            in fake_container.log("executor-1")
        ),
        "the exit to be logged",
    )
    assert len(fake_container.starts("stmgr-1")) == 1
    assert len(fake_container.starts("container_1_word_1")) == 1


def test_instances_restart_with_their_stmgr(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **FAST)
    fake_container.executor(1)
    names = ("stmgr-1", *TASKS_1)
    wait_until(lambda: all(fake_container.starts(n) for n in names), "container 1's processes")
    old = {n: fake_container.starts(n)[0] for n in names}
    os.kill(old["stmgr-1"], signal.SIGKILL)
    wait_until(lambda: all(len(fake_container.starts(n)) == 2 for n in names), "restarts")
    for name in TASKS_1:
        assert ("stop", old[name]) in fake_container.events(name)
        assert not alive(old[name])
    log = fake_container.log("executor-1")
    assert f"stmgr-1 (pid {old['stmgr-1']}) exited with signal SIGKILL" in log
    assert "stmgr-1 is not running" in log


def test_gives_up_after_max_attempts_and_leaves_nothing(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **GIVE_UP_AFTER_TWO)
    fake_container.behave(container_1_count_3="crash")
    executor = fake_container.executor(1)
    assert executor.wait(timeout=120) == 1
    assert len(fake_container.starts("container_1_count_3")) == 3
    assert not any(alive(pid) for pid in fake_container.fake_pids())
    log = fake_container.log("executor-1")
    assert "giving up on container_1_count_3: it crashed 3 times in a row" in log


def test_children_die_with_a_killed_executor(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **FAST)
    executor = fake_container.executor(2)
    wait_until(lambda: fake_container.starts("container_2_word_2"), "container 2's processes")
    executor.kill()
    executor.wait()
    wait_until(lambda: not any(alive(p) for p in fake_container.fake_pids()), "orphans to die")
    assert ipc_dirs(fake_container.root) == [ipc_dir(fake_container.root, 2)]  # for the client
    second = fake_container.executor(2)  # a successor takes the directory over
    wait_until(lambda: len(fake_container.starts("container_2_word_2")) == 2, "the successor")
    second.terminate()
    assert second.wait(timeout=60) == 0
    assert ipc_dirs(fake_container.root) == []


def test_unknown_container_fails_with_a_clear_log_line(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **FAST)
    assert fake_container.executor(7).wait(timeout=60) == 1
    assert "container 7 is not in packing plan 'fake-plan'" in fake_container.log("executor-7")


def test_stop_processes_kills_what_ignores_sigterm() -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        stop_processes({"stubborn": proc}, grace_secs=0.2)
        assert proc.returncode == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_process_ignoring_sigterm_is_killed_after_the_topologys_grace(
    fake_container: FakeContainer,
) -> None:
    # heron.executor.stop.grace.secs is the executor's wait between SIGTERM and SIGKILL (the
    # default, 10 s, would not appear in the warning)
    write_topology(fake_container, **FAST, **{"heron.executor.stop.grace.secs": 0.5})
    fake_container.behave(tmanager="ignore_term")
    executor = fake_container.executor(0)
    wait_until(lambda: fake_container.starts("tmanager"), "the tmanager")
    pid = fake_container.starts("tmanager")[0]
    executor.send_signal(signal.SIGTERM)
    assert executor.wait(timeout=60) == 0
    assert not alive(pid)
    log = fake_container.log("executor-0")
    assert f"tmanager (pid {pid}) did not stop within 0.5 s of SIGTERM: SIGKILL" in log
    assert f"tmanager (pid {pid}) exited with signal SIGKILL" in log
