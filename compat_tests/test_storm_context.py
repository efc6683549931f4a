"""TopologyContext: what spout and bolt tasks learn about themselves and the topology."""

from __future__ import annotations

import pytest
from compat_components import Introspector, TrackedSpout
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", TrackedSpout([["a"], ["b"], ["c"], ["d"]], Fields("word"), events), 2)
    builder.setBolt("look", Introspector(), 3).fieldsGrouping("src", Fields("word"))
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return complete(tmp_path_factory.mktemp("context"), topology, workers)


def test_bolt_tasks_know_their_id_index_component_and_sources(run: Run) -> None:
    contexts = {c["task"]: c for _, c, _ in run.tuples("look")}
    for task, context in contexts.items():
        assert context["component"] == "look" and len(context["tasks"]) == 3
        assert context["tasks"] == sorted(context["tasks"])
        assert context["index"] == context["tasks"].index(task)
        assert context["sources"] == [["src", "default", "FIELDS"]]
        assert context["fields"] == ["word", "context", "conf"]
        assert context["storm_id"].startswith("topologytest-")
        assert list(context["targets"]) == ["default"]
        (capturer,) = context["targets"]["default"]  # only completeTopology's capturing bolt
        assert capturer.startswith("capture-")


def test_spout_tasks_know_their_targets(run: Run) -> None:
    opened = [e["values"] for e in run.events("src") if e["event"] == "open"]
    assert sorted(c["index"] for c in opened) == [0, 1]
    for context in opened:
        assert context["component"] == "src" and context["sources"] == []
        assert context["fields"] == ["word"]
        assert sorted(context["targets"]["default"])[1] == "look"
    bolt_ids = {c["storm_id"] for _, c, _ in run.tuples("look")}
    assert {c["storm_id"] for c in opened} == bolt_ids and len(bolt_ids) == 1
