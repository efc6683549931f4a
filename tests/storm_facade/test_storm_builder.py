"""TopologyBuilder -> StormTopology -> the kernel's logical plan."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from builder_components import FirstTask, Sentences, Sink, Split, Unpicklable

from heron_core.errors import ConfigurationError, TopologyValidationError
from heron_core.plan import GroupingKind, LogicalPlan, PythonSpec
from storm_compat import Config
from storm_compat.topology import TopologyBuilder
from storm_compat.topology._adapters import (
    BasicBoltAdapter,
    BoltAdapter,
    CustomGroupingAdapter,
    SpoutAdapter,
)
from storm_compat.tuple import Fields


def word_count(builder: TopologyBuilder | None = None) -> TopologyBuilder:
    builder = builder or TopologyBuilder()
    builder.setSpout("sentences", Sentences(), 2)
    builder.setBolt("split", Split(), 3).shuffleGrouping("sentences").allGrouping(
        "sentences", "lengths"
    )
    builder.setBolt("sink", Sink()).fieldsGrouping("split", Fields("word")).directGrouping(
        "sentences", "pings"
    )
    return builder


def plan_of(builder: TopologyBuilder, config: Any = None) -> LogicalPlan:
    return builder.createTopology().to_logical_plan("wc", config)


def test_components_streams_and_groupings_reach_the_plan() -> None:
    plan = plan_of(word_count())
    assert [(c.name, c.is_spout, c.parallelism) for c in plan.components] == [
        ("sentences", True, 2),
        ("split", False, 3),
        ("sink", False, 1),
    ]
    sentences = plan.component("sentences")
    assert [(s.stream_id, s.fields, s.direct) for s in sentences.outputs] == [
        ("default", ("sentence",), False),
        ("lengths", ("sentence", "length"), False),
        ("pings", ("n",), True),
    ]
    split, sink = plan.component("split"), plan.component("sink")
    assert [(i.component, i.stream, i.grouping) for i in split.inputs] == [
        ("sentences", "default", GroupingKind.SHUFFLE),
        ("sentences", "lengths", GroupingKind.ALL),
    ]
    assert [(i.component, i.stream, i.grouping, i.fields) for i in sink.inputs] == [
        ("split", "default", GroupingKind.FIELDS, ("word",)),
        ("sentences", "pings", GroupingKind.DIRECT, ()),
    ]
    assert split.config == {"topology.tick.tuple.freq.secs": 2.0}


def test_components_run_in_adapters_that_pickle_the_storm_object() -> None:
    plan = plan_of(word_count())
    kinds = []
    for comp in plan.components:
        assert isinstance(comp.spec, PythonSpec)
        adapter = pickle.loads(comp.spec.pickled_object)
        kinds.append(type(adapter))
        user = adapter.spout if isinstance(adapter, SpoutAdapter) else adapter.bolt
        assert type(user).__module__ == "builder_components"
    assert kinds == [SpoutAdapter, BasicBoltAdapter, BoltAdapter]


@pytest.mark.parametrize(
    ("method", "args", "kind", "fields"),
    [
        ("shuffleGrouping", (), GroupingKind.SHUFFLE, ()),
        ("localOrShuffleGrouping", (), GroupingKind.LOCAL_OR_SHUFFLE, ()),
        ("noneGrouping", (), GroupingKind.NONE, ()),
        ("globalGrouping", (), GroupingKind.LOWEST, ()),
        ("allGrouping", (), GroupingKind.ALL, ()),
        (
            "fieldsGrouping",
            (Fields("sentence", "length"),),
            GroupingKind.FIELDS,
            ("sentence", "length"),
        ),
        ("partialKeyGrouping", (["length"],), GroupingKind.PARTIAL_KEY, ("length",)),
    ],
)
def test_every_grouping_with_a_stream_id(
    method: str, args: tuple[Any, ...], kind: GroupingKind, fields: tuple[str, ...]
) -> None:
    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences())
    getattr(builder.setBolt("sink", Sink()), method)("sentences", "lengths", *args)
    (inp,) = plan_of(builder).component("sink").inputs
    assert (inp.stream, inp.grouping, inp.fields) == ("lengths", kind, fields)


def test_custom_grouping_is_pickled_in_an_adapter() -> None:
    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences())
    builder.setBolt("sink", Sink(), 2).customGrouping("sentences", FirstTask())
    (inp,) = plan_of(builder).component("sink").inputs
    assert inp.grouping is GroupingKind.CUSTOM
    adapter = pickle.loads(inp.custom)
    assert isinstance(adapter, CustomGroupingAdapter) and isinstance(adapter.grouping, FirstTask)
    with pytest.raises(TypeError, match="needs a CustomStreamGrouping"):
        builder.setBolt("other", Sink()).customGrouping("sentences", "default", object())


def test_parallelism_is_num_tasks_else_the_hint_capped_by_max_task_parallelism() -> None:
    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences(), 4).setNumTasks(6)
    builder.setBolt("split", Split(), 5).shuffleGrouping("sentences").setMaxTaskParallelism(2)
    builder.setBolt("sink", Sink(), 3).shuffleGrouping("split")
    conf = Config()
    conf.setMaxTaskParallelism(3)
    plan = plan_of(builder, conf)
    assert [c.parallelism for c in plan.components] == [3, 2, 3]
    assert [c.parallelism for c in plan_of(builder).components] == [6, 2, 3]


def test_declarer_settings_become_component_config() -> None:
    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences()).setMaxSpoutPending(10).setDebug(True).setMemoryLoad(
        256, 64
    ).setCPULoad(50).addConfigurations({"my.key": 1}).addConfiguration(
        Config.TOPOLOGY_MESSAGE_TIMEOUT_SECS, 5
    )
    assert plan_of(builder).component("sentences").config == {
        "my.key": 1,
        "topology.component.cpu": 0.5,
        "topology.component.ram": 320 * 2**20,
        "topology.debug": True,
        "topology.max.spout.pending": 10,
        "topology.message.timeout.secs": 5,
    }


def test_misspelt_and_invalid_config_keys_are_errors() -> None:
    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences()).addConfiguration("topology.max.spout.pendng", 1)
    with pytest.raises(ConfigurationError, match=r"component 'sentences'.*did you mean"):
        plan_of(builder)
    good = word_count()
    with pytest.raises(
        ConfigurationError, match=r"'topology.stmgrs' \(from the config of topology"
    ):
        plan_of(good, {"topology.workers": "two"})
    low = TopologyBuilder()
    low.setSpout("sentences", Sentences()).setMemoryLoad(1)
    with pytest.raises(ConfigurationError, match=r"topology\.component\.ram"):
        plan_of(low)


def test_topology_config_is_validated_and_canonical() -> None:
    conf = Config()
    conf.setNumWorkers(2)
    conf.setNumAckers(0)
    conf.registerSerialization(Fields)
    conf["user.key"] = "x"
    config = plan_of(word_count(), conf).config
    assert config["topology.stmgrs"] == 2 and config["topology.acker.executors"] == 0
    assert config["topology.kryo.register"] == ["storm_compat.tuple._fields:Fields"]
    assert config["user.key"] == "x"


def test_definition_errors_name_the_component() -> None:
    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences())
    with pytest.raises(TopologyValidationError, match="'sentences': the topology already has"):
        builder.setBolt("sentences", Sink())
    with pytest.raises(TopologyValidationError, match="'bad': setSpout needs an IRichSpout"):
        builder.setSpout("bad", Sink())  # type: ignore[arg-type]
    with pytest.raises(TopologyValidationError, match="'bad': setBolt needs an IRichBolt"):
        builder.setBolt("bad", Sentences())  # type: ignore[arg-type]

    undeclared_field = TopologyBuilder()
    undeclared_field.setSpout("sentences", Sentences())
    undeclared_field.setBolt("sink", Sink()).fieldsGrouping("sentences", Fields("word"))
    with pytest.raises(
        TopologyValidationError,
        match="topology 'wc', component 'sink': FIELDS grouping on field 'word', which "
        "'sentences' stream 'default' does not declare; declared fields: sentence",
    ):
        plan_of(undeclared_field)

    undeclared_stream = TopologyBuilder()
    undeclared_stream.setSpout("sentences", Sentences())
    undeclared_stream.setBolt("sink", Sink()).shuffleGrouping("sentences", "nope")
    with pytest.raises(
        TopologyValidationError, match="'sink': input from 'sentences' stream 'nope'"
    ):
        plan_of(undeclared_stream)

    not_direct = TopologyBuilder()
    not_direct.setSpout("sentences", Sentences())
    not_direct.setBolt("sink", Sink()).shuffleGrouping("sentences", "pings")
    with pytest.raises(TopologyValidationError, match=r"'sink': SHUFFLE grouping on .* direct"):
        plan_of(not_direct)

    unpicklable = TopologyBuilder()
    unpicklable.setSpout("sentences", Sentences())
    unpicklable.setBolt("sink", Unpicklable()).shuffleGrouping("sentences")
    with pytest.raises(TopologyValidationError, match="'sink': cannot be serialized"):
        plan_of(unpicklable)

    with pytest.raises(TopologyValidationError, match="needs a name"):
        word_count().createTopology().to_logical_plan()


def test_grouping_arguments_are_checked() -> None:
    declarer = TopologyBuilder().setBolt("sink", Sink())
    with pytest.raises(TypeError, match="'sink': fieldsGrouping needs non-empty Fields"):
        declarer.fieldsGrouping("sentences", Fields())
    with pytest.raises(TypeError, match=r"fieldsGrouping\(componentId, \[streamId,\] fields\)"):
        declarer.fieldsGrouping("sentences")
    with pytest.raises(TypeError, match="component id and a stream id"):
        declarer.shuffleGrouping("sentences", 3)  # type: ignore[arg-type]


def test_created_topology_does_not_change_with_the_builder() -> None:
    builder = word_count()
    topology = builder.createTopology()
    builder.setBolt("late", Sink()).shuffleGrouping("split")
    assert [c.id for c in topology.components] == ["sentences", "split", "sink"]


def test_declare_output_fields_errors_name_the_component() -> None:
    class Twice(Sink):
        def declareOutputFields(self, declarer: Any) -> None:
            declarer.declare(Fields("a"))
            declarer.declare(Fields("b"))

    builder = TopologyBuilder()
    builder.setSpout("sentences", Sentences())
    builder.setBolt("twice", Twice()).shuffleGrouping("sentences")
    with pytest.raises(
        TopologyValidationError, match=r"'twice': declareOutputFields raised .*'default' already"
    ):
        builder.createTopology()
