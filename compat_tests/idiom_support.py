"""Running idiom topologies the way their users do: the installed ``heron`` command in a
subprocess, every line it prints timestamped as it arrives, every process it started checked
gone afterwards, and the daemons' logs printed when a test fails.

The idiom components record what they do (emits, acks, fails, arrivals, each with
``time.time()``) as lines ``event n time`` in files under ``$IDIOM_OUT``; `Records` reads them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from compat_support import logs_under, processes_under

IDIOMS = Path(__file__).resolve().parent / "idioms"
HERON = str(Path(sys.executable).with_name("heron"))
DEADLINE_S = 240.0
"""How long a run may take beyond its own time limit before the test fails (start-up on a
loaded 2-core machine can take tens of seconds)."""


@dataclass
class Ran:
    """What one ``heron`` command printed, and when."""

    command: list[str]
    returncode: int
    lines: list[tuple[float, str]]  # (time.time() when read, line)

    @property
    def stdout(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def first(self, text: str) -> float:
        """When the first line containing ``text`` was printed."""
        for at, line in self.lines:
            if text in line:
                return at
        raise AssertionError(f"no line with {text!r} in:\n{self.stdout}")


@dataclass
class Records:
    """The lines the idiom components wrote under ``$IDIOM_OUT``: ``event n time``."""

    directory: Path
    events: dict[str, dict[int, list[float]]] = field(default_factory=dict)

    @classmethod
    def read(cls, directory: Path) -> Records:
        found = cls(directory)
        for path in sorted(directory.glob("*.txt")):
            for line in path.read_text().splitlines():
                event, n, at = line.split()
                found.events.setdefault(event, {}).setdefault(int(n), []).append(float(at))
        return found

    def of(self, event: str) -> dict[int, list[float]]:
        return self.events.get(event, {})

    def delays_ms(self, start: str, end: str) -> list[float]:
        """Per tuple seen at both: (first ``end`` - first ``start``) in milliseconds."""
        starts, ends = self.of(start), self.of(end)
        return [(ends[n][0] - starts[n][0]) * 1000.0 for n in starts if n in ends]


def median(values: Sequence[float]) -> float:
    assert values, "no values"
    return statistics.median(values)


@contextlib.contextmanager
def idiom_run(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(heron home, records directory) for one test; on failure the logs under the home are
    printed; afterwards no process of the home may be left (any that is, is killed)."""
    home, out = tmp_path / "home", tmp_path / "records"
    out.mkdir()
    try:
        yield home, out
    except BaseException:
        print(logs_under(tmp_path))
        raise
    finally:
        leftovers = processes_under(home)
        for process in leftovers:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(leftovers, timeout=30)
        assert leftovers == [], f"processes left after the run: {leftovers}"


def heron(
    *args: str, home: Path, out: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Ran:
    """Run ``heron ARGS --heron-home HOME`` to its end with ``$IDIOM_OUT`` = ``out``; every
    line it prints is kept with the time it was read."""
    command = [HERON, *args, "--heron-home", str(home)]
    environ = {**os.environ, **(env or {}), "IDIOM_OUT": str(out), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env=environ,
        start_new_session=True,
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.time(), line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)  # heron prints every thread's stack (the hang's place)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join(10)
        assert proc.stdout is not None
        proc.stdout.close()
        pytest.fail(
            f"{command} did not end within {DEADLINE_S} s:\n" + "\n".join(line for _, line in lines)
        )
    reader.join(30)
    assert proc.stdout is not None
    proc.stdout.close()
    ran = Ran(command, proc.returncode, lines)
    assert ran.returncode == 0, f"{command} exited {ran.returncode}:\n{ran.stdout}"
    return ran
