"""A ``sparse quickstart`` project as a logical plan: config.json, options, specs, loaders."""

from __future__ import annotations

import json
import pickle
import shutil
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from sparse_support import quickstart

from heron_core.client import _loading, load_topology
from heron_core.errors import ConfigurationError, TopologyValidationError
from heron_core.plan import GroupingKind, PythonSpec, ShellSpec
from storm_compat.streamparse import (
    RUN_MODULE,
    PystormBoltAdapter,
    PystormSpoutAdapter,
    SparseProject,
    load_project_topology,
    load_sparse_topology,
    sparse_options,
    streamparse_object,
)
from storm_compat.thrift import plan_to_topology, write_topology

MIXED = """
from streamparse import Grouping, JavaSpout, Topology

from bolts.timed import TimedBolt
from bolts.wordcount import WordCountBolt
from spouts.words import WordSpout


class Mixed(Topology):
    config = {"my.opt": "class", "topology.message.timeout.secs": 5}
    word_spout = WordSpout.spec(par={"prod": 3, "beta": 1})
    count_bolt = WordCountBolt.spec(
        inputs={word_spout: Grouping.fields("word")}, config={"streamparse.multilang": True}
    )
    timed_bolt = TimedBolt.spec(inputs=[word_spout])
"""
TIMED = """
from streamparse import TicklessBatchingBolt


class TimedBolt(TicklessBatchingBolt):
    secs_between_batches = 1.5

    def process_batch(self, key, tups):
        pass
"""
JAVA = """
from streamparse import JavaSpout, Topology
from bolts.wordcount import WordCountBolt


class Pixels(Topology):
    pixel_spout = JavaSpout.spec(
        full_class_name="com.acme.PixelSpout", args_list=[], outputs=["word"]
    )
    count_bolt = WordCountBolt.spec(inputs=[pixel_spout])
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real ``sparse quickstart wordcount`` for the module (copied per test)."""
    return quickstart(tmp_path_factory.mktemp("quickstart"))


@pytest.fixture
def project(generated: Path, tmp_path: Path) -> Iterator[Path]:
    """A fresh copy of the quickstart project; imports made from it are forgotten after."""
    root = tmp_path / "wordcount"
    shutil.copytree(generated, root)
    path, modules = list(sys.path), set(sys.modules)
    yield root
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]


def with_mixed_topology(root: Path) -> SparseProject:
    (root / "topologies" / "mixed.py").write_text(MIXED)
    (root / "src" / "bolts" / "timed.py").write_text(TIMED)
    config = json.loads((root / "config.json").read_text())
    config["envs"]["prod"]["options"] = {"topology.max.spout.pending": 10, "my.opt": "env"}
    (root / "config.json").write_text(json.dumps(config))
    return SparseProject.load(root / "config.json")


def test_the_quickstart_topology_runs_in_process_with_streamparses_options(project: Path) -> None:
    sparse = SparseProject.load(project / "config.json")
    assert sparse.topology_file() == ("wordcount", project / "topologies" / "wordcount.py")
    assert sparse.environment()[0] == "prod"
    loaded = load_sparse_topology(sparse)
    plan = loaded.plan
    assert (plan.name, loaded.code_root) == ("wordcount", project / "src")
    spout, bolt = plan.components
    assert (spout.name, spout.parallelism, bolt.name, bolt.parallelism) == (
        "word_spout",
        1,
        "count_bolt",
        2,
    )
    assert isinstance(spout.spec, PythonSpec) and isinstance(bolt.spec, PythonSpec)
    adapter = pickle.loads(spout.spec.pickled_object)
    assert isinstance(adapter, PystormSpoutAdapter)
    assert (adapter.class_path, adapter.components) == (
        "spouts.words.WordSpout",
        ("word_spout", "count_bolt"),
    )
    assert isinstance(pickle.loads(bolt.spec.pickled_object), PystormBoltAdapter)
    [inp] = bolt.inputs
    assert (inp.component, inp.grouping, inp.fields) == (
        "word_spout",
        GroupingKind.FIELDS,
        ("word",),
    )
    original = sparse.import_topology_class(sparse.topology_file()[1]).thrift_topology
    back = plan_to_topology(plan, component_object=streamparse_object)
    assert write_topology(back) == write_topology(original)
    assert plan.config == {
        "pystorm.log.backup_count": 10,
        "pystorm.log.level": "info",
        "pystorm.log.max_bytes": 1000000,
        "storm.workers.list": [],
        "sudo_user": "",
        "topology.acker.executors": 1,
        "topology.multilang.serializer": "json",
        "topology.workers": 1,
        "virtualenv_root": "",
    }


def test_multilang_runs_streamparse_run_subprocesses(project: Path) -> None:
    plan = load_sparse_topology(SparseProject.load(project / "config.json"), multilang=True).plan
    assert [c.spec for c in plan.components] == [
        ShellSpec((sys.executable, "-m", RUN_MODULE, "-s", "json", "spouts.words.WordSpout")),
        ShellSpec(
            (sys.executable, "-m", RUN_MODULE, "-s", "json", "bolts.wordcount.WordCountBolt")
        ),
    ]
    back = plan_to_topology(plan, component_object=streamparse_object)
    assert (
        back.bolts["count_bolt"].bolt_object.shell.script == "-s json bolts.wordcount.WordCountBolt"
    )


def test_per_component_choices_parallelism_ticks_and_option_precedence(project: Path) -> None:
    sparse = with_mixed_topology(project)
    plan = load_sparse_topology(sparse, "mixed", options=["my.opt=cli"], debug=True).plan
    spout, count, timed = plan.components
    assert isinstance(spout.spec, PythonSpec) and spout.parallelism == 3
    assert (
        isinstance(count.spec, ShellSpec)
        and count.spec.command[-1] == "bolts.wordcount.WordCountBolt"
    )
    assert isinstance(timed.spec, PythonSpec)
    assert timed.config == {"topology.tick.tuple.freq.secs": 1.5}
    assert count.config == {"streamparse.multilang": True}
    config = plan.config
    assert (config["my.opt"], config["topology.max.spout.pending"]) == ("cli", 10)
    assert (config["topology.message.timeout.secs"], config["topology.debug"]) == (5, True)
    assert config["pystorm.log.level"] == "debug"
    assert (
        load_sparse_topology(sparse, "mixed", env="prod", multilang=True)
        .plan.component("timed_bolt")
        .config
        == {}
    )  # a multilang TicklessBatchingBolt keeps its own timer thread


def test_parallelism_per_environment_needs_the_environment(project: Path) -> None:
    sparse = with_mixed_topology(project)
    config = dict(sparse.config, envs={"prod": {}, "test": {}})
    several = SparseProject(sparse.root, config, sparse.config_file)
    with pytest.raises(ConfigurationError, match="several environments \\(prod, test\\): pass -e"):
        load_sparse_topology(several, "mixed")
    with pytest.raises(
        TopologyValidationError, match="component 'word_spout': parallelism is per environment"
    ):
        load_sparse_topology(several, "mixed", env="test")
    with pytest.raises(ConfigurationError, match="no environment 'nope'"):
        load_sparse_topology(several, "mixed", env="nope")


def test_sparse_options_for_a_cluster_use_the_environments_workers() -> None:
    sparse = SparseProject(
        Path("/p"), {"topology_specs": "t/", "serializer": "msgpack"}, Path("/p/c")
    )
    env = {
        "workers": ["h1", "h2"],
        "user": "storm",
        "log": {"path": "/var/log"},
        "use_virtualenv": False,
    }
    resolved = sparse_options(sparse, env, {}, {"topology.acker.executors": 0}, local=False)
    assert resolved == {
        "pystorm.log.path": "/var/log",
        "use_virtualenv": False,
        "sudo_user": "storm",
        "topology.multilang.serializer": "msgpack",
        "topology.acker.executors": 0,
        "storm.workers.list": ["h1", "h2"],
        "topology.workers": 2,
    }
    local = sparse_options(sparse, env, {"topology.workers": 4}, {}, local=True)
    assert (local["topology.workers"], local["topology.acker.executors"]) == (1, 1)


def test_a_java_component_is_reported_with_its_name(project: Path) -> None:
    (project / "topologies" / "pixels.py").write_text(JAVA)
    sparse = SparseProject.load(project / "config.json")
    with pytest.raises(
        TopologyValidationError,
        match=r"'pixel_spout': is the Java class com\.acme\.PixelSpout .*Python or a shell",
    ):
        load_sparse_topology(sparse, "pixels")


def test_project_errors_name_the_file_and_what_to_do(project: Path) -> None:
    with pytest.raises(ConfigurationError, match="no streamparse project"):
        SparseProject.load(project / "missing.json")
    (project / "topologies" / "other.py").write_text("x = 1\n")
    sparse = SparseProject.load(project / "config.json")
    with pytest.raises(ConfigurationError, match="found several \\(other, wordcount\\): pass -n"):
        sparse.topology_file()
    with pytest.raises(ConfigurationError, match="defines no streamparse Topology subclass"):
        load_sparse_topology(sparse, "other")
    with pytest.raises(ConfigurationError, match=r"nope\.py not found"):
        sparse.topology_file("nope")


def test_heron_submit_loads_a_project_topology_file(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = metadata.EntryPoint(
        name=".py",
        value="storm_compat.streamparse:load_project_topology",
        group=_loading.LOADERS_GROUP,
    )
    monkeypatch.setattr(_loading.metadata, "entry_points", lambda group: [entry])
    loaded = load_topology(str(project / "topologies" / "wordcount.py"))
    assert (loaded.plan.name, loaded.code_root) == ("wordcount", project / "src")
    assert [c.name for c in loaded.plan.components] == ["word_spout", "count_bolt"]
    renamed = load_project_topology(project / "topologies" / "wordcount.py", "wc2")
    assert renamed is not None and renamed.plan.name == "wc2"
    plain = tmp_path / "plain_topology.py"
    plain.write_text("x = 1\n")
    assert load_project_topology(plain, None) is None
    with pytest.raises(ConfigurationError, match="no topology found"):
        load_topology(str(plain))  # declined, then loaded as a plain Python topology file
