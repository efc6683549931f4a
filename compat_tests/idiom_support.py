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
from collections.abc import Callable, Iterator, Sequence
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


SETTLE_S = 5.0
"""A tuple emitted this long before the stop must have reached the last bolt and been acked
(the defect this guards against held tuples for minutes). Not less: under a loaded suite this
machine's vCPUs stall for seconds (a full-suite run saw every process of the topology frozen
for 2.3 s, and a tuple emitted 2.01 s before the stop was not done)."""


@dataclass
class Records:
    """The lines the idiom components wrote under ``$IDIOM_OUT``: ``event n time``."""

    directory: Path
    events: dict[str, dict[int, list[float]]] = field(default_factory=dict)

    @classmethod
    def read(cls, directory: Path) -> Records:
        found = cls(directory)
        for path in sorted(directory.glob("*.txt")):
            # (a run still going may be writing the last line: only whole lines count)
            for line in path.read_text().split("\n")[:-1]:
                event, n, at = line.split()
                found.events.setdefault(event, {}).setdefault(int(n), []).append(float(at))
        return found

    def of(self, event: str) -> dict[int, list[float]]:
        return self.events.get(event, {})

    def summary(self) -> str:
        """A line per event: how many numbers saw it, their range, and when (for a failure)."""
        lines = []
        for event, seen in sorted(self.events.items()):
            times = [at for ats in seen.values() for at in ats]
            lines.append(
                f"{event}: {len(seen)} numbers ({min(seen)}-{max(seen)}), "
                f"{len(times)} records from {min(times):.3f} to {max(times):.3f}"
            )
        return "\n".join(lines) or "no records"

    def delays_ms(self, start: str, end: str) -> list[float]:
        """Per tuple seen at both: (first ``end`` - first ``start``) in milliseconds."""
        starts, ends = self.of(start), self.of(end)
        return [(ends[n][0] - starts[n][0]) * 1000.0 for n in starts if n in ends]


def median(values: Sequence[float]) -> float:
    assert values, "no values"
    return statistics.median(values)


def must_have_settled(emitted: dict[int, list[float]], stopped: float, sleep_ms: int) -> list[int]:
    """The tuples a run of a spout sleeping ``sleep_ms`` per emit must have settled by its stop:
    emitted over SETTLE_S before it, and followed by at least half of SETTLE_S's worth of the
    spout's own emits. The defect these runs guard against held tuples while the spout went on
    emitting; a host stall (see SETTLE_S) freezes the spout with the rest: CI saw one of 8 s at
    the end of a run, in which the spout, sleeping 100 ms, emitted 3 tuples."""
    order = sorted(emitted, key=lambda n: emitted[n][0])
    later_needed = int(SETTLE_S / 2 / (sleep_ms / 1000.0))
    return [
        n
        for index, n in enumerate(order)
        if emitted[n][0] < stopped - SETTLE_S and len(order) - 1 - index >= later_needed
    ]


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


class HeronRun:
    """``heron ARGS --heron-home HOME`` started in its own session (with ``$IDIOM_OUT`` =
    ``out`` when given), every line it prints kept with the time it was read.

    `wait` waits for a run with a time limit to end; `wait_for` waits on what a run without one
    has done, `stop` ends it as Ctrl-C does, and `kill` ends by pid whatever is left of it.
    """

    def __init__(
        self,
        *args: str,
        home: Path,
        out: Path | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.home = home
        self.command = [HERON, *args, "--heron-home", str(home)]
        environ = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        if out is not None:
            environ["IDIOM_OUT"] = str(out)
        self.lines: list[tuple[float, str]] = []  # (time.time() when read, line)
        self.proc = subprocess.Popen(
            self.command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=cwd,
            env=environ,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.time(), line.rstrip("\n")))

    @property
    def stdout(self) -> str:
        """What it printed so far."""
        return "\n".join(line for _, line in list(self.lines))

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def first(self, text: str) -> float:
        """When the first line containing ``text`` was printed."""
        for at, line in list(self.lines):
            if text in line:
                return at
        raise AssertionError(f"no line with {text!r} in:\n{self.stdout}")

    def shown(self, component: str, text: str) -> dict[int, list[str]]:
        """``{task: [the part after text, of each line of the component containing it]}``, of
        the lines its processes logged (``<component>:<task> | what it said``; ``text`` ""
        gives each line whole)."""
        found: dict[int, list[str]] = {}
        for _, line in list(self.lines):
            who, _, said = line.partition(" | ")
            name, _, task = who.partition(":")
            if name == component and task.isdigit() and text in said:
                found.setdefault(int(task), []).append(said.partition(text)[2] if text else said)
        return found

    def wait_for(self, what: str, ready: Callable[[], bool], show: Callable[[], str]) -> None:
        """Poll ``ready`` until it holds; fail (with ``show()``) when the run ends first or
        DEADLINE_S passes (then every process of the home first prints each thread's stack to
        its log, which `idiom_run` shows)."""
        deadline = time.monotonic() + DEADLINE_S
        while not ready():
            if self.proc.poll() is not None:
                pytest.fail(
                    f"{self.command} ended (exit {self.proc.returncode}) before {what}:\n{show()}"
                )
            if time.monotonic() > deadline:
                for process in processes_under(self.home):  # each prints its stacks to its log
                    with contextlib.suppress(psutil.Error):
                        process.send_signal(signal.SIGUSR1)
                pytest.fail(f"no {what} within {DEADLINE_S} s:\n{show()}")
            time.sleep(0.2)

    def wait(self) -> None:
        """Wait for the run to end (within DEADLINE_S), then for its output; a run that does
        not end prints every thread's stack, is killed, and fails the test."""
        try:
            self.proc.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGUSR1)  # heron prints every thread's stack
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
            self.kill()
            pytest.fail(f"{self.command} did not end within {DEADLINE_S} s:\n{self.stdout}")
        self._reader.join(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def stop(self) -> None:
        """SIGINT (heron run's Ctrl-C: it stops every process it started), then `wait`; it must
        exit 0."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.wait()
        assert self.proc.returncode == 0, f"{self.command} exited {self.returncode}:\n{self.stdout}"

    def kill(self) -> None:
        """SIGKILL whatever is left of the run's own session, by pid."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._reader.join(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def heron(
    *args: str, home: Path, out: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> HeronRun:
    """Run ``heron ARGS --heron-home HOME`` to its end (`HeronRun`, ``$IDIOM_OUT`` = ``out``);
    it must exit 0."""
    run = HeronRun(*args, home=home, out=out, cwd=cwd, env=env)
    run.wait()
    assert run.returncode == 0, f"{run.command} exited {run.returncode}:\n{run.stdout}"
    return run
