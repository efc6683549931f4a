"""``heron deactivate``, ``heron activate`` and ``heron list`` on a running topology, through the
installed command, on ``local`` and ``localzk``: deactivated, the spout gets deactivate() and no
ack arrives for seconds; activated, it gets activate() and the acks resume."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_components import AckingSink, PacedSpout, read_log  # type: ignore[import-not-found]
from e2e_fixtures import code_fixture, home_fixture  # noqa: F401 - fixtures

from heron_core.api import Grouping, TopologyBuilder
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import run_command

pytestmark = pytest.mark.processes

HERON = str(Path(sys.executable).with_name("heron"))
NAME = "paced"
QUIET_S = 4.0
"""How long a deactivated topology is watched for acks (after the last in-flight ones)."""


def _acks(out: Path) -> list[dict[str, Any]]:
    return [r for r in read_log(out, "paced") if "ack" in r]


def _events(out: Path) -> list[str]:
    return [r["event"] for r in read_log(out, "paced") if "event" in r]


@pytest.mark.parametrize("cluster", ["local", pytest.param("localzk", marks=pytest.mark.zookeeper)])
def test_deactivate_stops_the_acks_and_activate_resumes_them(
    cluster: str, home: Path, code: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    zk = request.getfixturevalue("zk_config") if cluster == "localzk" else {}
    statemgr = {k: v for k, v in zk.items() if "statemgr" in k}
    out = tmp_path / "out"
    b = TopologyBuilder(NAME)
    spout = b.add_spout("paced", PacedSpout(str(out)), par=1)
    b.add_bolt("sink", AckingSink(str(out)), par=2, inputs={spout: Grouping.SHUFFLE})
    config = {**statemgr, "topology.max.spout.pending": 50}
    flags = [f"--config-property={k}={v}" for k, v in statemgr.items()]

    def heron(*args: str) -> str:
        done = run_command([HERON, *args, "--heron-home", str(home), *flags], timeout=240)
        assert done.returncode == 0, f"heron {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def listed() -> str:
        return next(line for line in heron("list", cluster).splitlines() if NAME in line)

    with TopologyRun(
        b.build(), heron_home=home, code_root=code, cluster=cluster, config=config
    ) as run:
        run.wait_until(lambda: len(_acks(out)) >= 20, "the first acks")
        assert "running" in listed()

        assert (
            heron("deactivate", cluster, NAME) == f"deactivated topology {NAME!r} on {cluster!r}\n"
        )
        run.wait_until(lambda: "deactivate" in _events(out), "the spout's deactivate()")
        assert "paused" in listed()
        # Tuples in flight finish; then nothing more is emitted, so nothing more is acked.
        last = [len(_acks(out)), time.monotonic()]

        def settled() -> bool:  # no new ack for a second
            if (count := len(_acks(out))) != last[0]:
                last[:] = [count, time.monotonic()]
            return time.monotonic() - last[1] >= 1.0

        run.wait_until(settled, "the in-flight tuples to be acked", 60)
        before = len(_acks(out))
        time.sleep(QUIET_S)  # the property under test is "nothing happens for a while"
        assert len(_acks(out)) == before, "acks arrived while the topology was deactivated"
        again = heron("deactivate", cluster, NAME)
        assert again == f"topology {NAME!r} on {cluster!r} was deactivated already\n"

        assert heron("activate", cluster, NAME) == f"activated topology {NAME!r} on {cluster!r}\n"
        run.wait_until(lambda: _events(out)[-1:] == ["activate"], "the spout's activate()")
        run.wait_until(lambda: len(_acks(out)) >= before + 20, "the acks to resume")
        assert "running" in listed() and "paused" not in listed()
        assert _events(out) == ["deactivate", "activate"]
        assert not [r for r in read_log(out, "paced") if "fail" in r]


def test_the_verbs_name_an_unknown_topology(home: Path) -> None:
    for verb in ("activate", "deactivate"):
        done = run_command([HERON, verb, "local", "nope", "--heron-home", str(home)], timeout=120)
        assert done.returncode != 0
        assert "no topology 'nope' on cluster 'local'; topologies there: none" in done.stderr
        assert "Traceback" not in done.stderr
