"""Groupings: which task of the subscribing bolt gets each tuple."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from compat_components import Director, ModuloGrouping, Tagger
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import StormTopology
from storm_compat.testing import FixedTupleSpout
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

WORDS = ["apple", "berry", "cherry", "date"]
INPUT = [[WORDS[n % 4], n] for n in range(12)]
TAGGED = ["word", "n"]


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", FixedTupleSpout(INPUT, Fields("word", "n")), 2)
    builder.setBolt("shuffle", Tagger(TAGGED), 2).shuffleGrouping("src")
    builder.setBolt("fields", Tagger(TAGGED), 3).fieldsGrouping("src", Fields("word"))
    builder.setBolt("global", Tagger(TAGGED), 2).globalGrouping("src")
    builder.setBolt("all", Tagger(TAGGED), 2).allGrouping("src")
    builder.setBolt("none", Tagger(TAGGED), 2).noneGrouping("src")
    builder.setBolt("local", Tagger(TAGGED), 2).localOrShuffleGrouping("src")
    builder.setBolt("partial", Tagger(TAGGED), 2).partialKeyGrouping("src", Fields("word"))
    builder.setBolt("custom", Tagger(TAGGED), 2).customGrouping("src", ModuloGrouping())
    builder.setBolt("director", Director("direct"), 1).shuffleGrouping("src")
    builder.setBolt("direct", Tagger(TAGGED), 2).directGrouping("director", "direct")
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return complete(tmp_path_factory.mktemp("groupings"), topology, workers)


def inputs_of(run: Run, bolt: str) -> list[list[Any]]:
    return sorted(values for _, _, *values in run.tuples(bolt))


def tasks_by_word(run: Run, bolt: str) -> dict[str, set[int]]:
    tasks = defaultdict(set)
    for task, _, word, _ in run.tuples(bolt):
        tasks[word].add(task)
    return tasks


def test_the_spout_emits_every_tuple_once(run: Run) -> None:
    assert sorted(run.tuples("src")) == sorted(INPUT)


@pytest.mark.parametrize("bolt", ["shuffle", "none", "local", "partial", "fields", "global"])
def test_one_task_gets_each_tuple(run: Run, bolt: str) -> None:
    assert inputs_of(run, bolt) == sorted(INPUT)


def test_fields_grouping_sends_each_word_to_one_task(run: Run) -> None:
    assert all(len(tasks) == 1 for tasks in tasks_by_word(run, "fields").values())


def test_partial_key_grouping_splits_a_word_between_at_most_two_tasks(run: Run) -> None:
    assert all(len(tasks) <= 2 for tasks in tasks_by_word(run, "partial").values())


def test_global_grouping_sends_everything_to_the_lowest_task(run: Run) -> None:
    assert {(task, min(tasks)) for task, tasks, *_ in run.tuples("global")} == {
        (min(run.tuples("global")[0][1]),) * 2
    }


def test_all_grouping_sends_each_tuple_to_every_task(run: Run) -> None:
    tagged = run.tuples("all")
    tasks = tagged[0][1]
    assert sorted((task, word, n) for task, _, word, n in tagged) == sorted(
        (task, word, n) for task in tasks for word, n in INPUT
    )


@pytest.mark.parametrize("bolt", ["custom", "direct"])
def test_custom_and_direct_groupings_pick_task_n_modulo_tasks(run: Run, bolt: str) -> None:
    tagged = run.tuples(bolt)
    assert inputs_of(run, bolt) == sorted(INPUT)
    assert all(task == tasks[n % len(tasks)] for task, tasks, _, n in tagged)
