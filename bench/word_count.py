"""Word count through the full process model: spout -> split -> count (fields grouping).

A fixed corpus of 200,000 sentences x 10 words (2,000,000 words) from a 10,000-word vocabulary,
seeded. Cases: acking off and on, 1 and 2 containers; with acking on, also the complete latency
(p50/p99) with the spout paced at half the measured peak. Prints a table with words/s, wall time,
the peak RSS of each process kind, and a plain single-process Python loop doing the same
split-and-count on the same data; appends it to bench/RESULTS.md.

    python bench/word_count.py [--quick] [--no-record]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "topologies"), str(ROOT / "bench")]

import word_count  # noqa: E402
from bench_components import CorpusSpout  # noqa: E402

from heron_core.api import Grouping, TopologyBuilder  # noqa: E402
from heron_core.testing.cluster import TopologyRun  # noqa: E402

WORDS_PER_SENTENCE = 10
MAX_PENDING = 20_000
"""topology.max.spout.pending of the acking-on cases (``--max-pending``)."""


@dataclass
class Result:
    case: str
    words: int
    wall_s: float
    rss_mb: dict[str, float] = field(default_factory=dict)
    latency_ms: tuple[float, float] | None = None

    @property
    def rate(self) -> float:
        return self.words / self.wall_s


def plain_loop(total: int) -> Result:
    corpus = word_count.sentences(total, 42)
    start = time.perf_counter()
    counts: Counter[str] = Counter()
    for sentence in corpus:
        for word in sentence.split():
            counts[word] += 1
    wall = time.perf_counter() - start
    assert sum(counts.values()) == total * WORDS_PER_SENTENCE
    return Result("plain Python loop (1 process)", total * WORDS_PER_SENTENCE, wall)


def _kind(process: psutil.Process) -> str:
    argv = process.cmdline()
    module = next((a for a in argv if a.startswith("heron_core.")), "?").split(".")[1]
    if module == "instance" and "--component" in argv:
        return f"instance:{argv[argv.index('--component') + 1]}"
    return module


class RssSampler(threading.Thread):
    """Peak RSS per process kind, sampled every 0.25 s."""

    def __init__(self, run: TopologyRun) -> None:
        super().__init__(daemon=True)
        self.run_ = run
        self.peak: dict[str, float] = defaultdict(float)
        self.peak_total = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.25):
            total = 0.0
            for process in self.run_.processes():
                try:
                    mb = process.memory_info().rss / 2**20
                    kind = _kind(process)
                except psutil.Error:
                    continue
                total += mb
                self.peak[kind] = max(self.peak[kind], mb)
            self.peak_total = max(self.peak_total, total)


def topology(total: int, reliable: bool, rate: float | None, directory: Path) -> Any:
    b = TopologyBuilder("wordcount-bench")
    spout = b.add_spout("sentence", CorpusSpout(total, reliable, rate, str(directory)), par=1)
    split = b.add_bolt("split", word_count.SplitBolt, par=1, inputs={spout: Grouping.SHUFFLE})
    b.add_bolt("count", word_count.CountBolt, par=1, inputs={split: Grouping.fields("word")})
    return b.build()


def sparse_topology(total: int, multilang: bool) -> Any:
    from bench_sparse import SparseWordCount

    from storm_compat.streamparse import topology_class_plan

    return topology_class_plan(
        SparseWordCount,
        "sparse-bench",
        {"bench.sentences": total, "topology.reliability.mode": "ATMOST_ONCE"},
        multilang=multilang,
    )


def run_case(
    label: str,
    total: int,
    containers: int,
    acking: bool,
    rate: float | None = None,
    frontend: str = "native",
) -> Result:
    work = Path(tempfile.mkdtemp(prefix="heron-bench-"))
    code = work / "code"
    code.mkdir()
    for source in (
        "topologies/word_count.py",
        "bench/bench_components.py",
        "bench/bench_sparse.py",
    ):
        shutil.copy(ROOT / source, code)
    words = total * WORDS_PER_SENTENCE
    config = {
        "heron.metrics.export.interval.sec": 0.1,
        "topology.reliability.mode": "ATLEAST_ONCE" if acking else "ATMOST_ONCE",
        "topology.max.spout.pending": MAX_PENDING if acking else None,
        "topology.message.timeout.secs": 120,
    }
    if frontend == "native":
        plan = topology(total, acking, rate, work)
    else:
        plan = sparse_topology(total, multilang=frontend == "multilang")
    try:
        with TopologyRun(
            plan, heron_home=work / "home", code_root=code, containers=containers, config=config
        ) as run:
            sampler = RssSampler(run)
            sampler.start()
            try:
                run.wait_until(
                    lambda: run.counter("sentence", "__emit-count") > 0, "first emit", 120
                )
                start = time.perf_counter()
                run.wait_until(
                    lambda: run.counter("count", "__execute-count") >= words, "all words", 600
                )
                wall = time.perf_counter() - start
                latency = None
                if acking:
                    run.wait_until(lambda: any(work.glob("latency-*.json")), "all acks", 600)
                    values = sorted(
                        v for p in work.glob("latency-*.json") for v in json.loads(p.read_text())
                    )
                    assert len(values) == total, (len(values), total)
                    latency = (
                        statistics.median(values) * 1000,
                        values[int(0.99 * (len(values) - 1))] * 1000,
                    )
            finally:
                sampler.stop.set()
                sampler.join()
            result = Result(label, words, wall, dict(sampler.peak), latency)
            result.rss_mb["all processes"] = sampler.peak_total
            return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min)"


def machine() -> str:
    versions = ", ".join(
        f"{p} {metadata.version(p)}" for p in ("pyzmq", "protobuf") if _installed(p)
    )
    return (
        f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}, {versions}"
    )


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
        return True
    except metadata.PackageNotFoundError:
        return False


def table(results: list[Result], baseline: Result) -> str:
    lines = [
        "| case | words | wall s | words/s | vs plain loop | complete latency p50/p99 ms | "
        "peak RSS MB (per kind; all processes) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in [baseline, *results]:
        rss = "; ".join(f"{k} {v:.0f}" for k, v in sorted(r.rss_mb.items())) or "-"
        lat = f"{r.latency_ms[0]:.1f} / {r.latency_ms[1]:.1f}" if r.latency_ms else "-"
        lines.append(
            f"| {r.case} | {r.words:,} | {r.wall_s:.2f} | {r.rate:,.0f} | "
            f"{r.rate / baseline.rate:.3f} | {lat} | {rss} |"
        )
    native = next((r for r in results if r.case == "acking off, 1 container"), None)
    if native is not None:
        for r in results:
            if r.case.startswith("streamparse"):
                lines.append(f"\nnative / {r.case}: {native.rate / r.rate:.2f}x")
    return "\n".join(lines)


def main() -> None:
    global MAX_PENDING  # the --max-pending flag sets the module's setting
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 sentences, fewer cases")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    parser.add_argument(
        "--max-pending",
        type=int,
        default=20_000,
        help="topology.max.spout.pending with acking on (default 20,000)",
    )
    args = parser.parse_args()
    MAX_PENDING = args.max_pending
    total = 50_000 if args.quick else 200_000
    load_before = load()
    baseline = plain_loop(total)
    print(f"plain loop: {baseline.rate:,.0f} words/s", flush=True)
    cases = [("acking off, 1 container", 1, False), ("acking on, 1 container", 1, True)]
    if not args.quick:
        cases += [("acking off, 2 containers", 2, False), ("acking on, 2 containers", 2, True)]
    results = []
    for label, frontend, sentences_ in (
        ("streamparse components in-process, acking off, 1 container", "sparse", total),
        (
            "streamparse components as multilang subprocesses, acking off, 1 container",
            "multilang",
            total // 20,
        ),
    ):
        result = run_case(label, sentences_, 1, False, frontend=frontend)
        print(f"{label}: {result.rate:,.0f} words/s in {result.wall_s:.2f} s", flush=True)
        results.append(result)
    for label, containers, acking in cases:
        result = run_case(label, total, containers, acking)
        print(f"{label}: {result.rate:,.0f} words/s in {result.wall_s:.2f} s", flush=True)
        results.append(result)
        if acking and containers == 1:
            half = result.rate / 2 / WORDS_PER_SENTENCE
            paced = run_case(
                f"acking on, 1 container, paced at half peak ({half * 10:,.0f} words/s)",
                total // 4,
                1,
                True,
                rate=half,
            )
            print(f"{paced.case}: p50/p99 {paced.latency_ms} ms", flush=True)
            results.append(paced)
    text = table(results, baseline)
    print(text)
    if not args.no_record:
        stamp = datetime.date.today().isoformat()
        with (ROOT / "bench" / "RESULTS.md").open("a") as out:
            out.write(
                f"\n## word_count {'(quick) ' if args.quick else ''}— {stamp}\n\n"
                f"Machine: {machine()}; {load_before} before, {load()} after. Corpus: "
                f"{total:,} sentences x 10 words, vocabulary 10,000, seed 42. Parallelism 1 per "
                f"component; one process per task.\n\n"
                f"{text}\n"
            )


if __name__ == "__main__":
    main()
