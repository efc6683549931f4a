"""The baselines, each in a subprocess of its own: the plain single-process Python loop, Bytewax
(``bytewax.testing.run_main``, several configurations) and PySpark with master ``local[2]`` (RDD
word count, and Structured Streaming over the corpus written as text files).

`run_peers` starts ``python bench/bench_peers.py --sentences N --out FILE PEER...``, which
generates the corpus, runs the peers, and writes for each measurement its counts, time, CPU and
peak RSS; `run_peers` then verifies every count against the corpus (`verify`) and ends whatever
the subprocess left behind (the Spark JVM included).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import operator
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import psutil
from bench_meters import CpuMeter, ProcessKinds, RssSampler
from bench_report import ROOT, Result, verify
from word_count import WORDS_PER_SENTENCE, sentences

PATH = ("bench", "topologies")
"""The directories (under the repository) the subprocess imports from."""
PEERS = ("loop", "bytewax", "spark-rdd", "spark-ss")
BYTEWAX_CONFIGS = ((1000, False), (1000, True), (10_000, False), (10_000, True))
"""(TestingSource batch_size, split with flat_map_batch instead of flat_map), each counted
with count_final."""
WARM_UP = 10
"""Spark warms up on 1/WARM_UP of the corpus before the timed job."""
SPARK_SETTINGS = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}

Measurement = dict[str, Any]
"""What the subprocess writes per measurement: case, label, timed, wall_s, cpu_s, rss_mb,
counts."""


def _tree() -> list[psutil.Process]:
    me = psutil.Process()
    return [me, *me.children(recursive=True)]


def _kind(process: psutil.Process) -> str:
    if process.pid == os.getpid():
        return "python"
    return "JVM" if "java" in process.name() else "python workers"


def _measure(case: str, label: str, timed: str, job: Callable[[], Iterable[Any]]) -> Measurement:
    """Time ``job`` (which returns ``(word, count)`` pairs) with the CPU and peak RSS of this
    process and its children."""
    sampler = RssSampler(_tree, ProcessKinds(_kind))
    sampler.start()
    cpu = CpuMeter(_tree)
    cpu.start()
    start = time.perf_counter()
    counts = dict(job())
    wall = time.perf_counter() - start
    cpu_s = cpu.stop()
    rss = sampler.result()
    return {
        "case": case,
        "label": label,
        "timed": timed,
        "wall_s": wall,
        "cpu_s": cpu_s,
        "rss_mb": rss,
        "counts": counts,
    }


def plain_loop(corpus: list[str]) -> Iterator[Measurement]:
    def job() -> Counter[str]:
        counts: Counter[str] = Counter()
        for sentence in corpus:
            for word in sentence.split():
                counts[word] += 1
        return counts

    yield _measure("loop", "plain Python loop (1 process)", "the loop", job)


def bytewax(corpus: list[str]) -> Iterator[Measurement]:
    """Each of `BYTEWAX_CONFIGS`: TestingSource -> split -> count_final -> TestingSink."""
    import bytewax.operators as op
    from bytewax.dataflow import Dataflow
    from bytewax.testing import TestingSink, TestingSource, run_main

    def split_batch(batch: list[str]) -> list[str]:
        return [w for s in batch for w in s.split()]

    for batch_size, batched in BYTEWAX_CONFIGS:
        flow = Dataflow("wordcount")
        lines = op.input("corpus", flow, TestingSource(corpus, batch_size=batch_size))
        if batched:
            words = op.flat_map_batch("split", lines, split_batch)
        else:
            words = op.flat_map("split", lines, str.split)
        out: list[tuple[str, int]] = []
        op.output("out", op.count_final("count", words, lambda w: w), TestingSink(out))

        def job(flow: Dataflow = flow, out: list[tuple[str, int]] = out) -> list[tuple[str, int]]:
            run_main(flow)
            return out

        split = "flat_map_batch" if batched else "flat_map"
        label = f"Bytewax run_main: batch_size={batch_size:,}, {split}, count_final"
        yield _measure("bytewax", label, "run_main", job)


def spark(corpus: list[str], jobs: set[str], directory: Path) -> Iterator[Measurement]:
    """The RDD word count and/or the Structured Streaming one, in one SparkSession, each timed
    on a warm JVM after the same job ran on 1/`WARM_UP` of the corpus."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    builder = SparkSession.builder.master("local[2]").appName("heron-bench")
    for key, value in SPARK_SETTINGS.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    warm = corpus[: len(corpus) // WARM_UP]
    try:
        if "spark-rdd" in jobs:

            def rdd(data: list[str]) -> list[tuple[str, int]]:
                words = session.sparkContext.parallelize(data, 2).flatMap(str.split)
                result: list[tuple[str, int]]
                result = words.map(lambda w: (w, 1)).reduceByKey(operator.add).collect()
                return result

            rdd(warm)
            yield _measure(
                "spark-rdd",
                "PySpark RDD local[2]: parallelize, flatMap, map, reduceByKey",
                "the job (parallelize -> collect) on a warm JVM",
                lambda: rdd(corpus),
            )
        if "spark-ss" in jobs:
            for name, data in (("warm", warm), ("corpus", corpus)):
                (directory / name).mkdir()
                for i in range(4):
                    (directory / name / f"part-{i}.txt").write_text("\n".join(data[i::4]) + "\n")

            def streaming(name: str) -> Iterator[tuple[str, int]]:
                counts = (
                    session.readStream.text(str(directory / name))
                    .select(F.explode(F.split("value", " ")).alias("word"))
                    .groupBy("word")
                    .count()
                )
                query = (
                    counts.writeStream.outputMode("complete")
                    .format("memory")
                    .queryName(name)
                    .trigger(availableNow=True)
                    .start()
                )
                query.awaitTermination()
                return ((r["word"], r["count"]) for r in session.table(name).collect())

            dict(streaming("warm"))
            yield _measure(
                "spark-ss",
                "PySpark Structured Streaming local[2]: readStream.text, split/explode, "
                "groupBy count, availableNow, memory sink",
                "query start -> done + reading the sink, warm JVM (files written before)",
                lambda: streaming("corpus"),
            )
    finally:
        session.stop()
        _end_children()


def _end_children() -> None:
    """Terminate (kill after 10 s) this process's children, such as the Spark JVM, and reap
    them, so that none outlives it as a zombie."""
    children = psutil.Process().children(recursive=True)
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.terminate()
    _, alive = psutil.wait_procs(children, timeout=10)
    for child in alive:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(alive, timeout=10)


def _main() -> None:
    parser = argparse.ArgumentParser(description="Run peers; write their measurements as JSON.")
    parser.add_argument("--sentences", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("peers", nargs="+", choices=PEERS)
    args = parser.parse_args()
    corpus = sentences(args.sentences, 42)
    measurements: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="heron-bench-peers-") as tmp:
        if "loop" in args.peers:
            measurements += plain_loop(corpus)
        if "bytewax" in args.peers:
            measurements += bytewax(corpus)
        if {"spark-rdd", "spark-ss"} & set(args.peers):
            measurements += spark(corpus, set(args.peers), Path(tmp))
    args.out.write_text(json.dumps(measurements))


def run_peers(peers: list[str], total: int, expected: Counter[str]) -> list[Result]:
    """Run ``peers`` (of `PEERS`) on ``total`` sentences in one subprocess; their verified
    results, in order (Bytewax: one per configuration).

    Raises:
        WrongResult: a peer's counts differ from ``expected``.
        RuntimeError: the subprocess failed (the message holds the end of its output).
    """
    with tempfile.TemporaryDirectory(prefix="heron-bench-peers-") as tmp:
        out, log = Path(tmp) / "out.json", Path(tmp) / "log.txt"
        argv = [sys.executable, __file__, "--sentences", str(total), "--out", str(out), *peers]
        with log.open("w") as sink:
            process = subprocess.Popen(
                argv,
                stdout=sink,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(str(ROOT / d) for d in PATH)},
                start_new_session=True,
            )
            try:
                code = process.wait(timeout=1800)
            finally:
                _end_group(process)
        if code != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            raise RuntimeError(f"peers {' '.join(peers)} exited with {code}:\n{tail}")
        measurements: list[Measurement] = json.loads(out.read_text())
    results = []
    for m in measurements:
        verify(m["label"], m["counts"], expected)
        items = total * WORDS_PER_SENTENCE
        results.append(
            Result(
                m["case"],
                m["label"],
                items,
                m["wall_s"],
                m["cpu_s"],
                m["timed"],
                "words",
                m["rss_mb"],
            )
        )
    return results


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """End ``process``'s process group (a JVM it started included): SIGTERM, then SIGKILL what
    is left after 10 s; return when all of it is gone."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(grace)
        deadline = time.monotonic() + grace
        while any(_in_group(p, process.pid) for p in psutil.process_iter()):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        else:
            return
    raise RuntimeError(f"processes of group {process.pid} survived SIGKILL for 30 s")


def _in_group(process: psutil.Process, group: int) -> bool:
    try:
        return os.getpgid(process.pid) == group and process.status() != psutil.STATUS_ZOMBIE
    except (ProcessLookupError, psutil.Error):
        return False


if __name__ == "__main__":
    _main()
