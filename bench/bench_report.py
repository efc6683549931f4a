"""The benchmark's results: one `Result` per case, the table and ratios printed at the end, the
machine facts, and the entry appended to bench/RESULTS.md."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pyzmq", "protobuf", "bytewax", "pyspark", "streamparse")


class WrongResult(Exception):
    """A case processed something other than the corpus: its time does not count."""


@dataclass(frozen=True)
class Result:
    """One measured case.

    Attributes:
        case: the case id (``--only``).
        label: what ran, for the table.
        items: words (or tuples, ``unit``) processed in ``wall_s``.
        wall_s: the timed interval; ``timed`` says what it covers.
        cpu_s: CPU seconds of every process of the case over ``wall_s``.
        cpu_by_kind: ``cpu_s`` per process kind (our topology cases; else empty).
        rss_mb: peak RSS per process kind and of ``"all processes"``.
        latency_ms: complete latency p50 and p99 (reliable native spouts only).
        startup_s: the cluster cases: seconds from the start of the ``heron submit`` command
            until it returned, and until a bolt processed its first tuple.
        runs: when the case ran several times (``--repeat``), every run; this one is their
            `median`.
    """

    case: str
    label: str
    items: int
    wall_s: float
    cpu_s: float | None
    timed: str
    unit: str = "words"
    rss_mb: Mapping[str, float] = field(default_factory=dict)
    latency_ms: tuple[float, float] | None = None
    startup_s: tuple[float, float] | None = None
    runs: tuple[Result, ...] = ()
    cpu_by_kind: Mapping[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.items / self.wall_s


def median(runs: Sequence[Result]) -> Result:
    """The median of several runs of one case, with every run in its ``runs``: by p99 complete
    latency for a paced case (its rate is the pace), else by rate; of an even count, the worse
    of the two middle runs. Where that run has no CPU figure (its meter started late), the
    CPU figures are those of the median run by CPU per item among the runs that have one."""
    paced = runs[0].case.startswith("latency")

    def worse_first(r: Result) -> float:
        return -(r.latency_ms or (0.0, 0.0))[1] if paced else r.rate

    chosen = sorted(runs, key=worse_first)[(len(runs) - 1) // 2]
    metered = sorted((r for r in runs if r.cpu_s is not None), key=_cpu_per_item)
    if chosen.cpu_s is None and metered:
        middle = metered[(len(metered) - 1) // 2]
        per_item = chosen.items / middle.items
        chosen = replace(
            chosen,
            cpu_s=_cpu_per_item(middle) * chosen.items,
            cpu_by_kind={kind: s * per_item for kind, s in middle.cpu_by_kind.items()},
        )
    return replace(chosen, runs=tuple(runs))


def _cpu_per_item(result: Result) -> float:
    return (result.cpu_s or 0.0) / result.items


def verify(label: str, counts: Mapping[str, int], expected: Counter[str]) -> None:
    """Raise WrongResult unless ``counts`` are exactly ``expected`` (total and every word)."""
    total, want = sum(counts.values()), expected.total()
    wrong = sorted(w for w in expected.keys() | counts.keys() if counts.get(w) != expected[w])
    if total != want or wrong:
        examples = ", ".join(f"{w}: {counts.get(w, 0)} not {expected[w]}" for w in wrong[:3])
        raise WrongResult(
            f"{label}: counted {total:,} words, expected {want:,}; "
            f"{len(wrong)} words with a wrong count ({examples or 'none'})"
        )


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (1 min) / {five:.1f} (5 min)"


def machine() -> str:
    """Cores, RAM, CPU, Python, Java and the versions of the packages that matter."""
    cpu = next(
        (
            line.partition(":")[2].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown CPU",
    )
    versions = ", ".join(f"{p} {_version(p)}" for p in PACKAGES)
    return (
        f"{psutil.cpu_count()} cores ({cpu}), {psutil.virtual_memory().total / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}, {_java()}, {versions}; hot path {hot_path()}; "
        f"tree {_tree()}"
    )


def hot_path() -> str:
    """Whether the per-tuple modules run compiled (heron_core/_compiled.py)."""
    from heron_core._compiled import compiled_now

    states = set(compiled_now().values())
    if states == {True}:
        return "compiled (mypyc)"
    return "plain Python" if states == {False} else "partly compiled"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _java() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "no Java"
    return out.stderr.splitlines()[0].replace('"', "") if out.stderr else "Java ?"


def _tree() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head, dirty = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" + uncommitted changes" if dirty else "")


def table(results: Sequence[Result], baseline: Result | None) -> str:
    """The markdown table of ``results``; "vs plain loop" divides by ``baseline``'s rate."""
    lines = [
        "| case | items | wall s | items/s | items/s of each run | vs plain loop | "
        "CPU µs/item (per kind) | "
        "complete latency p50 / p99 ms (after warm-up; p99 of each run) | "
        "peak RSS MB (per kind; all processes) | timed |",
        "|---|---:|---:|---:|---|---:|---:|---:|---|---|",
    ]
    for r in results:
        rss = "; ".join(f"{k} {v:.0f}" for k, v in sorted(r.rss_mb.items())) or "-"
        lat = f"{r.latency_ms[0]:.1f} / {r.latency_ms[1]:.1f}" if r.latency_ms else "-"
        if r.latency_ms and len(r.runs) > 1:
            lat += " (" + ", ".join(f"{x.latency_ms[1]:.1f}" for x in r.runs if x.latency_ms) + ")"
        each = ", ".join(f"{x.rate:,.0f}" for x in r.runs) if len(r.runs) > 1 else "-"
        cpu = f"{r.cpu_s / r.items * 1e6:.2f}" if r.cpu_s is not None else "-"
        if r.cpu_s is not None and r.cpu_by_kind:
            kinds = sorted(r.cpu_by_kind.items(), key=lambda kv: -kv[1])
            cpu += " (" + "; ".join(f"{k} {v / r.items * 1e6:.2f}" for k, v in kinds) + ")"
        vs = f"{r.rate / baseline.rate:.3f}" if baseline else "-"
        lines.append(
            f"| {r.label} | {r.items:,} {r.unit} | {r.wall_s:.2f} | {r.rate:,.0f} | {each} | "
            f"{vs} | {cpu} | {lat} | {rss} | {r.timed} |"
        )
    return "\n".join(lines)


def ratios(pairs: Sequence[tuple[str, Result, Result]]) -> str:
    """One line per ``(name, numerator, denominator)``: the ratio of their rates; when both
    ran several times, the ratio of each round's runs too."""
    lines = []
    for name, a, b in pairs:
        line = f"- {name}: **{a.rate / b.rate:.2f}x** ({a.rate:,.0f} / {b.rate:,.0f} {a.unit}/s"
        if len(a.runs) > 1 and len(a.runs) == len(b.runs):
            each = ", ".join(f"{x.rate / y.rate:.2f}" for x, y in zip(a.runs, b.runs, strict=True))
            line += f"; round by round: {each}"
        lines.append(line + ")")
    return "\n".join(lines)


def record(title: str, body: str) -> Path:
    """Append the entry ``## <title> — <today>`` with ``body`` to bench/RESULTS.md; its path."""
    path = ROOT / "bench" / "RESULTS.md"
    with path.open("a") as out:
        out.write(f"\n## {title} — {datetime.date.today().isoformat()}\n\n{body}\n")
    return path
