"""Anchoring and acking: tuple trees, multi-anchoring, fail, unanchored emits, double acks."""

from __future__ import annotations

import pytest
from compat_components import Judge, NeverAcks, Pairer, Splitter, TrackedSpout
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

WORDS = ["ok1", "ok2", "bad", "pair-a", "pair-bad-b"]


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", TrackedSpout([[w] for w in WORDS], Fields("word"), events), 2)
    builder.setBolt("splitter", Splitter(), 2).shuffleGrouping("src")
    builder.setBolt("pairer", Pairer()).globalGrouping("src")
    builder.setBolt("judge", Judge(), 2).shuffleGrouping("splitter").shuffleGrouping("pairer")
    builder.setBolt("blackhole", NeverAcks()).shuffleGrouping("splitter", "loose")
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return complete(tmp_path_factory.mktemp("anchoring"), topology, workers)


def test_a_tree_is_acked_once_every_tuple_in_it_is_acked(run: Run) -> None:
    assert run.outcomes("src")["ack"] == [["ok1"], ["ok2"]]


def test_a_failed_tuple_fails_its_tree_and_every_tree_it_is_anchored_to(run: Run) -> None:
    # "bad-1"/"bad-2" fail; "pair-a+pair-bad-b" is anchored to both pair roots and fails.
    assert run.outcomes("src")["fail"] == [["bad"], ["pair-a"], ["pair-bad-b"]]


def test_children_are_emitted_anchored_and_unanchored_ones_do_not_hold_the_tree(
    run: Run,
) -> None:
    assert sorted(run.tuples("splitter")) == sorted([w + s] for w in WORDS for s in ("-1", "-2"))
    assert sorted(run.tuples("splitter", "loose")) == sorted([w] for w in WORDS)
    assert run.tuples("pairer") == [["pair-a+pair-bad-b"]]


def test_acking_twice_is_ignored_with_a_warning_naming_the_component(run: Run) -> None:
    warnings = [
        line for line in run.logs.splitlines() if "already acked or failed, ignored" in line
    ]
    assert warnings and all("component 'judge'" in line for line in warnings)
