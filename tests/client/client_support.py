"""Helpers for end-to-end client tests: a heron home whose processes are all ended by pid at
teardown, with the logs printed when the test failed."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
WORD_COUNT = ROOT / "topologies" / "word_count.py"


def wait_until(predicate: Callable[[], object], what: str, timeout: float = 120.0) -> None:
    """Poll ``predicate`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def processes_under(home: Path) -> list[psutil.Process]:
    """Live processes whose command line mentions ``home`` (every daemon of a topology in it)."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        argv = process.info.get("cmdline") or []
        if process.info.get("status") != psutil.STATUS_ZOMBIE and any(str(home) in a for a in argv):
            found.append(process)
    return found


@pytest.fixture(name="heron_home")
def heron_home_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; at teardown its processes are SIGKILLed by pid and, if the test failed,
    every log under it is printed."""
    failures = request.session.testsfailed
    home = tmp_path / "home"
    yield home
    leftovers = processes_under(home)
    for process in leftovers:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(leftovers, timeout=30)
    if request.session.testsfailed > failures or leftovers:
        for log in sorted(tmp_path.rglob("*.log")):
            print(f"===== {log} =====\n{log.read_text(errors='replace')}")
