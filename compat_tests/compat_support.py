"""Running conformance topologies through ``Testing.completeTopology`` on a `LocalCluster`,
with every process checked gone afterwards and the daemons' logs printed on failure."""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil
import pytest

from storm_compat import Config, LocalCluster, StormTopology
from storm_compat.testing import CompleteTopologyParam, FixedTuple, MockedSources, Testing


@pytest.fixture(name="workers", scope="module", params=[1, 2], ids=["1-container", "2-containers"])
def workers_fixture(request: pytest.FixtureRequest) -> int:
    """The number of containers (``topology.workers``): every case runs with 1 and with 2."""
    param: int = request.param
    return param


TOPOLOGIES = Path(__file__).resolve().parents[1] / "topologies"
TIMEOUT_MS = 90_000
"""completeTopology's limit once a topology is up: generous, for a loaded 2-core machine."""


def processes_under(home: Path) -> list[psutil.Process]:
    """Live processes whose command line mentions ``home`` (every daemon of its topologies)."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        argv = process.info.get("cmdline") or []
        if process.info.get("status") != psutil.STATUS_ZOMBIE and any(str(home) in a for a in argv):
            found.append(process)
    return found


def logs_under(home: Path) -> str:
    """Every log file under ``home``, each headed by its path."""
    return "\n".join(
        f"===== {path} =====\n{path.read_text(errors='replace')}"
        for path in sorted(home.rglob("*.log"))
    )


@dataclass(frozen=True)
class Run:
    """What one completed topology left: captured tuples, spout events and the logs."""

    results: dict[str, list[FixedTuple]]
    directory: Path
    logs: str

    def tuples(self, component: str, stream: str = "default") -> list[list[Any]]:
        return Testing.readTuples(self.results, component, stream)

    def events(self, spout: str) -> list[dict[str, Any]]:
        """The ``TrackedSpout`` events of ``spout``, every task's in order, tasks in order."""
        lines = []
        for path in sorted((self.directory / "events").glob(f"{spout}-*.jsonl")):
            lines += [json.loads(line) for line in path.read_text().splitlines()]
        return lines

    def outcomes(self, spout: str) -> dict[str, list[Any]]:
        """``{"ack": [values...], "fail": [values...]}`` of ``spout``'s tuples, sorted."""
        found: dict[str, list[Any]] = {"ack": [], "fail": []}
        for event in self.events(spout):
            if event["event"] in found:
                found[event["event"]].append(event["values"])
        return {key: sorted(values, key=repr) for key, values in found.items()}


def complete(
    directory: Path,
    build: Callable[[str], StormTopology],
    workers: int,
    conf: Mapping[str, Any] | None = None,
    mocked: MockedSources | None = None,
) -> Run:
    """Build the topology (``build`` gets the events directory for TrackedSpouts), run it to
    completion with ``workers`` containers, and check that no process is left."""
    events = directory / "events"
    events.mkdir(parents=True)
    home = directory / "home"
    config = Config(conf or {})
    config.setNumWorkers(workers)
    param = CompleteTopologyParam(mocked, config, TIMEOUT_MS)
    cluster = LocalCluster(heron_home=home, keep_logs=True)
    try:
        results = Testing.completeTopology(cluster, build(str(events)), param)
    except BaseException:
        print(logs_under(home))
        raise
    finally:
        cluster.shutdown()
        leftovers = processes_under(home)
        for process in leftovers:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(leftovers, timeout=30)
        assert leftovers == [], f"processes left after the topology was killed: {leftovers}"
    return Run(results, directory, logs_under(home))


def starter(name: str) -> ModuleType:
    """Import ``topologies/<name>.py`` the way ``heron submit`` does (as module ``name``)."""
    if str(TOPOLOGIES) not in sys.path:
        sys.path.insert(0, str(TOPOLOGIES))
    return importlib.import_module(name)
