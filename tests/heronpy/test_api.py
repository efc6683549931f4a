"""The heronpy layer: heronpy 0.20.5's module paths and names, and where it differs from the
native API (emit's result, DIRECT, config typing and defaults, global metrics)."""

from __future__ import annotations

import importlib
import pickle
from typing import Any

import pytest

import heronpy.api.global_metrics as global_metrics
from heron_core.api import Tuple
from heron_core.api import shell_component as shell
from heron_core.errors import TopologyValidationError
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.stream import Grouping, Stream
from heronpy.api.topology import TopologyBuilder

PUBLIC = {
    "heronpy.api.topology": {"Topology", "TopologyBuilder", "TopologyType"},
    "heronpy.api.spout.spout": {"Spout"},
    "heronpy.api.spout.base_spout": {"BaseSpout"},
    "heronpy.api.bolt.bolt": {"Bolt"},
    "heronpy.api.bolt.base_bolt": {"BaseBolt"},
    "heronpy.api.bolt.window_bolt": {"SlidingWindowBolt", "TumblingWindowBolt", "WindowContext"},
    "heronpy.api.component.base_component": {"BaseComponent"},
    "heronpy.api.component.component_spec": {"GlobalStreamId", "HeronComponentSpec"},
    "heronpy.api.stream": {"Grouping", "Stream"},
    "heronpy.api.custom_grouping": {"ICustomGrouping"},
    "heronpy.api.state.state": {"HashMapState", "State"},
    "heronpy.api.state.stateful_component": {"StatefulComponent"},
    "heronpy.api.topology_context": {"TopologyContext"},
    "heronpy.api.global_metrics": {"incr", "init", "metricsContainer", "safe_incr"},
    "heronpy.api.serializer": {"IHeronSerializer", "PythonSerializer", "default_serializer"},
    "heronpy.api.tuple": {"Tuple", "TupleHelper"},
    "heronpy.api.metrics": {
        "AssignableMetrics",
        "CountMetric",
        "IMetric",
        "IReducer",
        "MeanReducer",
        "MultiAssignableMetrics",
        "MultiCountMetric",
        "MultiReducedMetric",
        "ReducedMetric",
    },
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_heronpys_module_paths_hold_its_names(module: str) -> None:
    imported = importlib.import_module(module)
    assert set(imported.__all__) == PUBLIC[module]
    assert all(hasattr(imported, name) for name in imported.__all__)


def test_api_constants_and_task_hook_names() -> None:
    constants = importlib.import_module("heronpy.api.api_constants")
    assert constants.TOPOLOGY_STATEFUL_CHECKPOINT_INTERVAL_SECONDS == (
        "topology.stateful.checkpoint.interval.seconds"
    )
    assert constants.TopologyReliabilityMode.EFFECTIVELY_ONCE == "EFFECTIVELY_ONCE"
    hooks = importlib.import_module("heronpy.api.task_hook")
    assert hooks.EmitInfo._fields == ("values", "stream_id", "task_id", "out_tasks")


class Upper(Bolt):
    outputs = ["word"]

    def process(self, tup: Tuple) -> None:
        self.result = self.emit([tup.values[0].upper()], anchors=[tup], need_task_ids=True)


class TaskIds:
    def emit(self, *args: Any) -> list[int]:
        return [4]


def test_bolt_emit_returns_none_and_components_take_a_delegate() -> None:
    bolt = Upper(delegate="heronpy's runtime object")
    bolt._collector = TaskIds()  # type: ignore[assignment]
    bolt.process(Tuple("1", "word_spout", "default", 3, ["heron"]))
    assert bolt.result is None
    assert bolt.delegate == "heronpy's runtime object"
    assert Bolt.is_tick(Tuple("__tick", "__system", "__tick", None, None))


def test_direct_is_refused_naming_the_component() -> None:
    builder = TopologyBuilder("direct")
    words = builder.add_spout("word_spout", shell(["./words"], ["word"]))
    builder.add_bolt("count_bolt", shell(["./count"], []), inputs={words: Grouping.DIRECT})
    with pytest.raises(TopologyValidationError, match="'count_bolt': input word_spout:default"):
        builder.build()
    with pytest.raises(NotImplementedError, match="direct streams are not supported"):
        Stream(["word"], direct=True)
    assert Grouping.LOCAL_OR_SHUFFLE == Grouping.SHUFFLE  # heronpy's alias


def test_config_is_typed_as_heron_types_it_over_heronpys_defaults() -> None:
    builder = TopologyBuilder("typed")
    builder.add_spout("word_spout", shell(["./words"], ["word"]), config={"my.limit": "7"})
    builder.set_config({"topology.message.timeout.secs": "60", "topology.debug": "True"})
    plan = builder.build()
    assert plan.config["topology.message.timeout.secs"] == 60
    assert plan.config["topology.debug"] is True
    assert plan.config["topology.reliability.mode"] == "ATMOST_ONCE"
    assert plan.component("word_spout").config == {"my.limit": 7}
    with pytest.raises(TypeError, match="needs to be dict"):
        builder.set_config([("topology.debug", True)])  # type: ignore[arg-type]


def test_add_spec_refuses_what_heronpy_refuses() -> None:
    builder = TopologyBuilder("specs")
    builder.add_spout("word_spout", shell(["./words"], ["word"]))
    with pytest.raises(ValueError, match="duplicate spec name: 'word_spout'"):
        builder.add_spout("word_spout", shell(["./words"], ["word"]))
    with pytest.raises(ValueError, match="'config' is a reserved name"):
        builder.add_spout("config", shell(["./words"], ["word"]))
    with pytest.raises(ValueError, match="cannot be 'Topology'"):
        TopologyBuilder("Topology")


class Recorder:
    def __init__(self) -> None:
        self.registered: list[tuple[str, Any, float]] = []

    def register_metric(self, name: str, metric: Any, bucket: float) -> None:
        self.registered.append((name, metric, bucket))


class Counting(Bolt):
    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.seen = list(context.registered)


def test_global_metrics_are_registered_before_initialize_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(global_metrics, "registered", False)
    context = Recorder()
    bolt = Counting()
    bolt.initialize({"heron.metrics.export.interval.sec": 2}, context)
    assert bolt.seen == [("__auto__", global_metrics.metricsContainer, 2.0)]
    Counting().initialize({}, context)
    assert len(context.registered) == 1


class First(ICustomGrouping):
    def prepare(self, context: Any, component: str, stream: str, target_tasks: list[int]) -> None:
        self.target = target_tasks[0]

    def choose_tasks(self, values: list[Any]) -> list[int]:
        return [self.target]


def test_custom_groupings_take_heronpys_forms() -> None:
    assert Grouping.custom(First()).custom_object
    assert Grouping.custom_serialized(pickle.dumps(First()), is_java=False).custom_object
    with pytest.raises(NotImplementedError, match="implemented in Java"):
        Grouping.custom_serialized(pickle.dumps(First()))
    with pytest.raises(NotImplementedError, match="Java custom groupings are not supported"):
        Grouping.custom_object("org.example.Grouping", [])
    with pytest.raises(TypeError, match="ICustomGrouping instance or its class path"):
        Grouping.custom(42)  # type: ignore[arg-type]
