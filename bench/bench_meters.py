"""What the benchmark measures besides time: peak RSS per process kind, and the CPU time of a
set of processes over an interval."""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable

import psutil

Processes = Callable[[], list[psutil.Process]]
"""Returns the live processes to measure (asked again at every sample)."""


class RssSampler(threading.Thread):
    """Samples the RSS of ``processes()`` every 0.25 s until ``stop`` is set: the peak per kind
    (``kind(process)``) and the peak of their sum (``peak_total``), in MiB."""

    def __init__(self, processes: Processes, kind: Callable[[psutil.Process], str]) -> None:
        super().__init__(daemon=True)
        self.processes = processes
        self.kind = kind
        self.peak: dict[str, float] = defaultdict(float)
        self.peak_total = 0.0
        self._kinds: dict[int, str] = {}  # by pid: a process's kind is read from /proc once
        self.stop = threading.Event()

    def run(self) -> None:
        self._sample()
        while not self.stop.wait(0.25):
            self._sample()

    def _sample(self) -> None:
        total = 0.0
        for process in self.processes():
            try:
                mb = process.memory_info().rss / 2**20
                kind = self._kinds.get(process.pid) or self._kinds.setdefault(
                    process.pid, self.kind(process)
                )
            except psutil.Error:
                continue
            total += mb
            self.peak[kind] = max(self.peak[kind], mb)
        self.peak_total = max(self.peak_total, total)

    def result(self) -> dict[str, float]:
        """Stops sampling after a last sample; the peaks per kind and ``"all processes"``."""
        self.stop.set()
        self.join()
        self._sample()
        return {**self.peak, "all processes": self.peak_total}


class CpuMeter:
    """CPU seconds (user + system, with reaped children's) that ``processes()`` spent between
    `start` and `stop`; a process that appeared in between counts from zero, one that
    vanished in between counts only through its parent's reaped-children times."""

    def __init__(self, processes: Processes) -> None:
        self.processes = processes
        self.begin: dict[int, float] = {}

    def _snapshot(self) -> dict[int, float]:
        times = {}
        for process in self.processes():
            with contextlib.suppress(psutil.Error):
                t = process.cpu_times()
                times[process.pid] = t.user + t.system + t.children_user + t.children_system
        return times

    def start(self) -> None:
        self.begin = self._snapshot()

    def stop(self) -> float:
        return sum(t - self.begin.get(pid, 0.0) for pid, t in self._snapshot().items())
