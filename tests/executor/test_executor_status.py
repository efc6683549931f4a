"""The executor's status file: starts, crashes and exits per process, for readers such as
``heron run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from executor_support import (  # noqa: F401 - fake_container_fixture is a fixture
    FAST,
    GIVE_UP_AFTER_TWO,
    FakeContainer,
    fake_container_fixture,
    wait_until,
    write_topology,
)

from heron_core.executor import ProcessStatus, StatusFile, read_status, status_path


def test_counts_are_written_on_flush_and_read_back_by_a_successor(tmp_path: Path) -> None:
    path = status_path(tmp_path, 1)
    status = StatusFile(path)
    status.started("stmgr-1")
    assert not path.exists()  # nothing before a flush
    status.flush()
    status.exited("stmgr-1", "signal SIGKILL", crashed=True)
    status.started("stmgr-1")
    status.exited("stmgr-1", "exit status 0", crashed=False)
    status.gave_up("stmgr-1")
    status.flush()
    assert read_status(path) == {
        "stmgr-1": ProcessStatus(starts=2, crashes=1, last_exit="exit status 0", gave_up=True)
    }
    assert read_status(path)["stmgr-1"].restarts == 1
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left

    successor = StatusFile(path)  # the scheduler started the executor again
    successor.started("stmgr-1")
    successor.flush()
    assert read_status(path)["stmgr-1"] == ProcessStatus(3, 1, "exit status 0", gave_up=False)


@pytest.mark.parametrize("text", ["", "{", "[]", '{"processes": 3}'])
def test_an_unreadable_status_file_reads_as_empty(tmp_path: Path, text: str) -> None:
    path = tmp_path / "executor-1.status.json"
    path.write_text(text)
    assert read_status(path) == {}
    path.write_text(json.dumps({"processes": {"a": {"starts": "x"}, "b": {"starts": 2}}}))
    assert read_status(path) == {"b": ProcessStatus(starts=2)}


@pytest.mark.processes
def test_the_executor_reports_a_crash_and_giving_up(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **GIVE_UP_AFTER_TWO)
    fake_container.behave(container_1_count_3="crash")
    executor = fake_container.executor(1)
    assert executor.wait(timeout=120) == 1
    status = read_status(status_path(fake_container.root, 1))
    count = status["container_1_count_3"]
    assert count == ProcessStatus(
        starts=3,
        crashes=3,
        last_exit="exit status 3",
        gave_up=True,
        pid=count.pid,
        crashes_in_a_row=3,
        last_crash=count.last_crash,
    )
    assert count.last_crash > 0 and count.last_exception == ""  # it printed no traceback
    assert count.pid == fake_container.starts("container_1_count_3")[-1]  # the newest start
    assert status["container_1_word_1"].crashes == 0
    assert status["stmgr-1"].starts == 1
    log = fake_container.log("executor-1")
    assert "heron_core.executor.exits [" in log  # exits have their own logger


@pytest.mark.processes
def test_a_restarted_instance_is_counted(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **FAST)
    fake_container.behave(container_1_count_3="crash_once")
    fake_container.executor(1)
    path = status_path(fake_container.root, 1)
    wait_until(
        lambda: read_status(path).get("container_1_count_3", ProcessStatus()).starts == 2,
        "the restart to be counted",
    )
    count = read_status(path)["container_1_count_3"]
    assert count == ProcessStatus(
        2, 1, "exit status 3", pid=count.pid, crashes_in_a_row=1, last_crash=count.last_crash
    )
    wait_until(lambda: len(fake_container.starts("container_1_count_3")) == 2, "its 2nd start")
    assert count.pid == fake_container.starts("container_1_count_3")[-1]  # the running one


@pytest.mark.processes
def test_a_crash_keeps_the_newest_exception_of_the_log(fake_container: FakeContainer) -> None:
    write_topology(fake_container, **GIVE_UP_AFTER_TWO)
    fake_container.behave(container_1_count_3="raise")
    assert fake_container.executor(1).wait(timeout=120) == 1
    count = read_status(status_path(fake_container.root, 1))["container_1_count_3"]
    assert count.crashes_in_a_row == 3 and count.last_exit == "exit status 1"
    assert count.last_exception == "ValueError: container_1_count_3: raising on purpose at start 3"
    lines = count.last_traceback.splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[-1] == count.last_exception
