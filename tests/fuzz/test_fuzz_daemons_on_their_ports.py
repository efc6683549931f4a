"""The process-level half of the frame fuzzing: one real topology (two containers, CURVE off
so that garbage reaches the decoders instead of stopping at the handshake), and every TCP
port of its daemons attacked in turn with 20 connections of random bytes, a ZMTP peer that
announces a frame over ``heron.network.max.frame.bytes``, and valid ZMTP messages that are not
messages of the protocol. Every daemon keeps its pid, the connection with the huge frame is
dropped and logged naming the peer, and every tuple is acked exactly once."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zmq
from fuzz_support import huge_frame_header, random_bytes, send_garbage

from heron_core.api import Grouping, TopologyBuilder
from heron_core.plan import LogicalPlan
from heron_core.proto import topology_pb2
from heron_core.testing.attack import daemon_ports
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import isolated_home

pytestmark = pytest.mark.processes

E2E = Path(__file__).resolve().parents[1] / "e2e"
COUNT = 2000
LIMIT = 4 << 20
CONFIG = {
    "topology.reliability.mode": "ATLEAST_ONCE",
    "topology.max.spout.pending": 50,
    "heron.network.curve.enabled": False,
    "heron.network.max.frame.bytes": LIMIT,
    "heron.instance.max.tuple.bytes": LIMIT // 2,
}


@pytest.fixture(name="home")
def home_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; every log printed on failure; no process outlives the test."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home


def chain(out: Path) -> LogicalPlan:
    from e2e_components import AckingSink, FlakyBolt, NumberSpout  # type: ignore[import-not-found]

    b = TopologyBuilder("hostile")
    spout = b.add_spout("numbers", NumberSpout(COUNT, str(out)), par=1)
    bolt = b.add_bolt("middle", FlakyBolt(0.0), par=2, inputs={spout: Grouping.SHUFFLE})
    b.add_bolt("sink", AckingSink(str(out)), par=2, inputs={bolt: Grouping.fields("n")})
    return b.build()


def test_every_daemon_survives_garbage_on_its_ports_and_no_tuple_is_lost(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = tmp_path / "code"
    code.mkdir()
    shutil.copy(E2E / "e2e_components.py", code)
    monkeypatch.syspath_prepend(str(code))
    from e2e_components import read_log

    out = tmp_path / "out"

    def acked() -> Counter[int]:
        return Counter(r["ack"] for r in read_log(out, "spout") if "ack" in r)

    with TopologyRun(
        chain(out), heron_home=home, code_root=code, containers=2, config=CONFIG
    ) as run:
        run.wait_until(lambda: run.state.get_physical_plan(run.name) is not None, "a plan")
        run.wait_until(lambda: len(acked()) >= 100, "100 acks")
        daemons = {
            p.pid: " ".join(p.cmdline()[2:3])
            for p in run.processes()
            if any(m in " ".join(p.cmdline()) for m in ("tmanager", "stmgr", "metricsmgr"))
        }
        targets = daemon_ports(run.state, run.name)

        def logged(needle: str) -> Callable[[], bool]:
            return lambda: needle in "\n".join(run.logs().values())

        def accepted(port: int) -> None:
            needle = f"accepted a connection from 127.0.0.1:{port} to its "
            run.wait_until(logged(needle), needle, 30)

        assert len(targets) == 6
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        announced = {}
        try:
            for seed, target in enumerate(targets):
                data_port = target.what.endswith("data port")
                peer_type = b"PUSH" if data_port else b"DEALER"
                announced[target.what] = huge_frame_header(
                    target.host, target.port, peer_type, 1 << 40, accepted
                )
                random_bytes(target.host, target.port, 20, seed)
                send_garbage(
                    context, target.host, target.port, zmq.PUSH if data_port else zmq.DEALER
                )
        finally:
            context.term()
        run.wait_until(lambda: len(acked()) >= COUNT, f"all {COUNT} ids acked", 180)
        alive = {p.pid for p in run.processes()}
        assert set(daemons) <= alive, f"daemons gone: {[daemons[p] for p in set(daemons) - alive]}"
        acks = acked()
        assert set(acks) == set(range(COUNT)) and max(acks.values()) == 1
        topology = run.state.get_topology(run.name)
        assert topology is not None and topology.state == topology_pb2.RUNNING
        for target in targets:
            needle = f"the connection from 127.0.0.1:{announced[target.what]} to its "
            run.wait_until(
                logged(needle),
                f"{target.what} to log the end of the connection with the huge frame: {needle!r}",
                30,
            )
        logs = "\n".join(run.logs().values())
        assert f"dropped here for a frame over {LIMIT} bytes" in logs
        assert "dropped a malformed message" in logs  # the stream managers
        assert "ignoring a malformed message on the stats port" in logs  # the tmanager
        assert "shell: ignoring a malformed request" in logs  # the metrics managers
