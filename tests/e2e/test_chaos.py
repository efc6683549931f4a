"""Chaos on the local and localzk clusters (issue 18 item 3, their part): an at-least-once
topology on two containers loses one daemon to kill -9 while tuples flow; every id is still
acked, the topology flows again (the time it took is printed, not asserted) and nothing is left
afterwards."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import psutil
import pytest
from e2e_components import AckingSink, FlakyBolt, PacedSpout, read_log  # type: ignore[import-not-found]
from e2e_fixtures import code_fixture, home_fixture  # noqa: F401 - fixtures

from heron_core.api import Grouping, TopologyBuilder
from heron_core.testing.cluster import TopologyRun

pytestmark = pytest.mark.processes

LIMIT = 3000
CONFIG = {
    "topology.reliability.mode": "ATLEAST_ONCE",
    "topology.stmgrs": 2,
    "topology.max.spout.pending": 100,
    "topology.message.timeout.secs": 5,
}

# What to kill: (module, --component, --container) to match in a daemon's command line.
TARGETS = {
    "spout instance": ("heron_core.instance", "paced", None),
    "bolt instance": ("heron_core.instance", "relay", None),
    "stmgr-1": ("heron_core.stmgr", None, "1"),
    "stmgr-2": ("heron_core.stmgr", None, "2"),
    "tmanager": ("heron_core.tmanager", None, None),
    "executor-1": ("heron_core.executor", None, "1"),
    "metricsmgr-1": ("heron_core.metricsmgr", None, "1"),
}


def _acked(out: Path) -> set[int]:
    return {r["ack"] for r in read_log(out, "paced") if "ack" in r}


def _flag(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


def _target(run: TopologyRun, kind: str) -> psutil.Process:
    module, component, container = TARGETS[kind]
    for process in run.processes():
        with contextlib.suppress(psutil.Error):
            argv = process.cmdline()
            if module not in argv:
                continue
            if component is not None and _flag(argv, "--component") != component:
                continue
            if container is not None and _flag(argv, "--container") != container:
                continue
            return process
    raise AssertionError(f"no live {kind} process")


# Every kind on local; on localzk every daemon that reads or writes ZooKeeper (the tmanager's
# location, the plans, the containers). An instance never opens the state manager (its stream
# manager hands it the plan, its executor restarts it), so its cases run on local only.
_THROUGH_ZOOKEEPER = ("stmgr-1", "stmgr-2", "tmanager", "executor-1", "metricsmgr-1")
CASES = [
    *((kind, "local") for kind in TARGETS),
    *(pytest.param(kind, "localzk", marks=pytest.mark.zookeeper) for kind in _THROUGH_ZOOKEEPER),
]


@pytest.mark.parametrize(("kind", "cluster"), CASES)
def test_kill_9_of_a_daemon_loses_no_id(
    kind: str, cluster: str, home: Path, code: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    zk = request.getfixturevalue("zk_config") if cluster == "localzk" else {}
    config = {**CONFIG, **{k: v for k, v in zk.items() if "statemgr" in k}}
    out = tmp_path / "out"
    b = TopologyBuilder("chaos")
    spout = b.add_spout("paced", PacedSpout(str(out), pause=0.004, limit=LIMIT), par=1)
    relay = b.add_bolt("relay", FlakyBolt(0.0), par=2, inputs={spout: Grouping.SHUFFLE})
    b.add_bolt("sink", AckingSink(str(out)), par=2, inputs={relay: Grouping.fields("n")})
    with TopologyRun(
        b.build(), heron_home=home, code_root=code, cluster=cluster, config=config
    ) as run:
        run.wait_until(lambda: len(_acked(out)) >= 100, "the first 100 acks")
        victim = _target(run, kind)
        victim.kill()
        killed_at, acked = time.monotonic(), len(_acked(out))
        run.wait_until(lambda: len(_acked(out)) >= acked + 50, f"acks after the {kind} died", 120)
        back = time.monotonic() - killed_at
        print(f"{cluster}, {kind}: flowing again {back:.1f} s after kill -9")
        run.wait_until(lambda: len(_acked(out)) >= LIMIT, f"all {LIMIT} ids acked", 240)
        assert _acked(out) == set(range(LIMIT))
