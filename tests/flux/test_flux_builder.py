"""From Flux files to logical plans (no processes): class names, objects, groupings, shell
wrappers, native components, and errors naming the file and the entry."""

from __future__ import annotations

import pickle
import shutil
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from heron_core.client import load_topology
from heron_core.errors import ConfigurationError, UserCodeError
from heron_core.plan import GroupingKind, LogicalPlan, PythonSpec
from storm_compat.flux import load_flux_topology

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent / "multilang" / "scripts"

OBJECTS = """
from heron_core.api import Bolt, Spout, Stream
from storm_compat.topology import TopologyBuilder
from storm_compat.testing import TestWordCounter, TestWordSpout


class Thing:
    def __init__(self, *args):
        self.args = list(args)
        self.color = "none"
        self.size = 0
        self.calls = []

    def setSize(self, size):
        self.size = size * 10

    def add(self, *values):
        self.calls.append(values)

    @classmethod
    def make(cls, first):
        return cls("made", first)


class Broken:
    def __init__(self):
        raise RuntimeError("no way")


class Numbers(Spout):
    outputs = ["n", Stream(["n"], name="direct", direct=True)]


class Sink(Bolt):
    def __init__(self, thing=None):
        self.thing = thing
        self.other = None


class Source:
    def getTopology(self, config):
        builder = TopologyBuilder()
        builder.setSpout("words", TestWordSpout(), config["spouts"])
        builder.setBolt("count", TestWordCounter()).shuffleGrouping("words")
        return builder.createTopology()
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of test classes beside the Flux files, under a fresh name."""
    name = f"flux_objects_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(OBJECTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def flux(tmp_path: Path, text: str, module: str = "m") -> Path:
    path = tmp_path / "topology.yaml"
    path.write_text(textwrap.dedent(text).replace("MOD", module))
    return path


def build(path: Path, name: str | None = None) -> LogicalPlan:
    return load_flux_topology(path, name).plan


def test_the_wordflow_file_through_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for source in [*(HERE / "resources").glob("*.yaml"), HERE / "flux_components.py"]:
        shutil.copy(source, tmp_path)
    (tmp_path / "wordflow.properties").write_text(
        f"topology.name=flux-words\nrec.dir={tmp_path}/out\n"
    )
    monkeypatch.setenv("FLUX_PYTHON", sys.executable)
    loaded = load_topology(str(tmp_path / "wordflow.yaml"))  # the .yaml entry point
    assert (loaded.code_root, loaded.origin) == (tmp_path, str(tmp_path / "wordflow.yaml"))
    plan = loaded.plan
    assert plan.name == "flux-words"
    assert [(c.name, c.parallelism) for c in plan.components] == [
        ("sentences", 1),
        ("split", 2),
        ("fan", 1),
        ("rec", 2),
    ]
    config = plan.config
    assert (
        config["topology.max.spout.pending"] == 50 and config["topology.message.timeout.secs"] == 60
    )
    assert len(config["sentences"]) == 4
    rec = plan.component("rec")
    assert [(i.stream, i.grouping, i.fields) for i in rec.inputs] == [
        ("shuffle", GroupingKind.SHUFFLE, ()),
        ("fields", GroupingKind.FIELDS, ("word",)),
        ("all", GroupingKind.ALL, ()),
        ("global", GroupingKind.LOWEST, ()),
        ("none", GroupingKind.NONE, ()),
        ("local", GroupingKind.LOCAL_OR_SHUFFLE, ()),
        ("custom", GroupingKind.CUSTOM, ()),
        ("direct", GroupingKind.DIRECT, ()),
    ]
    assert [(s.stream_id, s.direct) for s in plan.component("fan").outputs][-1] == ("direct", True)


def test_storms_shell_wrappers_and_test_classes(tmp_path: Path) -> None:
    path = flux(
        tmp_path,
        """
        name: "shell"
        spouts:
          - id: "sentences"
            className: "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
            constructorArgs: [["node", "randomsentence.js"], ["sentence"]]
            configMethods:
              - {name: "addComponentConfig", args: ["rabbitmq.configfile", "etc/rabbit.yml"]}
              - {name: "addComponentConfig", args: ["publisher.data_paths", ["actions"]]}
          - id: "words"
            className: "org.apache.storm.testing.TestWordSpout"
        bolts:
          - id: "split"
            className: "org.apache.storm.task.ShellBolt"
            constructorArgs: ["python3", "splitsentence.py"]
            configMethods:
              - {name: "setDefaultStream", args: [["word"]]}
              - {name: "setNamedStream", args: ["lengths", ["word", "length"]]}
          - id: "count"
            className: "org.apache.storm.testing.TestWordCounter"
          - id: "log"
            className: "org.apache.storm.flux.wrappers.bolts.LogInfoBolt"
          - id: "unused"
            className: "org.apache.storm.flux.wrappers.bolts.LogInfoBolt"
        streams:
          - {from: "sentences", to: "split", grouping: {type: SHUFFLE}}
          - {from: "split", to: "count", grouping: {type: FIELDS, args: ["word"]}}
          - {from: "words", to: "count", grouping: {type: SHUFFLE}}
          - {from: "count", to: "log", grouping: {type: SHUFFLE}}
        """,
    )
    plan = build(path)
    assert [c.name for c in plan.components] == ["sentences", "words", "split", "count", "log"]
    config = plan.component("sentences").config
    assert config["rabbitmq.configfile"] == "etc/rabbit.yml"
    assert config["publisher.data_paths"] == ["actions"]
    split = plan.component("split")
    assert [(s.stream_id, s.fields) for s in split.outputs] == [
        ("default", ("word",)),
        ("lengths", ("word", "length")),
    ]
    assert [i.component for i in plan.component("count").inputs] == ["split", "words"]


def test_objects_properties_config_methods_factories_and_refs(tmp_path: Path, module: str) -> None:
    path = flux(
        tmp_path,
        """
        name: "objects"
        components:
          - id: "thing"
            className: "MOD.Thing"
            constructorArgs: [1, "two"]
            properties:
              - {name: "size", value: 3}
              - {name: "color", value: "red"}
            configMethods:
              - {name: "add", args: [1, 2]}
          - id: "made"
            className: "MOD.Thing"
            factory: "make"
            factoryArgs: [{ref: "thing"}]
          - id: "holder"
            className: "MOD.Thing"
            constructorArgs: [{reflist: ["thing", "made"]}]
        spouts:
          - id: "numbers"
            className: "MOD.Numbers"
            parallelism: 2
            numTasks: 3
            cpuLoad: 50
            onHeapMemoryLoad: 128
            config: {topology.tick.tuple.freq.secs: 5}
        bolts:
          - id: "sink"
            className: "MOD.Sink"
            constructorArgs: [{ref: "holder"}]
            properties: [{name: "other", ref: "made"}]
        streams:
          - {from: "numbers", to: "sink", grouping: {type: DIRECT, streamId: "direct"}}
          - {from: "numbers", to: "sink", grouping: {type: GLOBAL}}
        """,
        module,
    )
    plan = build(path)
    numbers = plan.component("numbers")
    assert numbers.parallelism == 3  # setNumTasks wins over the parallelism hint
    assert numbers.config["topology.tick.tuple.freq.secs"] == 5
    assert numbers.config["topology.component.cpu"] == 0.5
    assert numbers.config["topology.component.ram"] == 128 << 20
    assert [(s.stream_id, s.fields, s.direct) for s in numbers.outputs] == [
        ("default", ("n",), False),
        ("direct", ("n",), True),
    ]
    spec = plan.component("sink").spec
    assert isinstance(spec, PythonSpec)
    sink = pickle.loads(spec.pickled_object).bolt.bolt  # BoltAdapter > NativeBolt > Sink
    thing, made = sink.thing.args[0]  # the reflist
    assert (thing.args, thing.size, thing.color, thing.calls) == ([1, "two"], 30, "red", [(1, 2)])
    assert made.args == ["made", thing] and sink.other is made


@pytest.mark.parametrize(
    ("bean", "error"),
    [
        (
            'className: "org.apache.storm.kafka.spout.KafkaSpout"',
            "Java class 'org.apache.storm.kafka.spout.KafkaSpout' has no Python counterpart",
        ),
        (
            'className: "nosuchpackage.Spout"',
            "className 'nosuchpackage.Spout' is not an importable Python class",
        ),
        (
            'className: "MOD.Thing"',
            "MOD.Thing is not a spout: expected a Storm IRichSpout or a heron_core.api.Spout",
        ),
        (
            'className: "MOD.Thing"\n    properties: [{name: "weight", value: 1}]',
            "property 'weight': MOD.Thing has no method setWeight and no attribute 'weight'",
        ),
        (
            'className: "MOD.Thing"\n    configMethods: [{name: "paint"}]',
            "configMethods: MOD.Thing has no method 'paint'",
        ),
        ('className: "MOD.Thing"\n    factory: "build"', "MOD.Thing has no factory method 'build'"),
        (
            'className: "MOD.Thing"\n    constructorArgs: [{ref: "later"}]',
            "ref 'later' names no component declared before it",
        ),
    ],
)
def test_bad_spouts_name_the_file_and_the_entry(
    tmp_path: Path, module: str, bean: str, error: str
) -> None:
    path = flux(tmp_path, f"name: bad\nspouts:\n  - id: s\n    {bean}\n", module)
    with pytest.raises(ConfigurationError) as caught:
        build(path)
    assert str(caught.value).startswith(f"flux file '{path}', spouts[0] (id 's'): ")
    assert error.replace("MOD", module) in str(caught.value)


def test_code_raising_while_building_is_user_code_error(tmp_path: Path, module: str) -> None:
    path = flux(tmp_path, "name: bad\nspouts:\n  - {id: s, className: MOD.Broken}\n", module)
    with pytest.raises(
        UserCodeError, match=r"spouts\[0\] \(id 's'\): .*Broken\(\) raised RuntimeError\('no way'\)"
    ):
        build(path)


@pytest.mark.parametrize(
    ("stream", "error"),
    [
        (
            "{from: nowhere, to: sink, grouping: {type: ALL}}",
            "'from' names unknown component 'nowhere'; components: numbers, sink",
        ),
        (
            "{from: sink, to: numbers, grouping: {type: ALL}}",
            "'to' names 'numbers', which is a spout; bolts: sink",
        ),
        (
            "{from: numbers, to: nobody, grouping: {type: ALL}}",
            "'to' names 'nobody', which is not a declared bolt",
        ),
        (
            "{from: numbers, to: sink, "
            "grouping: {type: CUSTOM, customClass: {className: MOD.Thing}}}",
            "customClass MOD.Thing is not a CustomStreamGrouping",
        ),
    ],
)
def test_bad_streams_name_the_file_and_the_entry(
    tmp_path: Path, module: str, stream: str, error: str
) -> None:
    text = f"""
        name: bad
        spouts: [{{id: numbers, className: MOD.Numbers}}]
        bolts: [{{id: sink, className: MOD.Sink}}]
        streams:
          - {stream}
        """
    path = flux(tmp_path, text, module)
    with pytest.raises(ConfigurationError) as caught:
        build(path)
    assert str(caught.value).startswith(f"flux file '{path}', streams[0] (")
    assert error.replace("MOD", module) in str(caught.value)


def test_topology_source(tmp_path: Path, module: str) -> None:
    path = flux(
        tmp_path,
        """
        name: "sourced"
        config: {spouts: 2}
        topologySource:
          className: "MOD.Source"
        """,
        module,
    )
    plan = build(path)
    assert [(c.name, c.parallelism) for c in plan.components] == [("words", 2), ("count", 1)]
    path.write_text(path.read_text() + "spouts: [{id: x, className: y.Z}]\n")
    with pytest.raises(
        ConfigurationError, match="a topologySource excludes spouts, bolts and streams"
    ):
        build(path)


def test_the_topology_name(tmp_path: Path) -> None:
    path = flux(
        tmp_path, 'spouts: [{id: w, className: "org.apache.storm.testing.TestWordSpout"}]\n'
    )
    with pytest.raises(
        ConfigurationError, match="no topology name: set 'name' in the file or pass one"
    ):
        build(path)
    assert build(path, "given").name == "given"
