"""Heron's Streamlet examples (rewritten in ``heronpy_streamlet_examples/``) run unchanged with
``heron run``: the word count with ``reduce_by_key_and_window``, and the join whose results a
``TransformOperator`` describes. What their ``log()`` stages print is checked.

Both programs run at once (two ``heron run`` processes, two heron homes) to keep the suite
short; the test waits on what they print, with a generous deadline, then stops them with
SIGINT. Every process is gone afterwards; on failure the output and the logs are printed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from compat_support import logs_under, processes_under

pytestmark = pytest.mark.processes

EXAMPLES = Path(__file__).resolve().parent / "heronpy_streamlet_examples"
HERON = str(Path(sys.executable).with_name("heron"))
DEADLINE_S = 180.0

LOGGED = re.compile(r"(?P<who>[\w-]+):\d+ \| (?P<said>.*)")
WINDOW = r"Window \{start_time: (?P<start>\d+), end_time: (?P<end>\d+)\}"
COUNT = re.compile(r"\(KeyedWindow \{key: (?P<key>\w+), window: " + WINDOW + r"\}, (?P<n>\d+)\)")
JOINED = re.compile(
    r"joined (?P<value>\w+) at KeyedWindow \{key: (?P<key>\w+), window: "
    + WINDOW
    + r"\} in partition (?P<partition>\d+)"
)


class HeronRun:
    """``heron run PROGRAM`` in its own session, its output lines collected as they come."""

    def __init__(self, program: Path, home: Path) -> None:
        self.home = home
        self.proc = subprocess.Popen(
            [HERON, "run", str(program), "--heron-home", str(home)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def said(self, component: str) -> list[str]:
        """What ``component``'s tasks logged so far."""
        found = []
        for line in list(self.lines):
            match = LOGGED.fullmatch(line)
            if match and match["who"] == component:
                found.append(match["said"])
        return found

    def stop(self) -> None:
        """SIGINT (heron run's Ctrl-C), then wait for the end of the run and its output."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=DEADLINE_S)
        self._reader.join(30)

    def kill(self) -> None:
        """End whatever is left of the run, by pid."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        leftovers = processes_under(self.home)
        for process in leftovers:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(leftovers, timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        assert leftovers == [], f"processes left by {self.home}: {leftovers}"

    def output(self) -> str:
        return "\n".join(self.lines)


def counts_per_window(run: HeronRun) -> list[tuple[str, int, int, int]]:
    """(word, window start, window end, count) of every result the word count logged."""
    found = []
    for said in run.said("log-1"):
        match = COUNT.search(said)
        assert match, f"not a word count result: {said!r}"
        found.append((match["key"], int(match["start"]), int(match["end"]), int(match["n"])))
    return found


def joins(run: HeronRun) -> list[tuple[str, str, int, int, int]]:
    """(key, joined value, window start, window end, partition) of every join result."""
    found = []
    for said in run.said("log-1"):
        match = JOINED.search(said)
        assert match, f"not a described join result: {said!r}"
        found.append(
            (
                match["key"],
                match["value"],
                int(match["start"]),
                int(match["end"]),
                int(match["partition"]),
            )
        )
    return found


def totals(found: list[tuple[str, int, int, int]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for word, _, _, n in found:
        total[word] += n
    return total


# The word count's source: "Mary had a little lamb" twice and "I love you" once, 4 rounds. With
# a 2 s window sliding every 1 s, each word is counted in exactly 2 windows.
EXPECTED = Counter({w: 2 * 8 for w in ["Mary", "had", "a", "little", "lamb"]}) + Counter(
    {w: 2 * 4 for w in ["I", "love", "you"]}
)


def test_streamlet_word_count_and_join_run_unchanged_with_heron_run(tmp_path: Path) -> None:
    runs: list[HeronRun] = []
    try:
        word_count = HeronRun(EXAMPLES / "word_count_streamlet.py", tmp_path / "word_count")
        runs.append(word_count)
        join = HeronRun(EXAMPLES / "join_streamlet_topology.py", tmp_path / "join")
        runs.append(join)

        def done() -> bool:
            values = {value for _, value, _, _, _ in joins(join)}
            return totals(counts_per_window(word_count)) == EXPECTED and {"ac", "bc"} <= values

        deadline = time.monotonic() + DEADLINE_S
        while not done():
            for run in runs:
                assert run.proc.poll() is None, f"heron run ended early:\n{run.output()}"
            if time.monotonic() > deadline:
                pytest.fail(
                    f"results incomplete after {DEADLINE_S} s:\n"
                    + "\n".join(run.output() for run in runs)
                )
            time.sleep(0.2)
        for run in runs:
            run.stop()
            assert run.proc.returncode == 0, run.output()

        # the word count: every word counted in exactly two 2 s windows, none counted more
        found = counts_per_window(word_count)
        assert totals(found) == EXPECTED
        assert {end - start for _, start, end, _ in found} == {2}
        per_window = Counter((word, start) for word, start, _, _ in found)
        assert max(per_window.values()) == 1  # one result per word and window
        assert len({start for _, start, _, _ in found}) >= 2  # the windows slide

        # the join: only key1 has values on both sides; 'x' (key2) and 'y' (key3) never join
        joined = joins(join)
        assert {(key, value) for key, value, *_ in joined} == {("key1", "ac"), ("key1", "bc")}
        assert {end - start for _, _, start, end, _ in joined} == {2}
        assert {partition for *_, partition in joined} == {0}
    except BaseException:
        for run in runs:
            print(f"===== heron run output ({run.home}) =====\n{run.output()}")
            print(logs_under(run.home))
        raise
    finally:
        for run in runs:
            run.kill()
