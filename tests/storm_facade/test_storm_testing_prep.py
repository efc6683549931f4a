"""completeTopology's preparation (mocked spouts, capture bolt) and the test components."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builder_components import Sentences, Sink, Split
from storm_support import FakeContext, FakeSpoutCollector

from heron_core.errors import TopologyValidationError
from heron_core.plan import GroupingKind
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import TopologyContext
from storm_compat.testing import FixedTuple, FixedTupleSpout, MockedSources, Testing
from storm_compat.testing._complete import CaptureBolt, _prepare
from storm_compat.topology import StormTopology, TopologyBuilder
from storm_compat.tuple import Fields


def topology() -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences(), 2)
    builder.setBolt("split", Split()).shuffleGrouping("sentences")
    builder.setBolt("sink", Sink()).shuffleGrouping("split").directGrouping("sentences", "pings")
    return builder.createTopology()


def test_mocked_spouts_keep_their_declarations_and_a_capture_bolt_sees_every_stream(
    tmp_path: Path,
) -> None:
    mocked = MockedSources()
    mocked.addMockData("sentences", ["a b"], ["c"])
    mocked.addMockData("sentences", "lengths", ["a b", 3])
    prepared, totals = _prepare(topology(), mocked, tmp_path)
    assert totals == {"sentences": 3}
    spout = prepared.components[0]
    assert isinstance(spout.component, FixedTupleSpout)
    assert spout.component._report_dir == str(tmp_path)
    assert spout.parallelism_hint == 2
    assert [s.stream_id for s in spout.streams] == ["default", "lengths", "pings"]
    capture = prepared.components[-1]
    assert isinstance(capture.component, CaptureBolt) and capture.id.startswith("capture-")
    plan = prepared.to_logical_plan("t")
    assert [(i.component, i.stream, i.grouping) for i in plan.component(capture.id).inputs] == [
        ("sentences", "default", GroupingKind.LOWEST),
        ("sentences", "lengths", GroupingKind.LOWEST),
        ("sentences", "pings", GroupingKind.DIRECT),
        ("split", "default", GroupingKind.LOWEST),
    ]


def test_unmocked_spouts_must_be_fixed_tuple_spouts(tmp_path: Path) -> None:
    with pytest.raises(TopologyValidationError, match="'sentences': cannot complete a topology"):
        _prepare(topology(), None, tmp_path)
    builder = TopologyBuilder()
    original = FixedTupleSpout([["a"], ["b"]], Fields("sentence"))
    builder.setSpout("fixed", original)
    _, totals = _prepare(builder.createTopology(), None, tmp_path)
    assert totals == {"fixed": 2}
    assert original._report_dir is None  # the topology's own object is left alone
    mocked = MockedSources({"split": [["x"]]})
    with pytest.raises(TopologyValidationError, match="'split': mocked data for a component"):
        _prepare(topology(), mocked, tmp_path)


def test_fixed_tuple_spout_emits_its_share_once_and_reports_acks_and_fails(
    tmp_path: Path,
) -> None:
    spout = FixedTupleSpout([["a"], FixedTuple(["b"], "other"), ["c"], ["d"]])
    spout._report_dir = str(tmp_path)
    native = FakeSpoutCollector()
    context = TopologyContext(FakeContext("fixed", task=5, tasks={"fixed": [4, 5]}))
    spout.open({}, context, SpoutOutputCollector(native))
    for _ in range(3):
        spout.nextTuple()
    assert [(values, stream) for values, _, stream, _, _ in native.calls] == [
        (["b"], "other"),
        (["d"], "default"),
    ]
    assert len({call[1] for call in native.calls}) == 2  # a fresh message id each
    spout.ack(native.calls[0][1])
    spout.fail(native.calls[1][1])
    spout.close()
    assert (tmp_path / "done-fixed-5").read_text() == "ack\nfail\n"


def test_read_tuples_and_multiseteq() -> None:
    results: dict[str, Any] = {"a": [FixedTuple([1]), FixedTuple([2], "s"), FixedTuple([3])]}
    assert Testing.readTuples(results, "a") == [[1], [3]]
    assert Testing.readTuples(results, "a", "s") == [[2]]
    assert Testing.readTuples(results, "missing") == []
    assert Testing.multiseteq([[1], [1], [2]], [[2], [1], [1]])
    assert not Testing.multiseteq([[1], [1]], [[1], [2]])
    assert not Testing.multiseteq([[1]], [[1], [1]])
