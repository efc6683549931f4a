"""What a Streamlet program's topology looks like: one component per stage, named
``<op>-<n>``, emitting on ``output``/``_output_``, grouped as heronpy groups; and the errors a
bad program gets."""

from __future__ import annotations

import datetime
import pickle

import pytest

from heron_core.api import TopologyBuilder
from heron_core.config import build_config, load_cluster_config
from heron_core.errors import TopologyValidationError
from heron_core.plan import GroupingKind
from heronpy._submit import SubmitOutsideHeronError, recording
from heronpy.connectors.mock.arraylooper import ArrayLooper
from heronpy.connectors.pulsar.pulsarspout import PulsarNotAvailableError
from heronpy.connectors.pulsar.pulsarstreamlet import PulsarStreamlet
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.resources import Resources
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.transformoperator import TransformOperator
from heronpy.streamlet.windowconfig import WindowConfig


class Echo(TransformOperator):
    def setup(self, context):  # type: ignore[no-untyped-def]
        self.context = context

    def transform(self, tup):  # type: ignore[no-untyped-def]
        self.context.emit(tup.values[0])


def every_operation() -> Builder:
    builder = Builder()
    lines = builder.new_source(ArrayLooper(["a b", "c"]))
    other = builder.new_source(lambda: ("a", 1))
    words = lines.flat_map(str.split).map(lambda w: (w, 1)).filter(lambda p: p[0] != "z")
    window = WindowConfig.create_sliding_window(10, 2)
    counts = words.reduce_by_key_and_window(window, lambda a, b: a + b)
    words.join(other, window, lambda a, b: a + b).log()
    words.outer_left_join(other, window, lambda a, b: a).log()
    words.outer_right_join(other, window, lambda a, b: b).log()
    words.outer_join(other, window, lambda a, b: (a, b)).log()
    words.union(other).transform(Echo()).consume(print)
    counts.reduce_by_window(
        WindowConfig.create_tumbling_window(datetime.timedelta(seconds=4)), lambda a, b: b
    ).log()
    first, second = words.clone(2)
    first.repartition(3, lambda e, n: 0).log()
    second.repartition(2).log()
    return builder


def build(builder: Builder, name: str = "every") -> TopologyBuilder:
    bldr = TopologyBuilder(name)
    builder.build(bldr)
    return bldr


def test_each_stage_is_one_component_named_after_its_operation() -> None:
    plan = build(every_operation()).build()
    # heronpy's order: sources in order, each stage's children depth first, a join or union
    # once both its sides are built (the plan lists spouts first)
    assert [c.name for c in plan.components] == [
        "generator-1", "supplier-1", "flatmap-1", "map-1", "filter-1", "reducebykeyandwindow-1",
        "reducebywindow-1", "log-1", "repartition-1", "repartition-2", "log-2", "repartition-3",
        "repartition-4", "log-3", "join-1", "log-4", "join-2", "log-5", "join-3", "log-6",
        "join-4", "log-7", "union-1", "transform-1", "consume-1",
    ]  # fmt: skip
    assert [c.name for c in plan.spouts] == ["generator-1", "supplier-1"]
    for comp in plan.components:
        # heronpy's stages all declare stream 'output' with the one field '_output_'
        assert [(s.stream_id, s.fields) for s in comp.outputs] == [("output", ("_output_",))]
        for inp in comp.inputs:
            assert inp.stream == "output"


def test_groupings_and_window_ticks_follow_heronpy() -> None:
    plan = build(every_operation()).build()
    grouping = {c.name: {i.component: i.grouping for i in c.inputs} for c in plan.bolts}
    assert grouping["map-1"] == {"flatmap-1": GroupingKind.SHUFFLE}
    assert grouping["reducebykeyandwindow-1"] == {"filter-1": GroupingKind.CUSTOM}
    assert grouping["join-1"] == {
        "filter-1": GroupingKind.CUSTOM,
        "supplier-1": GroupingKind.CUSTOM,
    }
    assert grouping["union-1"] == {
        "filter-1": GroupingKind.SHUFFLE,
        "supplier-1": GroupingKind.SHUFFLE,
    }
    assert grouping["reducebywindow-1"] == {"reducebykeyandwindow-1": GroupingKind.LOWEST}
    assert grouping["repartition-2"] == {"repartition-1": GroupingKind.CUSTOM}
    assert grouping["repartition-4"] == {"repartition-3": GroupingKind.SHUFFLE}
    assert grouping["repartition-1"] == {"filter-1": GroupingKind.SHUFFLE}  # a clone
    ticks = {c.name: dict(c.config_items).get("topology.tick.tuple.freq.secs") for c in plan.bolts}
    assert ticks["reducebykeyandwindow-1"] == 2 and ticks["join-4"] == 2
    assert ticks["reducebywindow-1"] == 4 and ticks["map-1"] is None


def test_partitions_are_inherited_at_creation_and_set_by_repartition() -> None:
    builder = Builder()
    source = builder.new_source(lambda: 1).set_num_partitions(3)
    mapped = source.map(abs)
    window = WindowConfig.create_sliding_window(2, 1)
    keyed = mapped.map(lambda x: (x, x)).reduce_by_key_and_window(window, max)
    moved = mapped.repartition(5)
    joined = moved.join(mapped, window, max)
    mapped.set_num_partitions(2)  # after its children were made: they keep 3
    assert [s.get_num_partitions() for s in (mapped, keyed, moved, joined)] == [2, 1, 5, 5]
    for stage in (keyed, joined):
        stage.log()
    plan = build(builder).build()
    assert {c.name: c.parallelism for c in plan.components}["map-1"] == 2


def test_names_set_by_the_program_are_kept_and_defaults_avoid_them() -> None:
    builder = Builder()
    source = builder.new_source(lambda: 1)
    source.map(abs).set_name("map-1").map(abs).log()
    source.map(abs).set_name("doubles").log()
    plan = build(builder).build()
    assert [c.name for c in plan.components] == [
        "supplier-1",
        "map-1",
        "map-2",
        "log-1",
        "doubles",
        "log-2",
    ]


def test_two_stages_with_one_name_are_refused_naming_the_topology_and_stage() -> None:
    builder = Builder()
    source = builder.new_source(lambda: 1)
    source.map(abs).set_name("same").log()
    source.filter(bool).set_name("same").log()
    with pytest.raises(TopologyValidationError) as caught:
        build(builder, "dups")
    assert str(caught.value) == (
        "topology 'dups', component 'same': two stages are named 'same' (set_name); stage "
        "names must be unique"
    )


def test_a_stage_fed_by_another_builders_source_is_refused() -> None:
    builder, stranger = Builder(), Builder()
    mine = builder.new_source(lambda: 1)
    theirs = stranger.new_source(lambda: 2)
    mine.union(theirs).log()
    with pytest.raises(TopologyValidationError, match="not made by this Builder"):
        build(builder)
    with pytest.raises(TopologyValidationError, match="the Builder has no source"):
        build(Builder())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda s: s.map(3), "the map function must be callable, got int 3"),
        (lambda s: s.reduce_by_window((10, 2), max), "the window must be a WindowConfig"),
        (lambda s: s.repartition(2, lambda e: 0), "must take two arguments"),
        (lambda s: s.set_num_partitions(0), "num_partitions must be an int >= 1, got 0"),
        (lambda s: s.set_name(""), "a stage name must be a non-empty str"),
        (lambda s: s.join(s, WindowConfig.create_sliding_window(2, 1), max), "with itself"),
        (lambda s: s.transform(lambda t: t), "transform takes a TransformOperator instance"),
    ],
)
def test_bad_operations_are_refused_where_the_program_calls_them(make, message) -> None:  # type: ignore[no-untyped-def]
    source = Builder().new_source(lambda: 1)
    with pytest.raises((TypeError, ValueError), match=message):
        make(source)


def test_window_configs_take_whole_seconds() -> None:
    sliding = WindowConfig.create_sliding_window(datetime.timedelta(seconds=10), 2)
    assert (sliding.duration_secs, sliding.slide_secs) == (10, 2)
    with pytest.raises(ValueError, match="whole seconds"):
        WindowConfig.create_tumbling_window(datetime.timedelta(seconds=1.5))
    with pytest.raises(ValueError, match="no shorter than the slide"):
        WindowConfig.create_sliding_window(2, 5)
    with pytest.raises(TypeError, match="whole seconds"):
        WindowConfig.create_sliding_window(2.5, 1)  # type: ignore[arg-type]


def test_an_unpicklable_function_is_refused_naming_the_stage() -> None:
    import threading

    lock = threading.Lock()
    builder = Builder()
    builder.new_source(lambda: 1).map(lambda x: lock.locked()).log()
    with pytest.raises(TypeError, match=r"map function of stage 'map-1' \(<function .*\) cannot"):
        build(builder)


def test_runner_hands_the_named_builder_and_its_config_to_the_heron_client() -> None:
    config = Config()
    config.set_delivery_semantics(Config.ATLEAST_ONCE)
    config.set_num_containers(2)
    config.set_container_resources(Resources().set_ram_in_gb(1))
    config.set_user_config("my.key", "v")
    with recording() as submitted:
        Runner().run("streamlets", config, every_operation())
    [bldr] = submitted
    plan = bldr.build()
    assert plan.name == "streamlets"
    assert dict(plan.config_items) == {
        "topology.reliability.mode": "ATLEAST_ONCE",
        "topology.stmgrs": 2,
        "topology.container.ram": 1 << 30,  # the CPU, never set, is left to the packing
        "my.key": "v",
    }
    cluster = load_cluster_config("local")
    assert (
        build_config(cluster_config=cluster, topology_config=dict(plan.config_items))[
            "topology.stmgrs"
        ]
        == 2
    )


def test_effectively_once_reaches_the_topology_config() -> None:
    config = Config()
    config.set_delivery_semantics(Config.EFFECTIVELY_ONCE)
    with recording() as submitted:
        Runner().run("exactly", config, every_operation())
    topology_config = dict(submitted[0].build().config_items)
    merged = build_config(
        cluster_config=load_cluster_config("local"), topology_config=topology_config
    )
    assert merged["topology.reliability.mode"] == "EFFECTIVELY_ONCE"


def test_runner_outside_the_heron_client_says_which_command_to_use() -> None:
    with pytest.raises(SubmitOutsideHeronError, match="heron run"):
        Runner().run("streamlets", Config(), every_operation())
    with pytest.raises(TypeError, match=r"config must be a heronpy\.streamlet\.config\.Config"):
        Runner().run("streamlets", {}, Builder())  # type: ignore[arg-type]


def test_the_pulsar_connector_says_it_is_not_available() -> None:
    with pytest.raises(PulsarNotAvailableError, match="not available in this runtime"):
        PulsarStreamlet.pulsarStreamlet("pulsar://localhost:6650", "words")


def test_stage_components_pickle_into_the_plan_without_the_program() -> None:
    # what an instance unpickles holds the user's lambda as bytes, loaded at initialize
    plan = build(every_operation()).build()
    bolt = pickle.loads(plan.component("map-1").spec.pickled_object)
    assert bolt.function is None
    bolt.initialize({}, None)
    assert bolt.function("w") == ("w", 1)
