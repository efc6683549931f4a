"""The router's size limits: ``heron.instance.max.tuple.bytes`` and the frame limit.

A batch over the limits is split so that every batch sent fits (its serialized values under
the tuple limit, its frame under the frame limit), in emit order and with each copy's anchors;
a tuple that alone passes the tuple limit is refused with an error that names the topology,
component, task, stream, the tuple's size and the key, after the rest of its batch was sent.
These run compiled under ``make test`` and as plain Python under ``make test-pure``.
"""

from __future__ import annotations

import marshal
import pickle
import random
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from instance_support import copies, physical_plan

from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder, Tuple
from heron_core.config import build_config
from heron_core.errors import ConfigurationError, UserCodeError
from heron_core.instance._acking import AckSender, InFlight
from heron_core.instance._anchoring import Acker, EdgeIds
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._plan import PlanView
from heron_core.instance._router import (
    DEFAULT_MAX_TUPLE_BYTES,
    MAX_TUPLE_KEY,
    Router,
)
from heron_core.instance._spout import SpoutCollector
from heron_core.instance._values import ValuePolicy
from heron_core.network import DEFAULT_MAX_FRAME_BYTES, MAX_FRAME_KEY
from heron_core.proto import tuple_pb2
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import FixedSpout, RecordingBolt, wait_for_records
from heron_core.testing.processes import isolated_home


class Src(Spout):
    outputs = [Stream(["blob"]), Stream(["blob"], name="big")]


class Sink(Bolt):
    outputs = [Stream(["blob"])]

    def process(self, tup: Any) -> None:
        pass


class Odd:
    """A value marshal refuses: batches of its stream are pickled."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Odd) and other.text == self.text


class Wire:
    """What the router sends, with every frame's size checked against the limit."""

    def __init__(self, frame_limit: int) -> None:
        self.frame_limit = frame_limit
        self.batches: list[tuple[int, str, list[Any], Any, int]] = []

    def send_data(self, task: int, batch: bytes) -> None:
        assert len(batch) <= self.frame_limit, "a frame over the limit was sent"
        decoded = tuple_pb2.TupleBatch.FromString(batch)
        if decoded.serializer == tuple_pb2.MARSHAL:
            rows = marshal.loads(decoded.values)
        else:
            rows = pickle.loads(decoded.values)
        assert decoded.count == len(rows)
        roots = copies(decoded) if decoded.roots else None
        self.batches.append((task, decoded.stream, rows, roots, len(decoded.values)))

    def rows(self) -> list[Any]:
        return [row for batch in self.batches for row in batch[2]]

    def send(self, frames: Any) -> None:  # the AckSender's acking frames
        pass


def plan() -> PlanView:
    b = TopologyBuilder("limits")
    src = b.add_spout("src", Src, par=1)
    mid = b.add_bolt(
        "mid", Sink, par=1, inputs={src: Grouping.SHUFFLE, src["big"]: Grouping.SHUFFLE}
    )
    b.add_bolt("sink", Sink, par=1, inputs={mid: Grouping.SHUFFLE})
    return physical_plan(b.build())


def router(
    component: str = "src",
    *,
    tuple_limit: int = 4096,
    frame_limit: int = 16384,
    batch_max: int = 100,
    acking: bool = False,
) -> tuple[Router, Wire]:
    wire = Wire(frame_limit)
    view = plan()
    task = view.component_tasks[component][0]
    made = Router(
        view,
        component,
        task,
        1,
        wire,
        batch_max,
        lambda *a: None,
        rng=random.Random(1),
        acking=acking,
        max_tuple_bytes=tuple_limit,
        max_frame_bytes=frame_limit,
        values=ValuePolicy([Odd]),  # registered: its stream's batches are pickled
    )
    return made, wire


def test_the_tuple_limit_must_stay_below_the_frame_limit() -> None:
    assert DEFAULT_MAX_TUPLE_BYTES < DEFAULT_MAX_FRAME_BYTES
    with pytest.raises(ConfigurationError, match=f"{MAX_TUPLE_KEY}.*{MAX_FRAME_KEY}"):
        build_config(topology_config={MAX_TUPLE_KEY: 4 << 20, MAX_FRAME_KEY: 4 << 20})


def test_a_batch_that_fits_goes_out_whole() -> None:
    r, wire = router()
    for i in range(10):
        r.emit([f"v{i}"])
    r.flush()
    assert [(task, rows) for task, _, rows, _, _ in wire.batches] == [
        (2, [[f"v{i}"] for i in range(10)])
    ]


def test_a_batch_over_the_tuple_limit_is_split_in_order_into_batches_under_it() -> None:
    r, wire = router(tuple_limit=4096, batch_max=100)
    sent = [[f"{i:04d}" + "x" * 1000] for i in range(20)]  # ~20 kB in one batch of 20
    for values in sent:
        r.emit(values)
    r.flush()
    assert wire.rows() == sent
    assert len(wire.batches) >= 5
    assert all(size <= 4096 for *_, size in wire.batches)


def test_a_tuple_over_the_limit_is_refused_naming_where_stream_size_and_key() -> None:
    r, wire = router(tuple_limit=4096)
    r.emit(["before"], "big")
    r.emit(["y" * 5000], "big")
    r.emit(["after"], "big")
    with pytest.raises(UserCodeError) as info:
        r.flush()
    message = str(info.value)
    for part in (
        "topology 'limits', component 'src', task 1",
        "stream 'big'",
        "is 50",  # the serialized size: 5000 characters and marshal's few bytes of framing
        "bytes serialized (marshal)",
        "4096-byte limit of heron.instance.max.tuple.bytes",
        "it was not sent",
        "the batch's 2 other tuples were sent",
        f"below {MAX_FRAME_KEY}",
    ):
        assert part in message, (part, message)
    assert wire.rows() == [["before"], ["after"]]  # the others are sent, in order
    r.flush()  # nothing is left behind to fail again
    assert len(wire.rows()) == 2


def test_the_error_comes_from_the_emit_that_fills_the_batch() -> None:
    r, wire = router(tuple_limit=4096, batch_max=3)
    r.emit(["z" * 9000])
    r.emit(["ok"])
    with pytest.raises(UserCodeError, match=r"stream 'default' is 90\d\d bytes"):
        r.emit(["ok2"])
    assert wire.rows() == [["ok"], ["ok2"]]


def test_pickled_batches_are_split_and_refused_in_pickle_sizes() -> None:
    r, wire = router(tuple_limit=4096)
    sent = [[Odd("a" * 900)] for _ in range(10)]
    for values in sent:
        r.emit(values)
    r.emit([Odd("b" * 6000)])
    with pytest.raises(UserCodeError, match=r"bytes serialized \(pickle\)"):
        r.flush()
    assert wire.rows() == sent
    assert len(wire.batches) >= 3


def bolt(acking: bool, **limits: Any) -> tuple[Router, Wire, BoltCollector]:
    r, wire = router("mid", acking=acking, **limits)
    acker = Acker(AckSender(wire), "here", lambda what: None, EdgeIds(random.Random(2).getrandbits))  # type: ignore[arg-type]
    return r, wire, BoltCollector(r, acker)


def anchored_input(roots: int) -> Tuple:
    tup = Tuple("in", "src", "default", 1, ["x"])
    tup._roots = [(1, root, 7) for root in range(1, roots + 1)]
    tup._ackval = 0
    return tup


def test_split_batches_keep_each_copy_s_anchors() -> None:
    r, wire, collector = bolt(True, tuple_limit=4096)
    inputs = [anchored_input(1 + i % 3) for i in range(12)]
    for i, tup in enumerate(inputs):
        collector.emit([f"{i:02d}" + "w" * 1000], anchors=[tup])
    r.flush()
    assert [row[0][:2] for row in wire.rows()] == [f"{i:02d}" for i in range(12)]
    assert len(wire.batches) >= 3
    roots = [anchors for batch in wire.batches for anchors in batch[3]]
    assert [sorted(root for _, root, _ in anchors) for anchors in roots] == [
        list(range(1, 2 + i % 3)) for i in range(12)
    ]


def test_a_tuple_whose_anchors_pass_the_frame_limit_is_refused_naming_the_frame_key() -> None:
    r, wire, collector = bolt(True, tuple_limit=2048, frame_limit=8192)
    collector.emit(["small"], anchors=[anchored_input(1)])
    collector.emit(["heavy"], anchors=[anchored_input(2000)])  # ~50 kB of anchors
    with pytest.raises(UserCodeError) as info:
        r.flush()
    message = str(info.value)
    assert "component 'mid'" in message and "with 2000 anchors" in message
    assert "8192-byte limit of heron.network.max.frame.bytes" in message
    assert wire.rows() == [["small"]]


def test_a_spout_emit_past_the_limit_refuses_only_that_tuple() -> None:
    r, wire = router(tuple_limit=4096, acking=True, batch_max=2)
    in_flight = InFlight(lambda: 0.0)
    collector = SpoutCollector(
        r,
        AckSender(wire),
        in_flight,
        deque(),
        EdgeIds(random.Random(3).getrandbits),
    )
    collector.emit(["fine"], "id-1")
    with pytest.raises(UserCodeError, match=r"heron\.instance\.max\.tuple\.bytes"):
        collector.emit(["q" * 8000], "id-2")
    assert wire.rows() == [["fine"]]


@pytest.fixture(name="home")
def home_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; on failure every log under it is printed; no process may outlive it."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home


@pytest.mark.processes
def test_an_oversized_emit_ends_the_instance_with_the_error_in_its_log(
    home: Path, tmp_path: Path
) -> None:
    """Through the process model: the spout's instance logs the error naming component,
    stream, size and key, and exits 1 (the executor restarts it, as Storm restarts a worker);
    the tuple before it still reaches the bolt, the oversized one never."""
    out = tmp_path / "records"
    b = TopologyBuilder("oversized")
    src = b.add_spout("src", FixedSpout(["v"], [["small"], ["x" * 5000], ["after"]]), par=1)
    b.add_bolt("sink", RecordingBolt(out), par=1, inputs={src: Grouping.SHUFFLE})
    with TopologyRun(b.build(), heron_home=home, config={MAX_TUPLE_KEY: 4096}) as run:
        run.wait_until(lambda: "exit status 1" in run.logs().get("executor-1", ""), "a crash")
        log = next(text for name, text in run.logs().items() if "_src_" in name)
        assert "topology 'oversized', component 'src', task" in log
        assert "a tuple emitted on stream 'default' is 50" in log
        assert "over the 4096-byte limit of heron.instance.max.tuple.bytes" in log
        assert "user code raised; the instance exits" in log
        values = {r["values"][0] for r in wait_for_records(out, 1)}
        assert "small" in values and values <= {"small", "after"}  # "after": if in its batch


def test_a_route_s_batches_shrink_after_one_over_the_byte_target_and_grow_back() -> None:
    r, wire = router(tuple_limit=1 << 20, frame_limit=4 << 20, batch_max=64)
    r.batch_bytes = 8192
    for i in range(64):
        r.emit([f"{i:03d}" + "b" * 400])  # 64 x ~0.4 kB: one batch of ~26 kB
    for i in range(64):
        r.emit([f"{i:03d}" + "b" * 400])
    sizes = [len(rows) for _, _, rows, _, _ in wire.batches]
    assert sizes[:4] == [64, 32, 16, 16]  # halved after each batch over 8 kB, then it fits
    assert all(size <= 8192 for *_, size in wire.batches[3:])
    route = r.routes["default"]
    wire.batches.clear()
    for _ in range(64 * 5):
        r.emit(["s"])  # tiny tuples: full batches far under the target double the limit
    assert route.limit == 64
    assert [len(rows) for _, _, rows, _, _ in wire.batches][:3] == [16, 32, 64]
