"""The log follower: which lines of a topology's logs reach the user, and the crash reports
of the executors' status files."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from heron_core._logging import daemon_formatter
from heron_core.client import LogFollower
from heron_core.executor import StatusFile, instance_name, status_path

INSTANCE_LOG = f"{instance_name(1, 'count_bolt', 3)}.log"


def record(
    logger: str, level: int, message: str, *, role: str = "instance", exc: bool = False
) -> str:
    """One record as a daemon of topology "wc" writes it (a line end included)."""
    info = None
    if exc:
        try:
            raise FileNotFoundError(2, "No such file or directory", "words.txt")
        except FileNotFoundError:
            info = sys.exc_info()
    entry = logging.LogRecord(logger, level, __file__, 1, message, None, info)
    return daemon_formatter("wc", role, 3).format(entry) + "\n"


def follower(logs: Path, **kwargs: bool) -> tuple[LogFollower, list[str]]:
    shown: list[str] = []
    return LogFollower(logs, shown.append, **kwargs), shown


def test_user_lines_are_shown_with_component_and_task_kernel_chatter_is_not(
    tmp_path: Path,
) -> None:
    (tmp_path / INSTANCE_LOG).write_text(
        record("heron_core.instance._runtime", logging.INFO, "registered with ipc://x")
        + record("heron_core.instance._runtime", logging.INFO, "config:\nkey=1\nother=2")
        + "hello from print()\n"
        + record("pystorm.component.count_bolt", logging.INFO, "counted [1,000] words")
        + record(
            "heron.multilang",
            logging.INFO,
            "topology 'wc', component 'count_bolt', task 3: ShellLog pid 42: from storm.log",
        )
        + record("my.module", logging.DEBUG, "debugging")
        + record("heron_core.instance._router", logging.WARNING, "stream 'x' unknown")
        + record("heron_core.instance._runtime", logging.ERROR, "user code raised", exc=True)
        + "/src/bolt.py:3: UserWarning: careful\n"
    )
    (tmp_path / "executor-1.log").write_text(
        record("heron_core.executor._supervisor", logging.INFO, "started stmgr-1", role="executor")
        + record("heron_core.executor.exits", logging.WARNING, "x exited", role="executor")
        + record("kazoo.client", logging.INFO, "Connecting", role="executor")
        + record("heron_core.executor._children", logging.WARNING, "SIGKILL", role="executor")
    )
    logs, shown = follower(tmp_path, from_start=True)
    logs.poll()
    assert shown[:6] == [
        "count_bolt:3 | hello from print()",
        "count_bolt:3 | counted [1,000] words",
        "count_bolt:3 | from storm.log",
        "count_bolt:3 | DEBUG debugging",
        "count_bolt:3 | WARNING stream 'x' unknown",
        "count_bolt:3 | ERROR user code raised",
    ]
    assert shown[6] == "count_bolt:3 | Traceback (most recent call last):"
    assert "count_bolt:3 | FileNotFoundError: [Errno 2] No such file or directory: 'words.txt'" in (
        shown
    )
    assert shown[-2:] == [
        "count_bolt:3 | /src/bolt.py:3: UserWarning: careful",
        "executor-1 | WARNING SIGKILL",
    ]
    assert not [line for line in shown if "registered" in line or "key=1" in line]


def test_lines_are_shown_once_whole_and_a_last_unfinished_one_at_close(tmp_path: Path) -> None:
    log = tmp_path / INSTANCE_LOG
    log.write_text("before the follower started\n")
    logs, shown = follower(tmp_path)
    logs.poll()
    assert shown == []  # existing content is skipped unless from_start
    with log.open("a") as out:
        out.write("first\nsecond, unfin")
    logs.poll()
    assert shown == ["count_bolt:3 | first"]
    with log.open("a") as out:
        out.write("ished\nthird")
    logs.poll()
    logs.poll()
    assert shown == ["count_bolt:3 | first", "count_bolt:3 | second, unfinished"]
    logs.close()
    assert shown[-1] == "count_bolt:3 | third"


def test_a_flood_is_cut_to_a_count_per_poll(tmp_path: Path) -> None:
    (tmp_path / INSTANCE_LOG).write_text("".join(f"line {i}\n" for i in range(5000)))
    logs, shown = follower(tmp_path, from_start=True)
    logs.poll()
    assert len(shown) == 1001
    assert shown[-1].startswith("count_bolt:3 | ... 4,000 more lines not shown (see ")


def test_crashes_are_reported_from_the_status_files_with_restarts_per_component(
    tmp_path: Path,
) -> None:
    working_dir = tmp_path
    status = StatusFile(status_path(working_dir, 1))
    task = instance_name(1, "count_bolt", 3)
    status.started("stmgr-1")
    status.started(task)
    status.flush()
    logs, shown = follower(working_dir / "logs", show_logs=False)
    (working_dir / "logs" / INSTANCE_LOG).write_text("a line nobody should see\n")
    logs.poll()
    assert shown == [] and logs.restarts() == {"count_bolt": 0}

    status.exited(task, "exit status 1", crashed=True)
    status.started(task)
    status.exited("stmgr-1", "signal SIGKILL", crashed=True)
    status.flush()
    logs.poll()
    assert shown == [
        "count_bolt:3 | exited with exit status 1 (crash 1); the executor restarts it",
        "stmgr-1 | exited with signal SIGKILL (crash 1); the executor restarts it",
    ]
    assert logs.restarts() == {"count_bolt": 1}

    status.exited(task, "exit status 1", crashed=True)
    status.gave_up(task)
    status.flush()
    logs.poll()
    assert shown[-1] == (
        "count_bolt:3 | exited with exit status 1; it crashed too often in a row: executor-1 "
        "gives up and container 1 is started again"
    )
    logs.poll()
    assert len(shown) == 3


def test_what_an_instance_process_writes_is_shown_as_it_comes(tmp_path: Path) -> None:
    """A process logging as instances do (the daemon format to stderr, stdout line-buffered,
    both appended to its log) prints, logs and dies of an uncaught error."""
    script = textwrap.dedent(
        """
        import logging, sys, warnings
        from heron_core._logging import configure_daemon_logging
        configure_daemon_logging("wc", "instance", 3)
        sys.stdout.reconfigure(line_buffering=True)
        logging.getLogger("heron_core.instance._runtime").info("started")
        print("printed")
        logging.getLogger("user").info("logged")
        warnings.warn("careful")
        logging.getLogger("heron_core.instance._runtime").info("stopping")
        raise KeyError("boom")
        """
    )
    log = tmp_path / INSTANCE_LOG
    with log.open("ab") as out:
        done = subprocess.run(
            [sys.executable, "-c", script], stdout=out, stderr=subprocess.STDOUT, timeout=120
        )
    assert done.returncode == 1
    logs, shown = follower(tmp_path, from_start=True)
    logs.close()
    text = [line.removeprefix("count_bolt:3 | ") for line in shown]
    assert text[:3] == ["printed", "logged", "<string>:9: UserWarning: careful"]
    assert text[-1] == "KeyError: 'boom'"
    assert "Traceback (most recent call last):" in text
    assert not [line for line in text if line in ("started", "stopping")]


def test_a_follower_far_behind_jumps_to_the_end_at_a_whole_line(tmp_path: Path) -> None:
    line = "x" * 99 + "\n"  # 100 bytes
    log = tmp_path / INSTANCE_LOG
    log.write_text(line * 100_000)  # 10 MB
    logs, shown = follower(tmp_path, from_start=True)
    logs.poll()
    assert re.fullmatch(r"count_bolt:3 \| \.\.\. [\d,]+ bytes not shown \(see .*\)", shown[0])
    assert set(shown[1:1000]) == {"count_bolt:3 | " + line.strip()}
    assert shown[-1].startswith("count_bolt:3 | ... 9,486 more lines not shown")
    with log.open("a") as out:
        out.write("caught up\n")
    logs.poll()
    assert shown[-1] == "count_bolt:3 | caught up"
