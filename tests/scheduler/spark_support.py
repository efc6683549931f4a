"""Helpers for the Spark scheduler's process tests: run the installed ``heron`` command on the
``spark`` cluster with a fresh ZooKeeper root, stage the bounded word count, find a topology's
processes and the Spark executor JVMs hosting its containers."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
from kazoo.client import KazooClient
from spark_word_count import expected_counts, read_log

from heron_core.config import SPARK_CONF_PREFIX
from heron_core.scheduler._spark_conf import MASTER_KEY
from heron_core.testing.processes import isolated_home, processes_mentioning
from heron_core.testing.spark import QUICK_START_JAVA_OPTIONS, SparkStandaloneCluster

HERON = str(Path(sys.executable).with_name("heron"))
TOPOLOGY = Path(__file__).with_name("spark_word_count.py")
COMMAND_TIMEOUT = 300
SPARK_CONF = f"{SPARK_CONF_PREFIX.prefix}spark."
"""The prefix of the config keys the Spark scheduler hands to Spark as ``spark.`` properties."""
QUICK_JVMS = {
    f"{SPARK_CONF}{jvm}.extraJavaOptions": QUICK_START_JAVA_OPTIONS
    for jvm in ("driver", "executor")
}
"""The config that starts a test application's driver and executor JVMs with
``QUICK_START_JAVA_OPTIONS``, as the session's cluster starts its master and workers (about a
fifth less CPU for a Spark test on two cores)."""


@dataclass
class SparkTopologyRun:
    """One test's heron home, ZooKeeper root and output directory, for ``heron ... spark``.

    Attributes:
        home: the heron home.
        zk: the ``zk_config`` of the test (connection string and a fresh root).
        out: where the word count's components log.
        topology: the topology file (a copy of ``spark_word_count.py`` in its own directory,
            so that the code package holds only it).
        environment: the environment of the ``heron`` commands (default `spark_env`).
    """

    home: Path
    zk: dict[str, Any]
    out: Path
    topology: Path
    submitted_at: float = 0.0
    properties: list[str] = field(default_factory=list)
    environment: dict[str, str] | None = None

    def state_properties(self) -> list[str]:
        """The ``--config-property`` flags naming the test's ZooKeeper root."""
        return [
            "--config-property",
            f"heron.statemgr.connection.string={self.zk['heron.statemgr.connection.string']}",
            "--config-property",
            f"heron.statemgr.root.path={self.zk['heron.statemgr.root.path']}",
        ]

    def heron(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = COMMAND_TIMEOUT,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``heron <args> --heron-home <home> <state properties>`` and return it."""
        return subprocess.run(
            [HERON, *args, "--heron-home", str(self.home), *self.state_properties()],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env if env is not None else self.environment or spark_env(),
        )

    def submit(
        self,
        name: str,
        master: str | SparkStandaloneCluster,
        *properties: str,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``heron submit spark <topology> --name <name>`` on ``master`` (a master URL, or a
        cluster: its `SparkStandaloneCluster.heron_config`, the secret file included) with
        the word count's output directory, `QUICK_JVMS` and ``properties`` (``key=value``)
        added."""
        on = master.heron_config() if isinstance(master, SparkStandaloneCluster) else {}
        flags = [
            f"heron.scheduler.spark.master={on.pop(MASTER_KEY, master)}",
            *(f"{key}={value}" for key, value in on.items()),
            *(f"{key}={value}" for key, value in QUICK_JVMS.items()),
            f"sparktest.out={self.out}",
            *properties,
        ]
        self.submitted_at = time.time()
        return self.heron(
            "submit",
            "spark",
            str(self.topology),
            "--name",
            name,
            *itertools.chain.from_iterable(("--config-property", f) for f in flags),
            env=env,
        )


SUBMIT_FAILS_WITHIN = 90.0
"""No refused submit may take this long (they take seconds; the bound only catches a hang)."""


def submit_fails(
    run: SparkTopologyRun,
    master: str | SparkStandaloneCluster,
    *properties: str,
    env: dict[str, str] | None = None,
) -> str:
    """Submit topology ``broken``, expect failure; return the error line (without ``heron:
    error: ``). It must come within `SUBMIT_FAILS_WITHIN`, without a JVM stack trace, and
    nothing of the topology may remain (no process, no working directory)."""
    started = time.monotonic()
    done = run.submit("broken", master, *properties, env=env)
    elapsed = time.monotonic() - started
    print(f"failed after {elapsed:.1f} s: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode != 0, done.stdout
    assert elapsed < SUBMIT_FAILS_WITHIN
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("heron: error: "), done.stderr
    assert "\tat " not in done.stderr  # no JVM stack trace
    assert processes_mentioning(run.home) == []
    assert not (run.home / "topologies" / "spark" / "broken").exists()
    return error.removeprefix("heron: error: ")


def spark_env(**overrides: str) -> dict[str, str]:
    """The environment of the ``heron`` command: Spark binds loopback (``SPARK_LOCAL_IP``)."""
    env = dict(os.environ)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env.update(overrides)
    return env


@contextlib.contextmanager
def topology_run(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    zk: dict[str, Any],
    environment: dict[str, str] | None = None,
) -> Iterator[SparkTopologyRun]:
    """A `SparkTopologyRun` in ``tmp_path`` on ZooKeeper config ``zk``; afterwards every
    process mentioning ``tmp_path`` is killed by pid (failing the test) and every log under it
    is printed if the test failed."""
    failures = request.session.testsfailed
    code = tmp_path / "topology"
    code.mkdir()
    shutil.copy(TOPOLOGY, code / TOPOLOGY.name)
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield SparkTopologyRun(
            home, zk, tmp_path / "out", code / TOPOLOGY.name, environment=environment
        )


@pytest.fixture(name="spark_run")
def spark_run_fixture(
    request: pytest.FixtureRequest, tmp_path: Path, zk_config: dict[str, Any]
) -> Iterator[SparkTopologyRun]:
    """A `SparkTopologyRun` on the session's ZooKeeper (see `topology_run`)."""
    with topology_run(request, tmp_path, zk_config) as run:
        yield run


def topology_id(submitted: subprocess.CompletedProcess[str]) -> str:
    """The id in ``submitted topology 'x' (id x-...) to 'spark'``."""
    return submitted.stdout.split("(id ", 1)[1].split(")", 1)[0]


def processes_of(topology: str) -> list[psutil.Process]:
    """Live processes whose command line holds ``--topology-id <topology>``."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        argv: Sequence[str] = process.info.get("cmdline") or ()
        if process.info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        if any(a == "--topology-id" and b == topology for a, b in itertools.pairwise(argv)):
            found.append(process)
    return found


def container_processes(topology: str) -> dict[int, dict[str, int]]:
    """Per container: the pid of each of its daemons (``executor``, ``stmgr``, ``tmanager``,
    ``instance-<task>``), from their command lines."""
    out: dict[int, dict[str, int]] = {}
    for process in processes_of(topology):
        try:
            argv = process.cmdline()
        except psutil.NoSuchProcess:
            continue
        module = next((a for a in argv if a.startswith("heron_core.")), "")
        if module == "heron_core.scheduler" or "--container" not in argv:
            continue
        container = int(argv[argv.index("--container") + 1])
        role = module.removeprefix("heron_core.")
        if role == "instance":
            role = f"instance-{argv[argv.index('--task-id') + 1]}"
        out.setdefault(container, {})[role] = process.pid
    return out


def hosting_jvm(pid: int) -> psutil.Process | None:
    """The Spark executor JVM (``CoarseGrainedExecutorBackend``) among ``pid``'s ancestors."""
    try:
        for parent in psutil.Process(pid).parents():
            if any(a.endswith("CoarseGrainedExecutorBackend") for a in parent.cmdline()):
                return parent
    except psutil.NoSuchProcess:
        pass
    return None


def znodes_naming(zk: dict[str, Any], name: str) -> list[str]:
    """Every znode under the test's root whose path mentions topology ``name``."""
    client = KazooClient(hosts=zk["heron.statemgr.connection.string"])
    client.start(timeout=30)
    try:
        found, stack = [], [zk["heron.statemgr.root.path"]]
        while stack:
            path = stack.pop()
            if not client.exists(path):
                continue
            if name in path.rsplit("/", 1)[-1]:
                found.append(path)
            stack.extend(f"{path}/{child}" for child in client.get_children(path))
        return found
    finally:
        client.stop()
        client.close()


def wait_for(predicate: Any, what: str, timeout: float = 240.0) -> None:
    """Poll ``predicate`` every 0.2 s; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def wait_all_acked(out: Path, sentences: int) -> None:
    """Wait until the word count logging to ``out`` acked its first ``sentences`` sentences."""
    wait_for(
        lambda: len({r["ack"] for r in read_log(out, "spout") if "ack" in r}) >= sentences,
        f"all {sentences} sentences acked",
    )


def assert_exact(out: Path, sentences: int) -> None:
    """The word count that logged to ``out`` counted every word of the first ``sentences``
    sentences exactly once, and every sentence was acked, none failed."""
    spout = read_log(out, "spout")
    assert [r["fail"] for r in spout if "fail" in r] == [], "a sentence tree failed"
    assert sorted(r["ack"] for r in spout if "ack" in r) == list(range(sentences))
    counted = read_log(out, "count")
    places = Counter((r["sid"], r["position"]) for r in counted)
    assert len(places) == sentences * 5 and max(places.values()) == 1
    assert Counter(r["word"] for r in counted) == expected_counts(sentences)
