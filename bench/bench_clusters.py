"""The cluster cases: the word count submitted as a user submits it, ``heron submit <cluster>
bench_submitted.py`` in a subprocess, on the local scheduler (cluster ``localzk``) and on Spark
with master ``local[2]`` (cluster ``spark``), both keeping their state in the one ZooKeeper
server of the suite (`StateServer`), so that the scheduler is the only difference.

A run measures two things:

- the start-up: the time from the start of the ``heron submit`` command (``time.time()`` just
  before the driver starts it) until the command returned, and until the split bolt processed
  its first tuple (the bolt writes ``time.time()`` to a file then, once: `FirstTupleSplitBolt`);
- the throughput, timed as every topology case is: from the spout's first emit to the first
  metrics of ``count`` with every word executed (`first_emit`, `last_executed`), the metrics
  read from the topology manager through the state manager (`MetricsClient`).

Then ``heron kill``; whatever the run started and is still alive after it (a `Reaper` follows
every process mentioning the run's directory and their descendants: the scheduler service,
its Spark JVM and Python workers, the executors and daemons) is ended by pid, and so is
everything the run started when it fails.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from bench_harness import (
    LATE_SHARE,
    METRICS_INTERVAL,
    SHIPPED,
    SINKS_KEY,
    TIMED,
    Metrics,
    first_emit,
    last_executed,
    timed_sinks,
)
from bench_harness import process_kind as harness_kind
from bench_meters import CpuMeter, ProcessKinds, RssSampler, with_descendants
from bench_report import ROOT, Result, WrongResult
from word_count import WORDS_PER_SENTENCE, sentences

from heron_core.client import MetricsClient, client_config
from heron_core.proto import metrics_pb2
from heron_core.statemgr import create_state_manager
from heron_core.testing.processes import processes_mentioning
from heron_core.testing.zookeeper import ZooKeeperServer

HERON = str(Path(sys.executable).with_name("heron"))
TOPOLOGY = "bench/bench_submitted.py"
"""The topology file submitted (copied with `SHIPPED` into the run's code directory)."""
TOPOLOGY_NAME = "WordCountBench"
SPARK_MASTER = "local[2]"
CLUSTERS = {"local": "localzk", "spark": "spark"}
"""Case id suffix -> the cluster submitted to (both keep their state in ZooKeeper)."""
WHERE = {"localzk": "the local scheduler", "spark": f"Spark {SPARK_MASTER}"}
COMMAND_TIMEOUT = 300
"""Seconds a ``heron submit`` or ``heron kill`` may take before it counts as failed."""
STOP_GRACE = 10.0
"""Seconds the processes left after ``heron kill`` get between SIGTERM and SIGKILL."""


@dataclass(frozen=True)
class ClusterCase:
    """One run of the word count submitted to a cluster.

    Attributes:
        case: its id.
        label: what it is, for the table.
        cluster: ``localzk`` or ``spark``.
        acking: at-least-once with ``max_pending`` spout tuples in flight, else at-most-once.
        sentences: the size of the corpus.
    """

    case: str
    label: str
    cluster: str
    acking: bool
    sentences: int


def cluster_case(case: str, acking: bool, total: int) -> ClusterCase:
    """The run of case id ``case`` (``cluster-local``, ``cluster-spark``) on ``total``
    sentences."""
    cluster = CLUSTERS[case.removeprefix("cluster-")]
    label = (
        f"native API, acking {'on' if acking else 'off'}, 1 stream manager, submitted to "
        f"{WHERE[cluster]} (heron submit {cluster})"
    )
    return ClusterCase(case, label, cluster, acking, total)


class StateServer:
    """The ZooKeeper server the cluster cases keep their state in: started by the first
    `connection_string` call (a few seconds), ended by pid by `close`. Each run takes a fresh
    root path in it."""

    def __init__(self) -> None:
        self._server: ZooKeeperServer | None = None

    def connection_string(self) -> str:
        """``127.0.0.1:<port>`` of the server, which is started first if need be.

        Raises:
            ZooKeeperServerError: it cannot start (Debian's ``zookeeper`` package missing).
        """
        if self._server is None:
            print("starting ZooKeeper for the cluster cases", flush=True)
            server = ZooKeeperServer()
            server.start()  # ends its process itself when it fails
            self._server = server
        return self._server.connection_string

    def close(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) if it was started. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()


class Reaper(threading.Thread):
    """Follows the processes of one cluster run from `start` until `close`: every 0.5 s, every
    process whose command line mentions ``root`` (the heron CLI, the scheduler service, the
    executors and daemons) and every descendant of one (the Spark JVM, its Python workers).

    A scan of every process on the host costs the driver about 40 ms of CPU, so the timed
    interval pauses the scans (`paused`); nothing of the run starts then that a scan before or
    after it would miss (a restarted daemon mentions ``root`` as its predecessor did).
    Processes are told apart by pid and start time (`psutil.Process` equality), so a reused
    pid is never taken for one of the run's.
    """

    def __init__(self, root: Path) -> None:
        super().__init__(daemon=True)
        self.root = root
        self._seen: set[psutil.Process] = set()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._scanning = threading.Event()
        self._scanning.set()

    def run(self) -> None:
        while not self._done.wait(0.5):
            if self._scanning.is_set():
                self.sample()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No periodic scan in the ``with`` block (one scan at its start and its end)."""
        self.sample()
        self._scanning.clear()
        try:
            yield
        finally:
            self._scanning.set()
            self.sample()

    def sample(self) -> None:
        """Add the processes of the run alive now to those seen."""
        found = with_descendants(processes_mentioning(self.root))
        with self._lock:
            self._seen.update(found)

    def live(self) -> list[psutil.Process]:
        """The processes seen that are still alive (for the meters)."""
        with self._lock:
            seen = list(self._seen)
        return [p for p in seen if _alive(p)]

    def close(self) -> list[psutil.Process]:
        """Stop following; end every process seen that is still alive (SIGTERM, then SIGKILL
        after `STOP_GRACE` s), wait until they are gone, and return them."""
        self._done.set()
        self.join()
        self.sample()
        left = self.live()
        for sig in ("terminate", "kill"):
            for process in left:
                with contextlib.suppress(psutil.Error):
                    getattr(process, sig)()
            _, alive = psutil.wait_procs(left, timeout=STOP_GRACE)
            if not [p for p in alive if _alive(p)]:
                break
        return left


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def cluster_kind(process: psutil.Process) -> str:
    """The kind of a cluster run's process for the peak RSS column: ``JVM``, ``python
    workers`` (PySpark's), else as `bench_harness.process_kind`. The Spark JVM starts as the
    shell script ``spark-submit``, which becomes ``spark-class`` and then ``java`` in the same
    process; the sampler learns a process's kind once, so the scripts count as the JVM."""
    argv = process.cmdline()
    if process.name().startswith("java") or any(
        Path(a).name in ("spark-submit", "spark-class") for a in argv
    ):
        return "JVM"
    if any(a.startswith("pyspark.") for a in argv):
        return "python workers"
    return harness_kind(process)


_ENV = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
"""The heron command's environment: Spark binds loopback, as in the Spark scheduler's tests."""


def _heron(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the ``heron`` command (`_ENV`) to its end."""
    return subprocess.run(
        [HERON, *args],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
        env=_ENV,
    )


class Submission:
    """``heron submit <args>`` running in the background (the topology may process tuples
    before the command returns), its output in ``<directory>/submit.{out,err}``; ``what``
    names the run in errors.

    Attributes:
        began: ``time.time()`` just before the command started.
        process: the command.
        handle: the same, as a `psutil.Process`.
        returned: ``time.time()`` when it exited (0.0 until then), stamped by a thread that
            waits for it.
    """

    def __init__(self, what: str, directory: Path, *args: str) -> None:
        self._what = what
        self._out, self._err = directory / "submit.out", directory / "submit.err"
        self.returned = 0.0
        with self._out.open("w") as out, self._err.open("w") as err:
            self.began = time.time()
            self.process = subprocess.Popen(
                [HERON, "submit", *args], stdout=out, stderr=err, env=_ENV
            )
        self.handle = psutil.Process(self.process.pid)
        self._waiter = threading.Thread(target=self._wait, daemon=True)
        self._waiter.start()

    def _wait(self) -> None:
        self.process.wait()
        self.returned = time.time()

    def check(self) -> None:
        """Raise RuntimeError (with its error output) if the command exited and failed."""
        code = self.process.poll()
        if code:
            raise RuntimeError(
                f"{self._what}: heron submit exited with {code}:\n{self._err.read_text()}"
            )

    def wait(self) -> float:
        """Wait for the command to exit (`COMMAND_TIMEOUT` s at most); seconds it took.

        Raises:
            RuntimeError: it failed.
            subprocess.TimeoutExpired: it is still running (the caller's `Reaper` ends it).
        """
        self.process.wait(COMMAND_TIMEOUT)
        self._waiter.join()
        self.check()
        return self.returned - self.began


def _counter(
    messages: Sequence[metrics_pb2.MetricPublisherPublishMessage], component: str, prefix: str
) -> int:
    return sum(
        int(float(d.value))
        for m in messages
        if m.publisher.component_name == component
        for d in m.metrics
        if d.name.startswith(prefix)
    )


def _log_tails(root: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of every log under ``root``, for a failure's message."""
    return "\n".join(
        f"===== {path} =====\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        for path in sorted(root.rglob("*.log"))
    )


def _first_tuple(directory: Path) -> float:
    """The time (``time.time()`` s) a split task first processed a tuple."""
    stamps = [float(p.read_text()) for p in directory.glob("first-*")]
    if not stamps:
        raise WrongResult(f"no split task wrote its first-tuple time to {directory}")
    return min(stamps)


def _stage(
    case: ClusterCase, max_pending: int, zookeeper: str, work: Path
) -> tuple[Path, list[str]]:
    """Write the run's code directory (`SHIPPED`, `TOPOLOGY` and its parameters) and corpus
    file under ``work``; the topology file to submit and the ``--config-property`` values."""
    code = work / "code"
    code.mkdir()
    for source in (*SHIPPED, TOPOLOGY):
        shutil.copy(ROOT / source, code)
    corpus = work / "corpus.txt"
    corpus.write_text("".join(f"{s}\n" for s in sentences(case.sentences, 42)))
    parameters = {
        "name": TOPOLOGY_NAME,
        "sentences": case.sentences,
        "acking": case.acking,
        "directory": str(work),
        "corpus": str(corpus),
    }
    (code / "bench-case.json").write_text(json.dumps(parameters))
    properties = [
        f"heron.statemgr.connection.string={zookeeper}",
        f"heron.statemgr.root.path=/bench-{uuid.uuid4().hex[:12]}",
        f"heron.metrics.export.interval.sec={METRICS_INTERVAL}",
        f"{SINKS_KEY}={json.dumps(timed_sinks(None, METRICS_INTERVAL))}",
        "topology.stmgrs=1",
        f"topology.reliability.mode={'ATLEAST_ONCE' if case.acking else 'ATMOST_ONCE'}",
        "topology.message.timeout.secs=120",
    ]
    if case.acking:
        properties.append(f"topology.max.spout.pending={max_pending}")
    if case.cluster == "spark":
        properties += [
            f"heron.scheduler.spark.master={SPARK_MASTER}",
            "heron.scheduler.spark.conf.spark.ui.enabled=false",
        ]
    return code / Path(TOPOLOGY).name, properties


def run_cluster(case: ClusterCase, max_pending: int, zookeeper: str) -> Result:
    """Submit ``case``'s word count with ``heron submit``, measure it, ``heron kill`` it; every
    process it started is gone after, whether it succeeded or not.

    Args:
        case: the run.
        max_pending: ``topology.max.spout.pending`` with acking on.
        zookeeper: the connection string of the state's ZooKeeper (`StateServer`).

    Raises:
        WrongResult: ``count`` executed another number of words, or (acking on) the spout saw
            another number of acks.
        RuntimeError: ``heron submit`` failed (the message holds its error).
        TimeoutError: no progress within generous deadlines (the message names the step).
    """
    work = Path(tempfile.mkdtemp(prefix="heron-bench-"))
    reaper = Reaper(work)
    reaper.start()
    try:
        topology, properties = _stage(case, max_pending, zookeeper, work)
        home = work / "home"
        flags = ["--heron-home", str(home)]
        flags += itertools.chain.from_iterable(("--config-property", p) for p in properties)
        submission = Submission(case.label, work, case.cluster, str(topology), *flags)
        config = client_config(case.cluster, heron_home=home, overrides=properties)
        items = case.sentences * WORDS_PER_SENTENCE
        result = _measure(case, config, submission, reaper, work, items)
        startup = (submission.wait(), _first_tuple(work) - submission.began)
        killed = _heron("kill", case.cluster, TOPOLOGY_NAME, *flags)
        if killed.returncode != 0:
            print(f"warning: {case.case}: heron kill failed: {killed.stderr.strip()}", flush=True)
    finally:
        left = reaper.close()
        shutil.rmtree(work, ignore_errors=True)
    if left:
        print(
            f"warning: {case.case}: {len(left)} processes were still alive after heron kill "
            f"and were ended by pid: {', '.join(_describe(p) for p in left)}",
            flush=True,
        )
    return dataclasses.replace(result, startup_s=startup)


def _describe(process: psutil.Process) -> str:
    try:
        return f"{process.pid} ({' '.join(process.cmdline())[:80]})"
    except psutil.Error:
        return str(process.pid)


def _measure(
    case: ClusterCase,
    config: dict[str, Any],
    submission: Submission,
    reaper: Reaper,
    work: Path,
    items: int,
) -> Result:
    """Time the topology ``submission`` started from its first emit to its last word executed,
    with the CPU time and peak RSS of every process of the run but the heron command (the
    Spark JVM and workers included), and check its counters.

    The CPU meter starts at once on the processes the `Reaper` saw by then (its last scan was
    at most 0.5 s before; every daemon and instance had started well before, as the first emit
    needs the physical plan); the scan that follows, outside the timed path, checks that.
    The CPU time is left out ("-") if the meter started more than `LATE_SHARE` of the timed
    interval late or missed a process."""

    def processes() -> list[psutil.Process]:
        return [p for p in reaper.live() if p != submission.handle]

    kinds = ProcessKinds(cluster_kind)
    sampler = RssSampler(processes, kinds)
    sampler.start()
    cpu = CpuMeter(processes, kinds)
    try:
        start = first_emit(work, case.label, lambda: _log_tails(work), submission.check)
        cpu.start()
        late_s = time.time() - start  # the driver itself may wait for a core
        with reaper.paused():
            missed = {p.pid for p in processes()} - cpu.begin.keys()
            with create_state_manager(config, case.cluster) as state:
                client = MetricsClient(state, TOPOLOGY_NAME)
                try:

                    def metrics() -> list[metrics_pb2.MetricPublisherPublishMessage]:
                        return client.fetch() or []

                    end = last_executed(
                        metrics, case.label, items, METRICS_INTERVAL, lambda: _log_tails(work)
                    )
                    cpu_s: float | None = cpu.stop()
                    if case.acking:
                        _wait_acked(metrics, case)
                    messages = metrics()
                finally:
                    client.close()
        if missed or late_s > LATE_SHARE * (end - start):
            cpu_s = None
    finally:
        rss = sampler.result()
    executed = _counter(messages, "count", "__execute-count")
    acked = _counter(messages, "sentence", "__ack-count") if case.acking else case.sentences
    if executed != items or acked != case.sentences:
        raise WrongResult(
            f"{case.label}: 'count' executed {executed:,} words (expected {items:,}), the "
            f"spout saw {acked:,} acks (expected {case.sentences:,})"
        )
    return Result(
        case.case,
        case.label,
        items,
        end - start,
        cpu_s,
        TIMED,
        "words",
        rss,
        cpu_by_kind=cpu.by_kind,
    )


def _wait_acked(metrics: Metrics, case: ClusterCase) -> None:
    """Wait until the spout saw every tree acked (10 minutes at most)."""
    deadline = time.monotonic() + 600
    while _counter(metrics(), "sentence", "__ack-count") < case.sentences:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{case.label}: not every tree was acked in 600 s")
        time.sleep(0.1)
