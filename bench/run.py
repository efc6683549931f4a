"""The benchmark suite: our engine against a plain Python loop, Bytewax and PySpark, on one
seeded corpus (sentences of 10 words, vocabulary 10,000, seed 42; topologies/word_count.py);
and our word count submitted to Spark against the local scheduler, and with CurveZMQ on and
off.

Prints each case as it finishes, then a table and the ratios, and appends a dated entry with the
machine facts to bench/RESULTS.md. `make bench` runs the quick set, `make bench-full` all cases;
bench/README.md says what each case measures.

    .venv/bin/python bench/run.py [--quick] [--repeat N] [--no-record] [--only CASE...]
                                  [--max-pending N] [--against REV] [--wait-idle SECONDS]
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "topologies"), str(ROOT / "bench")]

from bench_clusters import StateServer, cluster_case, run_cluster  # noqa: E402
from bench_harness import SINKS_KEY, TopologyCase, run_topology  # noqa: E402
from bench_meters import IdleGate  # noqa: E402
from bench_peers import PEERS, run_peers  # noqa: E402
from bench_report import (  # noqa: E402
    Result,
    hot_path,
    load,
    machine,
    median,
    ratios,
    record,
    table,
)
from word_count import WORDS_PER_SENTENCE, sentences  # noqa: E402

from heron_core._compiled import pure_python_forced  # noqa: E402
from heron_core.config import REGISTRY  # noqa: E402

FRONTENDS = {
    "native": "native API",
    "batch": "native API, whole batches (Bolt.process_batch)",
    "storm": "Storm facade (BaseRichSpout, BaseBasicBolt)",
    "sparse": "streamparse components in-process",
    "multilang": "streamparse components as multilang subprocesses",
}
MULTILANG_SHARE = 20
"""The multilang cases run on 1/20 of the corpus (they are about 100x slower)."""
LATENCY_LOADS = (25, 50, 90)
"""Percentages of the peak rate (of native-on-1) the latency cases pace the spout at."""
FIXED_LATENCY = "latency-100k"
"""The latency case at a fixed 100,000 words/s: half of issue 4's 200,000 words/s target."""
WORD_COUNT = [f"{f}-{a}-{c}" for f in FRONTENDS for c in (1, 2) for a in ("off", "on")]
CLUSTER = ["cluster-local", "cluster-spark"]
"""The word count submitted with ``heron submit`` to the local scheduler and to Spark
``local[2]`` (bench_clusters.py): throughput and submit-to-first-tuple time."""
CLUSTER_ACKING = True
"""The cluster cases run acking on: at least once is the default, and the mode a topology on
Spark runs in to survive a lost container."""
CURVE = ["curve-off", "curve-on"]
"""The native word count, acking off, on 2 containers (tuples cross TCP between the stream
managers) with ``heron.network.curve.enabled`` false / true."""
CURVE_KEY = "heron.network.curve.enabled"
METRICS = ["metrics-min", "metrics-all"]
"""The native word count, acking off, on 2 containers, with only the ``tmanager`` sink (what
the engine itself needs: the runs are timed by the tmanager's metrics) / with every default sink
of ``heron.metrics.sinks`` (tmanager, file, prometheus)."""
STATEFUL = ["stateful-amo", "stateful-alo", "stateful-eo"]
"""The native word count with a stateful spout (its position) and count bolt (its table), 2
containers: at most once (acking off) / at least once (acking on; the state hooks are not
called in either) / effectively once with a checkpoint every `CHECKPOINT_S` (every state saved,
markers aligned; no acking)."""
CHECKPOINT_S = 1.0
PAIRS = (
    ("cluster-spark", "cluster-local"),
    ("curve-on", "curve-off"),
    ("metrics-all", "metrics-min"),
    ("stateful-eo", "stateful-alo"),
)
"""(numerator, denominator) of the paired cases (cluster, CURVE, metrics sinks, stateful); each
pair runs back to back, in alternating order from round to round (`in_round_order`)."""
MORE_RATIOS = (
    ("stateful-eo", "stateful-amo"),
    ("native-on-1", "native-off-1"),
    ("batch-on-1", "batch-off-1"),
    ("batch-off-1", "native-off-1"),
)
"""Ratios reported beside those of `PAIRS` (cases that are not run as a pair)."""
ALL = [
    "loop",
    "bytewax",
    *WORD_COUNT[:2],
    *(f"latency-{p}" for p in LATENCY_LOADS),
    FIXED_LATENCY,
    *WORD_COUNT[2:],
    "identity-off",
    "identity-on",
    "spark-rdd",
    "spark-ss",
    *CLUSTER,
    *CURVE,
    *METRICS,
    *STATEFUL,
]
QUICK = [
    "loop",
    "bytewax",
    "native-off-1",
    "native-on-1",
    "batch-off-1",
    "batch-on-1",
    "latency-50",
    FIXED_LATENCY,
    "storm-off-1",
    "sparse-off-1",
    "identity-on",
    "spark-rdd",
    "spark-ss",
    *CLUSTER,
    *CURVE,
    *METRICS,
    *STATEFUL,
]


def topology_case(case: str, total: int, peak: Result | None) -> TopologyCase:
    """The topology run of case id ``case`` on ``total`` sentences (``peak``: the first result
    of native-on-1, for the latency cases)."""
    kind, _, rest = case.partition("-")
    if case == FIXED_LATENCY:
        rate = int(rest.removesuffix("k")) * 1000 / WORDS_PER_SENTENCE
        label = (
            f"native API, acking on, 1 container, paced at {rate * WORDS_PER_SENTENCE:,.0f} words/s"
        )
        return TopologyCase(case, label, "native", True, 1, total // 4, rate)
    if kind == "latency":
        assert peak is not None  # selection() puts native-on-1 before every latency case
        rate = peak.rate * int(rest) / 100 / WORDS_PER_SENTENCE
        label = (
            f"native API, acking on, 1 container, paced at {rest}% of peak "
            f"({rate * WORDS_PER_SENTENCE:,.0f} words/s)"
        )
        return TopologyCase(case, label, "native", True, 1, total // 4, rate)
    if kind == "identity":
        label = f"identity spout -> bolt -> bolt (the words as tuples), acking {rest}, 1 container"
        return TopologyCase(case, label, "identity", rest == "on", 1, total)
    if kind == "curve":
        on = rest == "on"
        label = (
            f"native API, acking off, 2 containers, CURVE {rest} ({CURVE_KEY}={str(on).lower()})"
        )
        return TopologyCase(case, label, "native", False, 2, total, config={CURVE_KEY: on})
    if kind == "metrics":
        sinks = dict(REGISTRY[SINKS_KEY].default)
        if rest == "min":
            sinks["sinks"] = ["tmanager-sink"]
        label = f"native API, acking off, 2 containers, metrics sinks: {', '.join(sinks['sinks'])}"
        return TopologyCase(case, label, "native", False, 2, total, config={SINKS_KEY: sinks})
    if kind == "stateful":
        if rest in ("amo", "alo"):
            acking = rest == "alo"
            label = (
                f"stateful native word count, at {'least' if acking else 'most'} once "
                f"(acking {'on' if acking else 'off'}), 2 containers"
            )
            return TopologyCase(case, label, "stateful", acking, 2, total)
        label = (
            f"stateful native word count, effectively once, a checkpoint every "
            f"{CHECKPOINT_S:g} s, 2 containers"
        )
        config = {
            "topology.reliability.mode": "EFFECTIVELY_ONCE",
            "topology.stateful.checkpoint.interval.seconds": CHECKPOINT_S,
        }
        return TopologyCase(case, label, "stateful", False, 2, total, config=config)
    acking, containers = rest.split("-")
    label = f"{FRONTENDS[kind]}, acking {acking}, {containers} container"
    label += "s" if containers != "1" else ""
    if kind == "multilang":
        total //= MULTILANG_SHARE
        label += f" (1/{MULTILANG_SHARE} of the corpus)"
    return TopologyCase(case, label, kind, acking == "on", int(containers), total)


def selection(patterns: list[str] | None, quick: bool) -> list[str]:
    """The case ids to run, in the suite's order: ``patterns`` (shell-style) matched against
    every case, else the quick set or every case; native-on-1 is added before latency cases."""
    if not patterns:
        return list(QUICK if quick else ALL)
    for pattern in patterns:
        if not fnmatch.filter(ALL, pattern):
            raise SystemExit(f"--only {pattern!r} matches no case; the cases: {' '.join(ALL)}")
    chosen = {c for c in ALL if any(fnmatch.fnmatch(c, p) for p in patterns)}
    if any(c.startswith("latency-") and c != FIXED_LATENCY for c in chosen):
        chosen.add("native-on-1")
    return [c for c in ALL if c in chosen]


def in_round_order(cases: list[str], round_number: int) -> list[str]:
    """``cases`` in the order of round ``round_number`` (from 1): in every even round the two
    cases of each of `PAIRS` swap places, so that neither always runs first (on a warmer or a
    quieter host)."""
    if round_number % 2:
        return cases
    swap = {}
    for a, b in PAIRS:
        if a in cases and b in cases:
            swap[a], swap[b] = b, a
    return [swap.get(c, c) for c in cases]


def run(
    cases: list[str],
    total: int,
    max_pending: int,
    repeat: int,
    gate: IdleGate | None = None,
) -> list[Result]:
    """Run ``cases`` in order, ``repeat`` rounds of them (so a host that slows down or speeds up
    meanwhile weighs on every case alike), printing each run as it finishes; the `median` run of
    each case (of each Bytewax configuration), in the suite's order. The latency cases are paced
    at the first native-on-1 run's rate. The cluster cases share one ZooKeeper server, started
    at the first of them and ended (by pid) when the suite ends or fails. Each run first passes
    ``gate`` (`IdleGate`: off by default)."""
    gate = gate or IdleGate(0.0)
    began = time.monotonic()
    expected = Counter(w for s in sentences(total, 42) for w in s.split())
    by_label: dict[str, list[Result]] = {}
    peak: Result | None = None

    def done(result: Result) -> None:
        by_label.setdefault(result.label, []).append(result)
        latency = f", p99 {result.latency_ms[1]:.1f} ms" if result.latency_ms else ""
        if result.startup_s:
            latency += (
                f"; heron submit returned after {result.startup_s[0]:.1f} s, first tuple "
                f"after {result.startup_s[1]:.1f} s"
            )
        print(
            f"[{time.monotonic() - began:4.0f} s] {result.label}: {result.rate:,.0f} "
            f"{result.unit}/s in {result.wall_s:.2f} s{latency}",
            flush=True,
        )

    spark = [c for c in cases if c.startswith("spark-")]
    state = StateServer()
    try:
        for round_number in range(1, repeat + 1):
            if repeat > 1:
                print(f"round {round_number} of {repeat}", flush=True)
            for case in in_round_order(cases, round_number):
                if case in PEERS:
                    if case not in spark[1:]:  # the Spark cases share one JVM
                        together = spark if case in spark else [case]
                        gate.wait()
                        for result in run_peers(together, total, expected):
                            done(result)
                    continue
                if case in CLUSTER:
                    zookeeper = state.connection_string()
                    gate.wait()
                    done(
                        run_cluster(
                            cluster_case(case, CLUSTER_ACKING, total), max_pending, zookeeper
                        )
                    )
                    continue
                gate.wait()
                result = run_topology(topology_case(case, total, peak), max_pending)
                if case == "native-on-1" and peak is None:
                    peak = result
                done(result)
    finally:
        state.close()
    return [median(runs) for runs in by_label.values()]


def _run_in_tree(tree: Path, case: str, total: int, max_pending: int) -> Result:
    """One run of topology ``case`` in a subprocess whose ``heron_core`` is the one of ``tree``
    (first on PYTHONPATH; the bench code and topologies are this tree's)."""
    with tempfile.TemporaryDirectory(prefix="bench-against-") as scratch:
        out = Path(scratch) / "result.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), *_pythonpath()])}
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--only",
            case,
            "--repeat",
            "1",
            "--sentences",
            str(total),
            "--max-pending",
            str(max_pending),
            "--no-record",
            "--result-json",
            str(out),
        ]
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        (data,) = json.loads(out.read_text())
    startup = tuple(data["startup_s"]) if data.get("startup_s") else None
    return Result(**{**data, "latency_ms": None, "startup_s": startup, "runs": ()})


def _pythonpath() -> list[str]:
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def against(
    rev: str,
    cases: list[str],
    total: int,
    max_pending: int,
    repeat: int,
    gate: IdleGate | None = None,
) -> str:
    """Run ``cases`` on this tree and on git revision ``rev`` (a temporary worktree), each run
    in a subprocess of its own, alternating trees case by case (the first tree of each round
    alternates too, so neither always runs on a warmer or quieter host); the table of both
    trees' medians and each case's ratio (this tree / ``rev``). Each run first passes ``gate``
    (`IdleGate`: off by default)."""
    gate = gate or IdleGate(0.0)
    began = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="bench-worktree-"))
    base = scratch / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), rev],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    their_path = _build_hot_path(base, rev)
    runs: dict[tuple[str, str], list[Result]] = {}
    try:
        for round_number in range(repeat):
            trees = [("this tree", ROOT), (rev, base)]
            if round_number % 2:
                trees.reverse()
            for case in cases:
                for name, tree in trees:
                    gate.wait()
                    result = _run_in_tree(tree, case, total, max_pending)
                    runs.setdefault((case, name), []).append(result)
                    print(
                        f"[{time.monotonic() - began:4.0f} s] {case} on {name}: "
                        f"{result.rate:,.0f} {result.unit}/s in {result.wall_s:.2f} s",
                        flush=True,
                    )
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
        )
        shutil.rmtree(scratch, ignore_errors=True)  # the worktree's (now empty) parent
    lines = [
        f"Hot path: this tree {hot_path()}, {rev} {their_path}.",
        "",
        f"| case | this tree ({_short('HEAD')}{'+' if _dirty() else ''}) | {rev} "
        f"({_short(rev)}) | this / {rev} |",
        "|---|---|---|---|",
    ]
    for case in cases:
        ours, theirs = median(runs[(case, "this tree")]), median(runs[(case, rev)])
        every = "; ".join(
            f"{a.rate:,.0f} / {b.rate:,.0f}"
            for a, b in zip(runs[(case, "this tree")], runs[(case, rev)], strict=True)
        )
        lines.append(
            f"| {case} | {ours.rate:,.0f} {ours.unit}/s | {theirs.rate:,.0f} {theirs.unit}/s | "
            f"{ours.rate / theirs.rate:.3f}x (runs: {every}) |"
        )
    return "\n".join(lines)


def _build_hot_path(tree: Path, rev: str) -> str:
    """Compile the hot path of the worktree ``tree`` in place, as this tree's is, so that both
    trees run alike (with HERON_PURE_PYTHON set, both run their plain sources: nothing is
    built); how ``rev``'s hot path runs."""
    if pure_python_forced():
        return "plain Python"
    print(f"compiling the hot path of {rev} in its worktree (mypyc) ...", flush=True)
    built = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=tree,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        print(f"{rev}: compiling failed; it runs its plain sources:\n{built.stderr}", flush=True)
        return "plain Python (compiling failed)"
    return "compiled (mypyc)"


def _short(rev: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _dirty() -> bool:
    status = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=True,
    )
    return bool(status.stdout.strip())


def report(results: list[Result]) -> str:
    """The table (Bytewax: its best configuration), the ratios and the Bytewax configurations."""
    bytewax = sorted((r for r in results if r.case == "bytewax"), key=lambda r: -r.rate)
    shown = [r for r in results if r.case != "bytewax" or r is bytewax[0]]
    by_case = {r.case: r for r in shown}
    pairs = []
    for mine, what in (
        ("native-off-1", "native, acking off, 1 container"),
        ("batch-off-1", "native whole batches, acking off, 1 container"),
    ):
        ours = by_case.get(mine)
        if not ours:
            continue
        for case, name in (
            ("loop", "plain loop"),
            ("bytewax", "Bytewax (best configuration)"),
            ("spark-rdd", "PySpark RDD"),
            ("spark-ss", "PySpark Structured Streaming"),
        ):
            if case in by_case:
                pairs.append((f"ours ({what}) / {name}", ours, by_case[case]))
    for frontend in ("storm", "sparse", "multilang"):
        for case in WORD_COUNT:
            other = by_case.get(case.replace("native", frontend))
            if case.startswith("native-") and other and case in by_case:
                pairs.append((f"{other.case} / {case}", other, by_case[case]))
    for numerator, denominator in (*PAIRS, *MORE_RATIOS):
        if numerator in by_case and denominator in by_case:
            pairs.append((f"{numerator} / {denominator}", by_case[numerator], by_case[denominator]))
    text = table(shown, by_case.get("loop"))
    if pairs:
        text += "\n\nRatios of rates, all measured in this run:\n\n" + ratios(pairs)
    started = [r for r in shown if r.startup_s]
    if started:
        text += (
            "\n\nStart-up of the cluster cases, seconds from the start of the `heron submit` "
            "command until a bolt processed its first tuple, and until the command returned "
            "(median; every run):\n\n" + "\n".join(map(startup, started))
        )
    if bytewax:
        tried = "; ".join(f"{r.label.partition(': ')[2]}: {r.rate:,.0f} words/s" for r in bytewax)
        text += f"\n\nBytewax configurations tried (best first): {tried}."
    return text


def startup(result: Result) -> str:
    """The line of a cluster case's start-up times (medians of its runs, and every run)."""
    runs = [r.startup_s for r in result.runs or (result,) if r.startup_s]
    first = statistics.median(s[1] for s in runs)
    returned = statistics.median(s[0] for s in runs)
    every = ", ".join(f"{s[1]:.1f} / {s[0]:.1f}" for s in runs)
    return (
        f"- {result.case}: first tuple after **{first:.1f} s**, heron submit returned after "
        f"{returned:.1f} s (runs: {every})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="bench/run.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"cases: {' '.join(ALL)}\nquick set: {' '.join(QUICK)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the quick set (under 5 minutes on 2 cores) on 100,000 sentences (`make bench`)",
    )
    parser.add_argument(
        "--sentences",
        type=int,
        metavar="N",
        help="corpus size in sentences (default 200,000; 100,000 with --quick)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="CASE",
        help="run only these cases, chosen among all cases (shell-style patterns such as "
        "'native-*'); a latency case also runs native-on-1, whose rate it paces at",
    )
    parser.add_argument(
        "--max-pending",
        type=int,
        default=20_000,
        metavar="N",
        help="topology.max.spout.pending of the acking-on cases (default 20,000)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help="run the cases N times over, in rounds, and report each case's median run (by "
        "rate; a paced case by p99 latency) with every run's figure beside it: on a shared "
        "host one run can be off by 20%% or more (default 3; 1 with --quick)",
    )
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each run, wait up to SECONDS for the host to be idle (its CPUs busy less "
        "than 15%% over 2 s): on a host shared with other work a run swings by 2x when a test "
        "suite starts next to it (default 0: no wait)",
    )
    parser.add_argument(
        "--no-record", action="store_true", help="print only; do not append to bench/RESULTS.md"
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="measure a change: run the selected word count and identity cases (default: "
        "native-off-1 native-on-1) on this tree and on git revision REV (checked out in a "
        "temporary worktree, its hot path compiled as this tree's is; with "
        "HERON_PURE_PYTHON=1 both trees run their plain sources), alternating the two trees "
        "case by case in every round, and report both medians and each case's ratio (this "
        "tree / REV); --repeat rounds (default 3)",
    )
    parser.add_argument("--result-json", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="print the selected cases and exit")
    args = parser.parse_args()
    if args.against and not args.only:
        args.only = ["native-off-1", "native-on-1"]
    cases = selection(args.only, args.quick)
    if args.list:
        print("\n".join(cases))
        return
    total = args.sentences or (100_000 if args.quick else 200_000)
    repeat = args.repeat if args.repeat is not None else 1 if args.quick else 3
    if repeat < 1:
        parser.error(f"--repeat must be at least 1, got {repeat}")
    load_before = load()
    began = time.monotonic()
    gate = IdleGate(args.wait_idle)
    if args.against:
        unfit = [c for c in cases if c in PEERS or c.startswith("latency-")]
        if unfit:
            parser.error(f"--against runs our word count and identity cases only, not {unfit}")
        text = against(args.against, cases, total, args.max_pending, repeat, gate)
        minutes, seconds = divmod(round(time.monotonic() - began), 60)
        body = (
            f"Machine: {machine()}. Load average {load_before} before, {load()} after. "
            f"Corpus: {total:,} sentences x 10 words. Each case ran {repeat} times on each "
            f"tree, alternating trees run by run; medians. {gate.summary()}Suite wall time "
            f"{minutes} min {seconds} s.\n\n{text}"
        )
        print(f"\n{body}")
        if not args.no_record:
            print(f"recorded in {record(f'bench (this tree against {args.against})', body)}")
        return
    if args.result_json:
        results = run(cases, total, args.max_pending, repeat, gate)
        rows = [{**dataclasses.asdict(r), "runs": ()} for r in results]
        Path(args.result_json).write_text(json.dumps(rows))
        return
    times = f", each {repeat} times" if repeat > 1 else ""
    print(f"{len(cases)} cases on {total:,} sentences{times}: {' '.join(cases)}", flush=True)
    text = report(run(cases, total, args.max_pending, repeat, gate))
    minutes, seconds = divmod(round(time.monotonic() - began), 60)
    body = (
        f"Machine: {machine()}. Load average {load_before} before, {load()} after. "
        f"Corpus: {total:,} sentences x 10 words, vocabulary 10,000, seed 42 (multilang cases: "
        f"1/{MULTILANG_SHARE} of it). Our cases: parallelism 1 per component, one process per "
        f"task; acking on = max spout pending {args.max_pending:,}. "
        + (
            f"Each case ran {repeat} times, in {repeat} rounds of the whole set; the table shows "
            "its median run (a paced case: by p99 latency, paced at the first native-on-1 "
            "run's rate) and every run's rate, and the ratios divide medians. "
            if repeat > 1
            else "Each case ran once. "
        )
        + gate.summary()
        + f"Suite wall time {minutes} min {seconds} s.\n\n{text}"
    )
    print(f"\n{body}")
    if not args.no_record:
        kind = "quick" if args.quick and not args.only else "full" if not args.only else "subset"
        print(f"recorded in {record(f'bench ({kind})', body)}")


if __name__ == "__main__":
    main()
