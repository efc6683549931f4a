"""What the benchmark measures besides time: peak RSS per process kind, the CPU time of a set
of processes over an interval, and whether the host is idle enough to start a run."""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable

import psutil

Processes = Callable[[], list[psutil.Process]]
"""Returns the live processes to measure (asked again at every sample)."""


def with_descendants(processes: list[psutil.Process]) -> list[psutil.Process]:
    """``processes`` and every descendant of theirs alive now, found in one pass over the
    process table's parent ids (psutil's ``children(recursive=True)`` makes a pass per call)."""
    found = {p.pid: p for p in processes}
    children: dict[int, list[psutil.Process]] = {}
    for process in psutil.process_iter(["ppid"]):
        children.setdefault(process.info["ppid"], []).append(process)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child.pid not in found:
                found[child.pid] = child
                todo.append(child.pid)
    return list(found.values())


class ProcessKinds:
    """``kind(process)`` (what a process is, read from /proc) asked once per pid, for every
    meter of one run: ``by_pid`` holds the answers."""

    def __init__(self, kind: Callable[[psutil.Process], str]) -> None:
        self._kind = kind
        self.by_pid: dict[int, str] = {}

    def __call__(self, process: psutil.Process) -> str:
        found = self.by_pid.get(process.pid)
        if found is None:
            found = self.by_pid[process.pid] = self._kind(process)
        return found


class RssSampler(threading.Thread):
    """Samples the RSS of ``processes()`` every 0.25 s until ``stop`` is set: the peak per kind
    (``kind(process)``) and the peak of their sum (``peak_total``), in MiB.

    ``processes()`` is asked again only every `RESCAN_S` (and for the last sample): finding a
    topology's processes reads every process's command line in /proc (about 15 ms of CPU on
    this host), and a driver that took that every 0.25 s preempted a topology instance on a
    2-core machine often enough to show in the paced cases' p99 latency. In between, the RSS
    of the processes found last is read (about 0.02 ms each)."""

    RESCAN_S = 2.0

    def __init__(self, processes: Processes, kind: ProcessKinds) -> None:
        super().__init__(daemon=True)
        self.processes = processes
        self.kind = kind
        self.peak: dict[str, float] = defaultdict(float)
        self.peak_total = 0.0
        self.stop = threading.Event()
        self._known: list[psutil.Process] = []
        self._scanned = -math.inf

    def run(self) -> None:
        # the lowest priority for this thread only (Linux's setpriority takes a thread id): a
        # sample may come late, but never ahead of the topology it measures
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        self._sample()
        while not self.stop.wait(0.25):
            self._sample()

    def _sample(self, rescan: bool = False) -> None:
        now = time.monotonic()
        if rescan or now - self._scanned >= self.RESCAN_S:
            self._known, self._scanned = self.processes(), now
        total = 0.0
        for process in self._known:
            try:
                mb = process.memory_info().rss / 2**20
                kind = self.kind(process)
            except psutil.Error:
                continue
            total += mb
            self.peak[kind] = max(self.peak[kind], mb)
        self.peak_total = max(self.peak_total, total)

    def result(self) -> dict[str, float]:
        """Stops sampling after a last sample; the peaks per kind and ``"all processes"``."""
        self.stop.set()
        self.join()
        self._sample(rescan=True)
        return {**self.peak, "all processes": self.peak_total}


class CpuMeter:
    """CPU seconds (user + system, with reaped children's) that ``processes()`` spent between
    `start` and `stop`; a process that appeared in between counts from zero, one that
    vanished in between counts only through its parent's reaped-children times. With
    ``kind`` (the `ProcessKinds` its run's `RssSampler` uses too), `stop` also leaves the
    seconds per process kind in ``by_kind``."""

    def __init__(self, processes: Processes, kind: ProcessKinds | None = None) -> None:
        self.processes = processes
        self.kind = kind
        self.begin: dict[int, float] = {}
        self.by_kind: dict[str, float] = {}

    def _snapshot(self) -> dict[int, float]:
        times = {}
        for process in self.processes():
            with contextlib.suppress(psutil.Error):
                t = process.cpu_times()
                times[process.pid] = t.user + t.system + t.children_user + t.children_system
                if self.kind is not None:
                    self.kind(process)
        return times

    def start(self) -> None:
        self.begin = self._snapshot()

    def stop(self) -> float:
        spent = {pid: t - self.begin.get(pid, 0.0) for pid, t in self._snapshot().items()}
        by_kind: defaultdict[str, float] = defaultdict(float)
        kinds = self.kind.by_pid if self.kind is not None else {}
        for pid, seconds in spent.items():
            if pid in kinds:
                by_kind[kinds[pid]] += seconds
        self.by_kind = dict(by_kind)
        return sum(spent.values())


class IdleGate:
    """Holds each run back until the host is idle: until its CPUs were busy less than
    ``busy_percent`` of a ``sample_s`` interval (all processes, psutil), for at most
    ``limit_s`` seconds, after which the run starts anyway. On a host shared with other work,
    the same run swings by 2x when a test suite starts next to it; this keeps most runs out
    of such bursts. ``limit_s`` 0 turns it off.

    >>> gate = IdleGate(0.0)
    >>> gate.wait(), gate.summary()
    (None, '')
    """

    def __init__(self, limit_s: float, busy_percent: float = 15.0, sample_s: float = 2.0) -> None:
        self.limit_s = limit_s
        self.busy_percent = busy_percent
        self.sample_s = sample_s
        self.runs = 0
        self.waited_s = 0.0
        self.busy_starts = 0

    def wait(self) -> None:
        """Return once the host is idle, or after ``limit_s`` (saying so when it waits)."""
        if self.limit_s <= 0:
            return
        self.runs += 1
        began = time.monotonic()
        said = False
        while (busy := psutil.cpu_percent(interval=self.sample_s)) >= self.busy_percent:
            waited = time.monotonic() - began
            if waited > self.limit_s:
                self.busy_starts += 1
                print(f"  the host is still busy ({busy:.0f}% CPU); the run starts", flush=True)
                break
            if not said:
                print(f"  waiting for an idle host ({busy:.0f}% CPU)", flush=True)
                said = True
        self.waited_s += time.monotonic() - began

    def summary(self) -> str:
        """A sentence for the results entry ('' when off)."""
        if self.limit_s <= 0:
            return ""
        return (
            f"Each run waited for an idle host (CPU below {self.busy_percent:.0f}% over "
            f"{self.sample_s:.0f} s, at most {self.limit_s:.0f} s): {self.waited_s:.0f} s in "
            f"all for {self.runs} runs, {self.busy_starts} of which started on a busy host. "
        )
