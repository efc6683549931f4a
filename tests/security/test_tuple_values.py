"""Tuple values are safe by default, as in Storm 2: a value of a class that is neither a
builtin or standard value type nor registered in ``topology.kryo.register`` fails its emitter
at its first batch, naming the class and the key; a receiving instance resolves no other
class, so a crafted batch from a peer that holds the topology's key runs nothing and is
dropped and logged. ``topology.fall.back.on.java.serialization`` restores pickling anything.

Attacker: a process holding the topology's key pair (a leaked key, or a compromised host of
the topology), which reaches a stream manager's data port. The CURVE handshake lets it in
(tests/e2e/test_transport_security.py keeps out everyone else); what it sends is forwarded to
an instance. Control: the same batch, with the fall-back on, runs its code in the instance."""

from __future__ import annotations

import datetime
import decimal
import fractions
import shutil
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from tuple_values_components import NumberSpout, Point, Relay, ReprSink, RowsSpout, records

from heron_core.api import Grouping, TopologyBuilder
from heron_core.errors import UserCodeError
from heron_core.instance._values import FALL_BACK_KEY, REGISTER_KEY
from heron_core.network import KEYS_DIR, TopologyKeys, Transport, data_frames
from heron_core.plan import LogicalPlan
from heron_core.proto import tuple_pb2
from heron_core.testing.attack import Target, daemon_ports, evil_pickle
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import isolated_home
from storm_compat import Config, LocalCluster, StormTopology
from storm_compat.testing import CompleteTopologyParam, FixedTupleSpout, Testing
from storm_compat.topology import TopologyBuilder as StormBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

HERE = Path(__file__).resolve().parent
POINT = "tuple_values_components.Point"


@pytest.fixture(name="home")
def home_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; on failure every log under it is printed; no process may outlive it."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home


@pytest.fixture(name="code")
def code_fixture(tmp_path: Path) -> Path:
    """The topology code shipped to the instances: the components module."""
    root = tmp_path / "code"
    root.mkdir()
    shutil.copy(HERE / "tuple_values_components.py", root)
    return root


def rows_topology(name: str, rows: list[Any], out: Path) -> LogicalPlan:
    b = TopologyBuilder(name)
    spout = b.add_spout("src", RowsSpout(rows), par=1)
    b.add_bolt("sink", ReprSink(str(out)), par=1, inputs={spout: Grouping.SHUFFLE})
    return b.build()


def numbers_topology(out: Path) -> LogicalPlan:
    b = TopologyBuilder("values_attacked")
    spout = b.add_spout("numbers", NumberSpout(), par=1)
    b.add_bolt("sink", ReprSink(str(out)), par=1, inputs={spout: Grouping.SHUFFLE})
    return b.build()


STANDARD = [
    datetime.datetime(2024, 2, 29, 12, 30, tzinfo=datetime.UTC),
    datetime.date(2024, 2, 29),
    datetime.timedelta(hours=5),
    decimal.Decimal("10.25"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    fractions.Fraction(1, 3),
    OrderedDict(a=1),
    {"nested": [1, (2.5, None), b"x"]},
]


def test_an_unregistered_class_fails_the_emitter_at_its_first_emit(
    home: Path, code: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    plan = rows_topology("values_unregistered", [Point(1, 2), "after"], out)
    with TopologyRun(plan, heron_home=home, code_root=code) as run:
        run.wait_until(lambda: "exit status 1" in run.logs().get("executor-1", ""), "a crash")
        log = next(text for name, text in run.logs().items() if "_src_" in name)
        for part in (
            "topology 'values_unregistered', component 'src', task",
            "a tuple emitted on stream 'default' holds a value of class "
            f"{POINT}, which tuple values may not hold (values: [Point(x=1, y=2)])",
            f"List {POINT!r} in {REGISTER_KEY} (Storm's Config.registerSerialization)",
            "user code raised; the instance exits",
        ):
            assert part in log, part
        assert [r for r in records(out) if "Point" in r["repr"]] == []


def test_a_registered_class_and_the_standard_value_types_cross(
    home: Path, code: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    rows: list[Any] = [Point(1, 2), *STANDARD]
    plan = rows_topology("values_registered", rows, out)
    with TopologyRun(plan, heron_home=home, code_root=code, config={REGISTER_KEY: [POINT]}) as run:
        run.wait_until(lambda: len(records(out)) >= len(rows), f"{len(rows)} records")
    assert sorted(r["repr"] for r in records(out)) == sorted(repr(v) for v in rows)
    classes = {r["class"] for r in records(out)}
    assert POINT in classes and "decimal.Decimal" in classes and "uuid.UUID" in classes


def test_the_fall_back_key_restores_pickling_any_class(
    home: Path, code: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    plan = rows_topology("values_fall_back", [Point(3, 4)], out)
    with TopologyRun(plan, heron_home=home, code_root=code, config={FALL_BACK_KEY: True}) as run:
        run.wait_until(lambda: len(records(out)) >= 1, "the point to arrive")
        assert f"{FALL_BACK_KEY} is true: tuple values of any class" in "\n".join(
            run.logs().values()
        )
    assert records(out) == [{"repr": "Point(x=3, y=4)", "class": POINT}]


def storm_topology() -> StormTopology:
    builder = StormBuilder()
    builder.setSpout("src", FixedTupleSpout([[Point(1, 2)], [Point(3, 4)]], Fields("value")))
    builder.setBolt("relay", Relay()).shuffleGrouping("src")
    return builder.createTopology()


def test_a_storm_topology_registers_its_class_with_register_serialization(home: Path) -> None:
    conf = Config()
    conf.registerSerialization(Point)
    assert conf[REGISTER_KEY] == ["tuple_values_components:Point"]
    cluster = LocalCluster(heron_home=home)
    try:
        param = CompleteTopologyParam(None, conf, 120_000)
        results = Testing.completeTopology(cluster, storm_topology(), param)
    finally:
        cluster.shutdown()
    assert sorted(Testing.readTuples(results, "relay"), key=repr) == [
        [Point(1, 2)],
        [Point(3, 4)],
    ]


def test_a_storm_topology_without_the_registration_fails_naming_the_class(home: Path) -> None:
    cluster = LocalCluster(heron_home=home)
    try:
        param = CompleteTopologyParam(None, Config(), 120_000)
        with pytest.raises(UserCodeError) as error:
            Testing.completeTopology(cluster, storm_topology(), param)
    finally:
        cluster.shutdown()
    assert "of component 'src' died" in str(error.value)
    assert f"holds a value of class {POINT}, which tuple values may not hold" in str(error.value)


def push_as_a_peer(run: TopologyRun, marker: Path) -> str:
    """Send every stream manager's data port, as a peer holding the topology's key pair,
    a batch for the sink's task whose values unpickle to ``mkdir(marker)``; the sink's
    instance log name."""
    plan = run.state.get_physical_plan(run.name)
    assert plan is not None
    [sink] = [i for i in plan.instances if i.info.component_name == "sink"]
    batch = tuple_pb2.TupleBatch(
        src_task=1,
        dest_task=sink.info.task_id,
        stream="default",
        src_component="numbers",
        count=1,
        serializer=tuple_pb2.PICKLE,
        values=evil_pickle(marker),
    )
    frames = data_frames(sink.info.task_id, batch.SerializeToString())
    targets: list[Target] = [
        t for t in daemon_ports(run.state, run.name) if t.what.endswith("data port")
    ]
    assert targets
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    transport = Transport(context, TopologyKeys.load(run.working_dir / KEYS_DIR), "test peer")
    try:
        for target in targets:
            sock = transport.client(context.socket(zmq.PUSH))
            sock.setsockopt(zmq.LINGER, 10_000)  # close waits until it is delivered
            sock.connect(f"tcp://{target.host}:{target.port}")
            sock.send_multipart(frames)
            sock.close()
    finally:
        transport.close()
        context.term()
    return sink.instance_id


def test_a_crafted_batch_from_a_peer_with_the_key_runs_nothing_and_is_dropped(
    home: Path, code: Path, tmp_path: Path
) -> None:
    out, marker = tmp_path / "out", tmp_path / "pwned"
    with TopologyRun(numbers_topology(out), heron_home=home, code_root=code) as run:
        run.wait_until(lambda: len(records(out)) >= 20, "20 numbers")
        sink = push_as_a_peer(run, marker)
        needle = "dropped a batch of"
        run.wait_until(lambda: needle in run.logs().get(sink, ""), "the sink to log the drop")
        line = next(x for x in run.logs()[sink].splitlines() if needle in x)
        assert "from component 'numbers', task 1, stream 'default'" in line
        assert "posix.mkdir is not allowed in tuple values" in line
        seen = len(records(out))
        run.wait_until(lambda: len(records(out)) >= seen + 20, "20 more numbers after it")
        run.wait_until(
            lambda: run.counter("sink", "__input-batches-dropped") >= 1, "the drop's metric"
        )
        assert "exit status" not in run.logs().get("executor-1", "")
    assert not marker.exists(), "a crafted pickle was loaded"


def test_the_same_batch_runs_its_code_with_the_fall_back_on(
    home: Path, code: Path, tmp_path: Path
) -> None:
    """The control: the batch reaches the instance's unpickler, which, told to unpickle
    any class, runs what it names (the defence above is the restricted unpickler)."""
    out, marker = tmp_path / "out", tmp_path / "pwned"
    config = {FALL_BACK_KEY: True}
    with TopologyRun(numbers_topology(out), heron_home=home, code_root=code, config=config) as run:
        run.wait_until(lambda: len(records(out)) >= 20, "20 numbers")
        push_as_a_peer(run, marker)
        run.wait_until(marker.exists, "the crafted pickle to run")
