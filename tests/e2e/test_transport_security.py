"""A local process without the topology's key gets nothing through any TCP port of
the daemons: crafted pickles, a forged pause, forged back pressure and a forged registration
are refused at the CURVE handshake and logged, and the topology keeps flowing, exactly."""

from __future__ import annotations

import json
import stat
from collections import Counter
from pathlib import Path

import psutil
import pytest
from e2e_components import AckingSink, FlakyBolt, NumberSpout, read_log  # type: ignore[import-not-found]
from e2e_fixtures import code_fixture, home_fixture  # noqa: F401 - fixtures

from heron_core.api import Grouping, TopologyBuilder
from heron_core.network import KEYS_DIR, TopologyKeys
from heron_core.plan import LogicalPlan
from heron_core.proto import topology_pb2
from heron_core.testing.attack import Target, attack, daemon_ports
from heron_core.testing.cluster import TopologyRun

pytestmark = pytest.mark.processes

RELIABLE = {"topology.reliability.mode": "ATLEAST_ONCE", "topology.max.spout.pending": 50}


def chain(count: int, out: Path) -> LogicalPlan:
    b = TopologyBuilder("guarded")
    spout = b.add_spout("numbers", NumberSpout(count, str(out)), par=1)
    bolt = b.add_bolt("middle", FlakyBolt(0.0), par=2, inputs={spout: Grouping.SHUFFLE})
    b.add_bolt("sink", AckingSink(str(out)), par=2, inputs={bolt: Grouping.fields("n")})
    return b.build()


def acked(out: Path) -> Counter[int]:
    return Counter(r["ack"] for r in read_log(out, "spout") if "ack" in r)


def prometheus_ports(run: TopologyRun) -> set[int]:
    """The ports of the metrics managers' Prometheus endpoints (their file_sd targets)."""
    found = set()
    for path in (run.working_dir / "metrics").glob("prometheus-*.json"):
        for group in json.loads(path.read_text()):
            found |= {int(target.rsplit(":", 1)[1]) for target in group["targets"]}
    return found


def listening_ports(run: TopologyRun) -> set[int]:
    """Every TCP port a process of the topology listens on."""
    ports = set()
    for process in run.processes():
        try:
            connections = process.net_connections(kind="tcp")
        except psutil.Error:
            continue
        ports |= {c.laddr.port for c in connections if c.status == psutil.CONN_LISTEN}
    return ports


def refused(run: TopologyRun, target: Target) -> bool:
    needle = f":{target.port}): the peer did not complete the CURVE handshake"
    return any(needle in text for text in run.logs().values())


def test_no_tcp_port_of_the_daemons_reads_anything_from_a_peer_without_the_key(
    home: Path, code: Path, tmp_path: Path
) -> None:
    out, count, marker = tmp_path / "out", 3000, tmp_path / "pwned"
    with TopologyRun(
        chain(count, out), heron_home=home, code_root=code, containers=2, config=RELIABLE
    ) as run:
        keys = run.working_dir / KEYS_DIR
        assert stat.S_IMODE(keys.stat().st_mode) == 0o700
        assert {stat.S_IMODE(p.stat().st_mode) for p in keys.iterdir()} == {0o600}
        run.wait_until(lambda: run.state.get_physical_plan(run.name) is not None, "a plan")
        run.wait_until(lambda: len(acked(out)) >= 200, "200 acks")
        run.wait_until(lambda: len(prometheus_ports(run)) == 2, "the Prometheus endpoints")
        targets = daemon_ports(run.state, run.name)
        # the tmanager's two ports, two stream managers' data ports, two metrics managers' shells
        assert len(targets) == 6
        # Every port the topology's processes listen on is one of them, or a metrics manager's
        # Prometheus endpoint: read-only HTTP text that parses nothing it is sent beyond the
        # request line. None is left open.
        assert listening_ports(run) == {t.port for t in targets} | prometheus_ports(run)
        plan = run.state.get_physical_plan(run.name)
        assert plan is not None
        tasks = [i.info.task_id for i in plan.instances]
        public = TopologyKeys.load(keys).public
        attack(targets, marker, tasks, run.name, server_public_key=public)
        for target in targets:
            run.wait_until(lambda t=target: refused(run, t), f"{target.what} to log the refusal")
        logs = "\n".join(run.logs().values())
        assert "refused a CURVE client with a foreign key" in logs
        run.wait_until(lambda: len(acked(out)) >= count, f"all {count} ids acked", 180)
        assert not marker.exists(), "a crafted pickle was loaded"
        topology = run.state.get_topology(run.name)
        assert topology is not None and topology.state == topology_pb2.RUNNING
        acks = acked(out)
        assert set(acks) == set(range(count)) and max(acks.values()) == 1
        assert sorted(r["n"] for r in read_log(out, "sink")) == list(range(count))
        assert [r["fail"] for r in read_log(out, "spout") if "fail" in r] == []


def test_the_same_attack_succeeds_when_curve_is_turned_off(
    home: Path, code: Path, tmp_path: Path
) -> None:
    """The control: without CURVE the crafted pickle is loaded (what the first test prevents).
    The fall-back is on: without it the instances' restricted unpickler would refuse the
    pickle anyway (tests/security/test_tuple_values.py)."""
    out, marker = tmp_path / "out", tmp_path / "pwned"
    config = {
        **RELIABLE,
        "heron.network.curve.enabled": False,
        "topology.fall.back.on.java.serialization": True,
    }
    with TopologyRun(
        chain(100_000, out), heron_home=home, code_root=code, containers=2, config=config
    ) as run:
        run.wait_until(lambda: run.state.get_physical_plan(run.name) is not None, "a plan")
        plan = run.state.get_physical_plan(run.name)
        assert plan is not None
        tasks = [i.info.task_id for i in plan.instances]
        data = [t for t in daemon_ports(run.state, run.name) if t.what.endswith("data port")]
        attack(data, marker, tasks, run.name, plain_tcp=False)
        run.wait_until(marker.exists, "the crafted pickle to be loaded")
        assert "is plain TCP (heron.network.curve.enabled=false)" in "\n".join(run.logs().values())
