"""Helpers for executor process tests: a topology in a localfs state and the executor run on
fake daemons (see fake_daemon.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from heron_core.config import build_config, config_to_proto
from heron_core.executor import ipc_dirs, state_config_json
from heron_core.network import KEYS_DIR, TopologyKeys
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.statemgr import StateKey, create_state_manager

FAKE_DAEMON = Path(__file__).with_name("fake_daemon.py")
TOPOLOGY = "fake"
TOPOLOGY_ID = "fake-0001"

#: Quick restarts: 0.1 s, then 0.2 s.
FAST = {
    "heron.executor.restart.backoff.initial.secs": 0.1,
    "heron.executor.restart.backoff.max.secs": 0.2,
}
#: Quick restarts, two allowed in a streak. A run as long as the back-off's maximum ends a
#: crash streak, and on a loaded machine a crashing Python process can take FAST's 0.2 s to
#: start and crash (CI once counted 7 starts instead of 3): a long maximum here, so the
#: streak holds; the delays stay 0.1 and 0.2 s.
GIVE_UP_AFTER_TWO = {
    "heron.executor.restart.backoff.initial.secs": 0.1,
    "heron.executor.restart.backoff.max.secs": 60,
    "heron.executor.restart.max.attempts": 2,
}


def wait_until(predicate: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Poll ``predicate`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@dataclass
class FakeContainer:
    """A topology whose daemons are all ``fake_daemon.py``, in working directory ``root``."""

    root: Path
    state_config: dict[str, Any]
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def fake(self) -> Path:
        return self.root / "fake"

    def behave(self, **behaviours: str) -> None:
        """Set fake daemons' behaviour by process name (see fake_daemon.py)."""
        self.fake.mkdir(exist_ok=True)
        (self.fake / "behaviour.json").write_text(json.dumps(behaviours))

    def events(self, name: str) -> list[tuple[str, int]]:
        file = self.fake / f"{name}.events"
        if not file.exists():
            return []
        return [
            (verb, int(pid))
            for verb, pid in (line.split() for line in file.read_text().split("\n") if line)
        ]

    def starts(self, name: str) -> list[int]:
        return [pid for verb, pid in self.events(name) if verb == "start"]

    def fake_pids(self) -> set[int]:
        return {pid for file in self.fake.glob("*.events") for _, pid in self.events(file.stem)}

    def executor(self, container: int) -> subprocess.Popen[bytes]:
        """Start ``python -m heron_core.executor`` for ``container`` with fake daemons."""
        argv = [
            sys.executable,
            "-m",
            "heron_core.executor",
            "--topology-name",
            TOPOLOGY,
            "--topology-id",
            TOPOLOGY_ID,
            "--cluster",
            "local",
            "--working-dir",
            str(self.root),
            "--container",
            str(container),
            "--state-config",
            state_config_json(self.state_config),
            "--command-prefix",
            json.dumps([sys.executable, str(FAKE_DAEMON)]),
        ]
        log = (self.root / "logs" / f"executor-{container}.log").open("ab")
        with log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.root)
        self.started.append(proc)
        return proc

    def log(self, name: str) -> str:
        file = self.root / "logs" / f"{name}.log"
        return file.read_text(errors="replace") if file.exists() else ""


def write_topology(container: FakeContainer, **config: Any) -> None:
    """Store a topology with two containers (word x2 + count, then word) and ``config``,
    sealed with the key pair in the container's working directory (as a submit does)."""
    resolved = build_config(container.state_config, None, config)

    def inst(component: str, task: int, index: int) -> packing_plan_pb2.InstancePlan:
        return packing_plan_pb2.InstancePlan(
            component_name=component, task_id=task, component_index=index
        )

    plan = packing_plan_pb2.PackingPlan(
        id="fake-plan",
        containers=[
            packing_plan_pb2.ContainerPlan(
                id=1, instances=[inst("word", 1, 0), inst("count", 3, 0)]
            ),
            packing_plan_pb2.ContainerPlan(id=2, instances=[inst("word", 2, 1)]),
        ],
    )
    topology = topology_pb2.Topology(
        id=TOPOLOGY_ID, name=TOPOLOGY, topology_config=config_to_proto(resolved)
    )
    key = StateKey.load(TOPOLOGY, container.root)
    with create_state_manager(resolved, "local", key=key) as state:
        state.set_topology(TOPOLOGY, topology)
        state.set_packing_plan(TOPOLOGY, plan)


def end_fakes(pids: set[int]) -> None:
    """SIGKILL every listed process that is still a fake daemon, and wait until it is gone."""
    victims = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            if str(FAKE_DAEMON) in process.cmdline():
                process.kill()
                victims.append(process)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(victims, timeout=30)


def print_logs(root: Path) -> None:
    for file in sorted(root.rglob("*.log")):
        print(f"===== {file} =====\n{file.read_text(errors='replace')}")


@pytest.fixture(name="fake_container")
def fake_container_fixture(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[FakeContainer]:
    """A `FakeContainer` in ``tmp_path``; at teardown every process it started is SIGKILLed by
    pid, and the logs are printed when the test failed."""
    failures = request.session.testsfailed
    state_config = {
        "heron.class.state.manager": "localfs",
        "heron.statemgr.root.path": str(tmp_path / "state"),
    }
    root = tmp_path / "w"
    (root / "logs").mkdir(parents=True)
    TopologyKeys.create(root / KEYS_DIR)
    container = FakeContainer(root, state_config)
    try:
        yield container
    finally:
        for proc in container.started:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        end_fakes(container.fake_pids())
        for directory in ipc_dirs(root):
            shutil.rmtree(directory)
        if request.session.testsfailed > failures:
            print_logs(root)
