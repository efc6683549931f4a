"""Helpers for scheduler process tests on fake executors (tests/executor/fake_daemon.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

FAKE_DAEMON = Path(__file__).resolve().parents[1] / "executor" / "fake_daemon.py"


def wait_until(predicate: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Poll ``predicate`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def events(root: Path, name: str) -> list[tuple[str, int]]:
    """The ``(verb, pid)`` lines fake daemon ``name`` wrote under ``root``."""
    file = root / "fake" / f"{name}.events"
    lines = file.read_text().split("\n") if file.exists() else []
    return [(verb, int(pid)) for verb, pid in (line.split() for line in lines if line)]


def starts(root: Path, name: str) -> list[int]:
    """The pids fake daemon ``name`` started as, in order."""
    return [pid for verb, pid in events(root, name) if verb == "start"]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(name="root")
def root_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """The working directory; at teardown every fake daemon still alive is SIGKILLed by pid,
    and the logs are printed when the test failed."""
    failures = request.session.testsfailed
    yield tmp_path
    victims = []
    for file in (tmp_path / "fake").glob("*.events"):
        for _, pid in events(tmp_path, file.stem):
            try:
                process = psutil.Process(pid)
                if str(FAKE_DAEMON) in process.cmdline():
                    process.kill()
                    victims.append(process)
            except psutil.NoSuchProcess:
                pass
    psutil.wait_procs(victims, timeout=30)
    if request.session.testsfailed > failures:
        for log in sorted((tmp_path / "logs").glob("*.log")):
            print(f"===== {log} =====\n{log.read_text(errors='replace')}")
