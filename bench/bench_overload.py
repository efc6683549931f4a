"""Memory under sustained overload (issue 21, item 2): a bolt 10x slower than its spout.

One spout task offers ``--rate`` tuples/s (a sequence number and a payload of ``--payload``
bytes) for ``--seconds``; one bolt task takes at most a tenth of that (``rate / 10`` tuples/s:
it sleeps to keep to it), on another container, so every tuple crosses both stream managers
(TCP between them). Acking is off (at-most-once): no max spout pending holds the spout, only
back pressure. Every second the total RSS of all the topology's processes (executors,
stream managers, topology and metrics managers, instances) is sampled. When the spout has
stopped, the run waits until the bolt has processed every tuple the spout emitted, then checks:
the bolt saw each sequence number once, in order (no gap, no repeat), and the stream managers
lost nothing (their ``__server/__batches_to_stmgrs_lost`` metric, summed over every interval
published, and no "no route" or "refuses" line in their logs).

    .venv/bin/python bench/bench_overload.py              # 60 s, records an entry
    .venv/bin/python bench/bench_overload.py --seconds 10 --no-record

Prints the figures and, unless ``--no-record``, appends a dated entry to bench/RESULTS.md.
The target: peak total RSS under 500 MB, nothing dropped.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from heron_core.api import Bolt, Grouping, Spout, Tuple

PAYLOAD = 1000
RATE = 20_000.0
SECONDS = 60.0
TARGET_MB = 500.0
"""Peak total RSS target, in MB (10**6 bytes; RSS is sampled in MiB)."""
MIB_MB = 2**20 / 10**6


def _write(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)  # a reader never sees half a file


class OfferingSpout(Spout):
    """Emits ``(seq, payload)`` at ``rate`` tuples/s for ``seconds``, as far as back pressure
    lets it; then writes how many it emitted to ``<directory>/emitted``."""

    outputs = ["seq", "payload"]

    def __init__(self, rate: float, seconds: float, payload: int, directory: str) -> None:
        self.rate = rate
        self.seconds = seconds
        self.payload_bytes = payload
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.payload = "p" * self.payload_bytes
        self.seq = 0
        self.start = 0.0
        self.done = False

    def next_tuple(self) -> None:
        if self.done:
            time.sleep(0.01)
            return
        now = time.monotonic()
        if not self.start:
            self.start = now
            _write(Path(self.directory) / "started", repr(time.time()))
        elapsed = now - self.start
        if elapsed >= self.seconds:
            self.done = True
            _write(Path(self.directory) / "emitted", str(self.seq))
            return
        due = int(elapsed * self.rate) + 1
        while self.seq < due:  # what the pace allows now; the loop stops at back pressure
            # a new string per tuple (marshal writes a repeated object once per batch)
            self.emit([self.seq, f"{self.seq:>12}{self.payload[12:]}"])
            self.seq += 1
            if self.seq % 256 == 0:
                return


class SlowBolt(Bolt):
    """Processes at most ``rate`` tuples/s (sleeping when ahead); checks the sequence numbers
    arrive once each, in order; writes ``processed gaps repeats`` to ``<directory>/processed``
    every 0.5 s while tuples come, at each tick tuple and at close."""

    def __init__(self, rate: float, directory: str) -> None:
        self.rate = rate
        self.directory = directory

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.expected = 0
        self.processed = 0
        self.gaps = 0
        self.repeats = 0
        self.next_at = 0.0
        self.written_at = 0.0

    def process(self, tup: Tuple) -> None:
        seq = tup.values[0]
        if seq > self.expected:
            self.gaps += seq - self.expected
        elif seq < self.expected:
            self.repeats += 1
        self.expected = max(self.expected, seq + 1)
        self.processed += 1
        now = time.monotonic()
        if not self.next_at:
            self.next_at = now
        self.next_at += 1.0 / self.rate
        if self.next_at - now > 0.002:
            time.sleep(self.next_at - now)
        if now - self.written_at > 0.5:
            self._record()
            self.written_at = now

    def process_tick(self, tup: Tuple) -> None:
        self._record()

    def _record(self) -> None:
        text = f"{self.processed} {self.gaps} {self.repeats}"
        _write(Path(self.directory) / "processed", text)

    def close(self) -> None:
        self._record()


def _read_ints(path: Path) -> list[int] | None:
    try:
        return [int(x) for x in path.read_text().split()]
    except (OSError, ValueError):
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=SECONDS, help="how long the spout offers")
    parser.add_argument("--rate", type=float, default=RATE, help="tuples/s the spout offers")
    parser.add_argument("--payload", type=int, default=PAYLOAD, help="bytes of each tuple")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    result = run(args.seconds, args.rate, args.payload)
    print(result["table"])
    if not args.no_record:
        record(result, args)
    return 0 if result["ok"] else 1


def run(seconds: float, rate: float, payload: int) -> dict[str, Any]:
    import shutil
    import tempfile

    import psutil

    root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(root / "topologies"), str(root / "bench")]
    from bench_harness import _processes, process_kind
    from bench_overload import OfferingSpout, SlowBolt  # importable by the instances too

    from heron_core.api import TopologyBuilder
    from heron_core.testing.cluster import TopologyRun

    work = Path(tempfile.mkdtemp(prefix="heron-overload-"))
    code = work / "code"
    code.mkdir()
    shutil.copy(Path(__file__), code / "bench_overload.py")
    marks = work / "marks"
    marks.mkdir()
    b = TopologyBuilder("overload-bench")
    spout = b.add_spout("offer", OfferingSpout(rate, seconds, payload, str(marks)))
    b.add_bolt("slow", SlowBolt(rate / 10, str(marks)), inputs={spout: Grouping.SHUFFLE})
    config = {
        "topology.reliability.mode": "ATMOST_ONCE",
        "heron.metrics.export.interval.sec": 1.0,
        "topology.tick.tuple.freq.secs": 1.0,
    }
    samples: list[tuple[float, float, dict[str, float]]] = []
    latest: dict[str, dict[str, float]] = {}  # publisher -> its metrics' all-time values
    try:
        with TopologyRun(
            b.build(), heron_home=work / "home", code_root=code, containers=2, config=config
        ) as run:
            began = time.monotonic()

            def sample() -> None:
                total = 0.0
                kinds: dict[str, float] = {}
                for process in _processes(run):
                    try:
                        mb = process.memory_info().rss / 2**20
                        kind = process_kind(process)
                    except psutil.Error:
                        continue
                    total += mb
                    kinds[kind] = kinds.get(kind, 0.0) + mb
                samples.append((time.monotonic() - began, total, kinds))
                for message in run.metrics():  # the tmanager's all-time values
                    values = {d.name: float(d.value or 0) for d in message.metrics}
                    latest[message.publisher.instance_id] = values

            emitted: list[int] | None = None
            processed: list[int] | None = None
            deadline = time.monotonic() + seconds + 600
            while True:
                tick = time.monotonic()
                sample()
                emitted = _read_ints(marks / "emitted")
                processed = _read_ints(marks / "processed")
                if emitted and processed and processed[0] >= emitted[0]:
                    break
                if time.monotonic() > deadline:
                    print(run.dump_logs(), file=sys.stderr)
                    break
                time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
            time.sleep(2.5)  # the last metrics intervals
            sample()
            processed = _read_ints(marks / "processed")
            logs = run.logs()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    stmgr_logs = "\n".join(text for name, text in logs.items() if "stmgr" in name)
    complaints = [
        line
        for line in stmgr_logs.splitlines()
        if "no route" in line or "refuse" in line or "malformed" in line
    ]

    def total(prefix: str) -> float:
        return sum(v for m in latest.values() for k, v in m.items() if k.startswith(prefix))

    lost = total("__server/__batches_to_stmgrs_lost")
    bp_ms = total("__server/__time_spent_back_pressure_initiated")
    peak = max(s[1] for s in samples)
    at_peak = max(samples, key=lambda s: s[1])
    n_emitted = emitted[0] if emitted else -1
    n_processed, gaps, repeats = processed if processed else (-1, -1, -1)
    ok = (
        peak * MIB_MB < TARGET_MB
        and n_emitted > 0
        and n_processed == n_emitted
        and gaps == 0
        and repeats == 0
        and lost == 0
        and not complaints
    )
    steady = [s[1] for s in samples if 10 <= s[0] <= seconds]
    lines = [
        f"spout offered {rate:,.0f} tuples/s of {payload} bytes for {seconds:.0f} s; the bolt "
        f"takes at most {rate / 10:,.0f}/s; acking off; 2 containers",
        f"emitted {n_emitted:,}, processed {n_processed:,}, gaps {gaps}, repeats {repeats}, "
        f"stream managers' batches lost {lost:.0f}, log complaints {len(complaints)}",
        f"back pressure initiated {bp_ms / 1000:.1f} s (summed over stream managers)",
        f"total RSS of the topology's processes: peak {peak * MIB_MB:.0f} MB ({peak:.0f} MiB; "
        f"target < {TARGET_MB:.0f} MB), "
        f"{min(steady or [0]):.0f}-{max(steady or [0]):.0f} MiB from 10 s to the spout's end, "
        f"{len(samples)} samples",
        "at the peak (MiB): "
        + ", ".join(f"{k} {v:.0f}" for k, v in sorted(at_peak[2].items(), key=lambda kv: -kv[1])),
        "result: " + ("OK" if ok else "FAILED"),
    ]
    for line in complaints[:5]:
        lines.append(f"  stmgr: {line}")
    return {"ok": ok, "table": "\n".join(lines), "lines": lines}


def record(result: dict[str, Any], args: argparse.Namespace) -> None:
    import datetime
    import platform
    import subprocess

    import psutil

    root = Path(__file__).resolve().parent.parent
    tree = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    entry = [
        "",
        f"## overload (bench/bench_overload.py) — {datetime.date.today().isoformat()}",
        "",
        f"Machine: {psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}; tree {tree}{' + uncommitted changes' * bool(dirty)}; "
        f"load average {load} (1/5/15 min) at the end: the machine was shared with other work, "
        "which bears on rates, not on what is measured here (memory, loss). "
        f"`bench/bench_overload.py --seconds {args.seconds:g} --rate {args.rate:g} "
        f"--payload {args.payload}`.",
        "",
        *(f"- {line}" for line in result["lines"]),
        "",
    ]
    with (root / "bench" / "RESULTS.md").open("a") as out:
        out.write("\n".join(entry))


if __name__ == "__main__":
    sys.exit(main())
