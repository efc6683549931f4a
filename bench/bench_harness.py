"""Our cases: a topology on the real process model (`TopologyRun`: every task its own OS process,
tuples through the stream managers), timed from its first emit to its last tuple executed."""

from __future__ import annotations

import copy
import functools
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from bench_components import (
    BatchCountBolt,
    BatchSplitBolt,
    CorpusSpout,
    IdentityBolt,
    StatefulCorpusSpout,
    StatefulCountBolt,
    read_latencies,
)
from bench_meters import CpuMeter, ProcessKinds, RssSampler, with_descendants
from bench_report import ROOT, Result, WrongResult
from bench_sparse import sparse_plan
from bench_storm import storm_plan
from word_count import WORDS_PER_SENTENCE, CountBolt, SplitBolt

from heron_core.api import Grouping, TopologyBuilder
from heron_core.config import REGISTRY
from heron_core.plan import LogicalPlan
from heron_core.proto import metrics_pb2
from heron_core.testing.cluster import TopologyRun

SHIPPED = (
    "topologies/word_count.py",
    "topologies/storm_word_count.py",
    "bench/bench_components.py",
    "bench/bench_storm.py",
    "bench/bench_sparse.py",
)
"""The modules the instances import the components from (copied to the topology's code)."""

TIMED = "first emit -> last tuple executed"
METRICS_INTERVAL = 0.05
"""heron.metrics.export.interval.sec of our cases: the resolution of their timing."""

SINKS_KEY = "heron.metrics.sinks"


def timed_sinks(sinks: Mapping[str, Any] | None, export_s: float) -> dict[str, Any]:
    """``sinks`` (a ``heron.metrics.sinks`` value; None: its default) with the tmanager sink
    flushing every ``export_s``: a run's end is read from the topology manager's metrics
    (`last_executed`), which the sink's default flush of 1 s would delay by up to 1 s (the
    runs then measured either ~1.7 s or ~2.6 s for the same work, by the phase of the flush).

    >>> timed_sinks(None, 0.05)["tmanager-sink"]["flush-frequency-ms"]
    50
    """
    chosen = copy.deepcopy(dict(sinks if sinks is not None else REGISTRY[SINKS_KEY].default))
    chosen["tmanager-sink"]["flush-frequency-ms"] = round(export_s * 1000)
    return chosen


@dataclass(frozen=True)
class TopologyCase:
    """One topology run.

    Attributes:
        case: its id.
        label: what it is, for the table.
        frontend: the word count on the native API (``native``), the Storm facade
            (``storm``), streamparse components in-process (``sparse``) or as multilang
            subprocesses (``multilang``); or the identity topology (``identity``: the corpus's
            words through two bolts).
        acking: at-least-once with ``max_pending`` spout tuples in flight, else at-most-once.
        containers: ``topology.stmgrs``.
        sentences: the size of the corpus.
        rate: with a native spout, pace it to this many tuples/s.
        config: more config overrides (e.g. ``heron.network.curve.enabled``).
    """

    case: str
    label: str
    frontend: str
    acking: bool
    containers: int
    sentences: int
    rate: float | None = None
    config: Mapping[str, object] = field(default_factory=dict)


def _plan(case: TopologyCase, max_pending: int, directory: Path) -> LogicalPlan:
    if case.frontend == "storm":
        return storm_plan(case.sentences, case.acking, case.containers, max_pending, str(directory))
    if case.frontend in ("sparse", "multilang"):
        return sparse_plan(
            case.sentences, case.acking, case.frontend == "multilang", str(directory)
        )
    identity = case.frontend == "identity"
    stateful = case.frontend == "stateful"
    reliable = case.acking or stateful  # effectively once: message ids, acked at once
    spout_type = StatefulCorpusSpout if stateful else CorpusSpout
    spout = spout_type(case.sentences, reliable, case.rate, str(directory), words=identity)
    b = TopologyBuilder(f"{case.frontend}-bench")
    source = b.add_spout("sentence", spout)
    if identity:
        first = b.add_bolt("identity", IdentityBolt, inputs={source: Grouping.SHUFFLE})
        b.add_bolt("count", IdentityBolt, inputs={first: Grouping.SHUFFLE})
    else:
        batched = case.frontend == "batch"
        split_type = BatchSplitBolt if batched else SplitBolt
        split = b.add_bolt("split", split_type, inputs={source: Grouping.SHUFFLE})
        count = StatefulCountBolt if stateful else BatchCountBolt if batched else CountBolt
        b.add_bolt("count", count, inputs={split: Grouping.fields("word")})
    return b.build()


def _processes(run: TopologyRun) -> list[psutil.Process]:
    """The topology's processes and their children (multilang subprocesses)."""
    return with_descendants(run.processes())


def process_kind(process: psutil.Process) -> str:
    """What ``process`` is, for the peak RSS column: ``instance:<component>``, the daemon
    (``stmgr``, ``executor``, ...), or ``subprocess of <kind>``."""
    argv = process.cmdline()
    module = next((a for a in argv if a.startswith("heron_core.")), None)
    if module is None:
        parent = process.parent()
        return f"subprocess of {process_kind(parent)}" if parent else "?"
    if module == "heron_core.instance" and "--component" in argv:
        return f"instance:{argv[argv.index('--component') + 1]}"
    return module.split(".")[1]


def run_topology(case: TopologyCase, max_pending: int) -> Result:
    """Run ``case`` to completion and measure it; every process it started is gone after.

    The spout is ``sentence`` and the last bolt ``count`` in every front end; the run ends when
    ``count`` executed every word (tuple), and with acking on when every tree completed too.

    Raises:
        WrongResult: ``count`` executed another number of tuples, or (acking on) the spout saw
            another number of acks.
        TimeoutError: no progress within generous deadlines (the message names the step).
    """
    work = Path(tempfile.mkdtemp(prefix="heron-bench-"))
    code = work / "code"
    code.mkdir()
    for source in SHIPPED:
        shutil.copy(ROOT / source, code)
    items = case.sentences * WORDS_PER_SENTENCE
    spout_tuples = items if case.frontend == "identity" else case.sentences
    export_s = 1.0 if case.rate else METRICS_INTERVAL
    config = {
        # a paced run measures latency, not time: it keeps the default export interval, as the
        # frequent exports that give the others their timing resolution also add latency
        "heron.metrics.export.interval.sec": export_s,
        "topology.reliability.mode": "ATLEAST_ONCE" if case.acking else "ATMOST_ONCE",
        "topology.max.spout.pending": max_pending if case.acking else None,
        "topology.message.timeout.secs": 120,
        **case.config,
    }
    config[SINKS_KEY] = timed_sinks(case.config.get(SINKS_KEY), export_s)
    plan = _plan(case, max_pending, work)
    try:
        with TopologyRun(
            plan,
            heron_home=work / "home",
            code_root=code,
            containers=case.containers,
            config=config,
        ) as run:
            processes = functools.partial(_processes, run)
            kinds = ProcessKinds(process_kind)
            sampler = RssSampler(processes, kinds)
            sampler.start()
            cpu = CpuMeter(processes, kinds)
            try:
                start = first_emit(work, run.name, run.dump_logs)
                cpu.start()
                late_s = time.time() - start  # the driver itself may wait for a core
                if case.rate:  # the spout notices its last ack: no wait for a metrics export
                    end = _all_acked(run, work, spout_tuples)
                    cpu_s: float | None = cpu.stop()
                    # untimed: for _check
                    last_executed(run.metrics, run.name, items, export_s, run.log_tails)
                else:
                    end = last_executed(run.metrics, run.name, items, export_s, run.log_tails)
                    cpu_s = cpu.stop()
                wall = end - start
                if late_s > LATE_SHARE * wall:  # the meter missed the start of the run
                    cpu_s = None
                if case.acking:
                    run.wait_until(
                        lambda: run.counter("sentence", "__ack-count") >= spout_tuples,
                        "all trees acked",
                        600,
                    )
            finally:
                rss = sampler.result()
            _check(run, case, items, spout_tuples)
            latency = None
            if case.acking and case.frontend in ("native", "batch", "identity"):  # a CorpusSpout
                latency = _latency(work, spout_tuples)
            unit = "tuples" if case.frontend == "identity" else "words"
            return Result(
                case.case,
                case.label,
                items,
                wall,
                cpu_s,
                TIMED,
                unit,
                rss,
                latency,
                cpu_by_kind=cpu.by_kind,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


LATE_SHARE = 0.05
"""A run's CPU time is left out ("-") when the meter started this share of the run late."""


def first_emit(
    directory: Path,
    what: str,
    logs: Callable[[], str],
    check: Callable[[], None] = lambda: None,
) -> float:
    """The time (``time.time()`` s) of the spout's first emit (its `record_start` file in
    ``directory``); fails after 120 s naming ``what``, with ``logs()``. ``check()`` is called
    at every poll and raises when waiting is pointless (the submit command failed).

    Polled every 2 ms, not at ``wait_until``'s 0.1 s: the CPU meter starts when this returns,
    and a late start drops a visible share of a one-second run's CPU time."""
    deadline = time.monotonic() + 120
    while not any(directory.glob("start-*")):
        check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: no first emit within 120 s\n{logs()}")
        time.sleep(0.002)
    return min(float(p.read_text()) for p in directory.glob("start-*"))


Metrics = Callable[[], Sequence[metrics_pb2.MetricPublisherPublishMessage]]
"""The newest metrics message of every instance of a running topology ([] before any)."""


STALL_S = 120.0
"""How long `last_executed` waits for the count of executed tuples to move before it calls the
run stalled (a run of the suite takes seconds; a slow host, tens of them)."""


def last_executed(
    metrics: Metrics, what: str, items: int, export_s: float, logs: Callable[[], str]
) -> float:
    """The time (``time.time()`` s) of the first metrics ``count`` published with ``items``
    tuples executed (polled twice per export interval ``export_s``, so a paced run is not
    disturbed by the driver more than it must). Fails naming ``what``, with ``logs()``, when
    the executed count has not moved for `STALL_S` or after 15 minutes in all."""
    deadline = time.monotonic() + 900
    moved, last = time.monotonic(), -1
    while True:
        messages = [m for m in metrics() if m.publisher.component_name == "count"]
        executed = sum(
            int(float(d.value))
            for m in messages
            for d in m.metrics
            if d.name.startswith("__execute-count")
        )
        if messages and executed >= items:
            return max(m.timestamp for m in messages) / 1000
        now = time.monotonic()
        if executed != last:
            moved, last = now, executed
        if now > deadline or now - moved > STALL_S:
            raise TimeoutError(
                f"{what}: 'count' executed {executed:,} of {items:,} tuples (metrics from "
                f"{len(messages)} count instances; no progress for {now - moved:.0f} s)\n"
                f"{logs()}"
            )
        time.sleep(export_s / 2)


def _all_acked(run: TopologyRun, directory: Path, trees: int) -> float:
    """The time (``time.time()`` s) the last paced spout saw the last of its trees acked: each
    writes it with its latencies, so the driver polls for the files only every 50 ms (a
    driver polling every 2 ms took 6% of a core from the topology it measured).

    Raises:
        WrongResult: the spout failed a tree (a `CorpusSpout` does not replay it, so the run
            cannot complete), with the tail of every log, as soon as its metrics say so.
        TimeoutError: not done within 15 minutes, with the tail of every log.
    """
    deadline = time.monotonic() + 900
    next_check = time.monotonic() + 1.0
    while True:
        recorded = read_latencies(directory)
        if recorded and sum(len(latencies) for _, latencies in recorded) >= trees:
            return max(done for done, _ in recorded)
        now = time.monotonic()
        if now >= next_check:  # metrics come once a second in a paced run
            next_check = now + 1.0
            failed = run.counter("sentence", "__fail-count")
            if failed:
                raise WrongResult(
                    f"{run.name}: the spout failed {failed:,} of {trees:,} trees (a tree not "
                    f"complete within topology.message.timeout.secs fails)\n{run.log_tails()}"
                )
        if now > deadline:
            raise TimeoutError(
                f"{run.name}: the spout did not see {trees:,} trees acked\n{run.log_tails()}"
            )
        time.sleep(0.05)


def _check(run: TopologyRun, case: TopologyCase, items: int, spout_tuples: int) -> None:
    executed = run.counter("count", "__execute-count")
    acked = run.counter("sentence", "__ack-count") if case.acking else spout_tuples
    if executed != items or acked != spout_tuples:
        raise WrongResult(
            f"{case.label}: 'count' executed {executed:,} tuples (expected {items:,}), the "
            f"spout saw {acked:,} acks (expected {spout_tuples:,})"
        )


WARMUP = 0.05
"""The share of trees (the first to complete) left out of latency figures: start-up effects."""


def _latency(directory: Path, trees: int) -> tuple[float, float]:
    """p50 and p99 (ms) of the complete latencies the spouts wrote to ``directory``, after
    warm-up: the first ``WARMUP`` of each spout's trees, in completion order, are left out."""
    deadline = time.monotonic() + 60
    while not (found := read_latencies(directory)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no latency file in {directory} within 60 s of the last ack")
        time.sleep(0.1)
    recorded = [latencies for _, latencies in found]
    if sum(map(len, recorded)) != trees:
        raise WrongResult(
            f"{sum(map(len, recorded)):,} complete latencies recorded, expected {trees:,}"
        )
    values = sorted(v for spout in recorded for v in spout[int(len(spout) * WARMUP) :])
    return statistics.median(values) * 1000, values[int(0.99 * (len(values) - 1))] * 1000
