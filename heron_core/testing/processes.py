"""Helpers for tests that start real processes: wait on a condition with a deadline, and make
sure nothing a test started outlives it.

>>> wait_until(lambda: True, "nothing")
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil

__all__ = ["isolated_home", "processes_mentioning", "wait_until"]


def wait_until(
    predicate: Callable[[], object], what: str, timeout: float = 120.0, interval: float = 0.05
) -> None:
    """Poll ``predicate`` every ``interval`` seconds until it is true.

    Raises:
        TimeoutError: naming ``what``, after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def processes_mentioning(path: Path) -> list[psutil.Process]:
    """Live (not zombie) processes with ``path`` in their command line: every daemon of a
    topology whose heron home or working directory is under ``path``."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        argv = process.info.get("cmdline") or []
        if process.info.get("status") != psutil.STATUS_ZOMBIE and any(str(path) in a for a in argv):
            found.append(process)
    return found


@contextlib.contextmanager
def isolated_home(root: Path, failed: Callable[[], bool]) -> Iterator[Path]:
    """A heron home ``root/home`` for one test. Afterwards every process still mentioning
    ``root`` is killed by pid, every log under ``root`` is printed if ``failed()`` or anything
    was left behind, and leftovers fail the test (AssertionError)."""
    yield root / "home"
    leftovers = processes_mentioning(root)
    for process in leftovers:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(leftovers, timeout=30)
    if failed() or leftovers:
        for log in sorted(root.rglob("*.log")):
            print(f"===== {log} =====\n{log.read_text(errors='replace')}")
    assert not leftovers, f"processes outlived the test: {[p.pid for p in leftovers]}"
