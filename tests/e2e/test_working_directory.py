"""Components open files of the topology's resources by relative paths, as on Storm: a
streamparse project's components (in process and as multilang subprocesses), a Flux file's
shell and Python components, and a Storm-facade topology run from its script all run in the
topology's code directory, laid out as a Storm worker's ``resources/`` directory."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from heron_core.client import load_topology
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import read_records
from heron_core.testing.processes import wait_until
from storm_compat.streamparse import SparseProject, load_sparse_topology

pytestmark = pytest.mark.processes

STORM_PY = Path(__file__).resolve().parents[1] / "multilang" / "scripts" / "storm.py"
WORDS = ["alpha", "beta", "gamma", "delta"]


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def _under(process: psutil.Process, root: str) -> bool:
    with contextlib.suppress(psutil.Error):
        return any(root in arg for arg in process.cmdline()) or process.cwd().startswith(root)
    return False


@pytest.fixture
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home under ``tmp_path``. Afterwards no process may mention ``tmp_path`` or run
    in it (daemons, instances and their multilang subprocesses), and sys.path and sys.modules
    forget what the test imported from it; every log is printed if the test failed."""
    failures = request.session.testsfailed
    path, modules = list(sys.path), set(sys.modules)
    yield tmp_path / "home"
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]
    me = psutil.Process()
    leftovers = [p for p in psutil.process_iter() if p.pid != me.pid and _under(p, str(tmp_path))]
    for process in leftovers:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(leftovers, timeout=30)
    if request.session.testsfailed > failures or leftovers:
        for log in sorted(tmp_path.rglob("*.log")):
            print(f"===== {log} =====\n{log.read_text(errors='replace')}")
    assert not leftovers, f"processes outlived the test: {[p.pid for p in leftovers]}"


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


SPARSE_PROJECT = {
    # Storm ships src/ as the jar's resources/ and runs streamparse_run there: src/data/... is
    # data/... to the components.
    "src/data/words.txt": " ".join(WORDS) + "\n",
    "src/data/suffix.txt": "-read\n",
    "src/readers/__init__.py": "",
    "src/readers/spouts.py": """
        from streamparse import Spout


        class FileWordSpout(Spout):
            outputs = ["word"]

            def initialize(self, stormconf, context):
                with open("data/words.txt") as words:
                    self.words = words.read().split()

            def next_tuple(self):
                if self.words:
                    self.emit([self.words.pop(0)])
        """,
    "src/readers/bolts.py": """
        from streamparse import Bolt


        class SuffixBolt(Bolt):
            outputs = ["word"]

            def initialize(self, conf, context):
                with open("data/suffix.txt") as suffix:
                    self.suffix = suffix.read().strip()

            def process(self, tup):
                self.emit([tup.values[0] + self.suffix])


        class SinkBolt(Bolt):
            outputs = []

            def initialize(self, conf, context):
                self.out = conf["resourceful.out"]

            def process(self, tup):
                with open(self.out, "a") as out:
                    out.write(tup.values[0] + "\\n")
        """,
    "topologies/resourceful.py": """
        from streamparse import Topology

        from readers.bolts import SinkBolt, SuffixBolt
        from readers.spouts import FileWordSpout


        class Resourceful(Topology):
            words = FileWordSpout.spec()
            suffixed = SuffixBolt.spec(inputs=[words])
            sink = SinkBolt.spec(inputs=[suffixed])
        """,
}


@pytest.mark.parametrize("multilang", [False, True], ids=["in-process", "multilang"])
def test_streamparse_components_open_files_of_src_by_relative_paths(
    home: Path, tmp_path: Path, multilang: bool
) -> None:
    project, out = tmp_path / "project", tmp_path / "out.txt"
    write(project, SPARSE_PROJECT)
    config = {
        "serializer": "json",
        "topology_specs": "topologies/",
        "envs": {"test": {"options": {"resourceful.out": str(out)}}},
    }
    (project / "config.json").write_text(json.dumps(config))
    loaded = load_sparse_topology(SparseProject.load(project / "config.json"), multilang=multilang)
    assert loaded.code_root == project / "src"
    with TopologyRun(loaded.plan, heron_home=home, code_root=loaded.code_root) as run:
        wait_until(lambda: len(lines(out)) >= len(WORDS), "every word through spout and bolt")
        shipped = sorted(path.name for path in (run.working_dir / "code").iterdir())
    assert shipped == ["data", "readers"]  # src/, as the jar's resources/ holds it
    assert sorted(lines(out)) == sorted(f"{word}-read" for word in WORDS)


FLUX_CODE = {
    "data/words.txt": " ".join(WORDS) + "\n",
    "data/prefix.txt": "flux-\n",
    "data/suffix.txt": "-shell\n",
    "words_spout.py": """
        import storm


        class FileWordSpout(storm.Spout):
            def initialize(self, conf, context):
                with open("data/words.txt") as words:
                    self.words = words.read().split()

            def nextTuple(self):
                if self.words:
                    storm.emit([self.words.pop(0)])


        FileWordSpout().run()
        """,
    "suffix_bolt.py": """
        import storm


        class SuffixBolt(storm.BasicBolt):
            def initialize(self, conf, context):
                with open("data/suffix.txt") as suffix:
                    self.suffix = suffix.read().strip()

            def process(self, tup):
                storm.emit([tup.values[0] + self.suffix])


        SuffixBolt().run()
        """,
    "resource_bolts.py": """
        from storm_compat.topology.base import BaseBasicBolt
        from storm_compat.tuple import Fields, Values


        class PrefixBolt(BaseBasicBolt):
            def prepare(self, topoConf, context):
                with open("data/prefix.txt") as prefix:
                    self.prefix = prefix.read().strip()

            def execute(self, input, collector):
                collector.emit(Values(self.prefix + input.getString(0)))

            def declareOutputFields(self, declarer):
                declarer.declare(Fields("word"))
        """,
    "resources.yaml": """
        name: "flux-resources"

        spouts:
          - id: "words"
            className: "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
            constructorArgs:
              - ["${ENV-FLUX_PYTHON}", "words_spout.py"]
              - ["word"]

        bolts:
          - id: "prefix"
            className: "resource_bolts.PrefixBolt"
          - id: "suffix"
            className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
            constructorArgs:
              - ["${ENV-FLUX_PYTHON}", "suffix_bolt.py"]
              - ["word"]
          - id: "rec"
            className: "heron_core.testing.components.RecordingBolt"
            constructorArgs: ["${ENV-FLUX_OUT}"]

        streams:
          - from: "words"
            to: "prefix"
            grouping: {type: SHUFFLE}
          - from: "prefix"
            to: "suffix"
            grouping: {type: SHUFFLE}
          - from: "suffix"
            to: "rec"
            grouping: {type: SHUFFLE}
        """,
}


def test_flux_shell_and_python_components_open_files_beside_the_yaml(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = tmp_path / "flux", tmp_path / "out"
    write(code, FLUX_CODE)
    shutil.copy(STORM_PY, code)  # storm-starter's multilang/resources/ ships it beside the script
    monkeypatch.setenv("FLUX_PYTHON", sys.executable)
    monkeypatch.setenv("FLUX_OUT", str(out))
    loaded = load_topology(str(code / "resources.yaml"))
    assert loaded.code_root == code
    with TopologyRun(loaded.plan, heron_home=home, code_root=loaded.code_root):
        wait_until(lambda: len(read_records(out)) >= len(WORDS), "every word recorded")
    words = sorted(record["values"][0] for record in read_records(out))
    assert words == sorted(f"flux-{word}-shell" for word in WORDS)


STORM_SCRIPT = {
    "data/words.txt": " ".join(WORDS) + "\n",
    "data/prefix.txt": "storm-\n",
    "data/suffix.txt": "-shell\n",
    "storm_resources.py": '''
        """A storm-starter style topology whose spout, bolt and shell bolt read the topology's
        files by relative paths; run as ``python storm_resources.py OUT HOME`` from anywhere."""

        import sys
        import time
        from pathlib import Path

        from storm_compat import LocalCluster
        from storm_compat.multilang import ShellBolt
        from storm_compat.topology import TopologyBuilder
        from storm_compat.topology.base import BaseBasicBolt, BaseRichSpout
        from storm_compat.tuple import Fields, Values


        class FileWordSpout(BaseRichSpout):
            def open(self, conf, context, collector):
                self.collector = collector
                with open("data/words.txt") as words:
                    self.words = words.read().split()

            def nextTuple(self):
                if self.words:
                    self.collector.emit(Values(self.words.pop(0)))

            def declareOutputFields(self, declarer):
                declarer.declare(Fields("word"))


        class PrefixBolt(BaseBasicBolt):
            def prepare(self, topoConf, context):
                with open("data/prefix.txt") as prefix:
                    self.prefix = prefix.read().strip()

            def execute(self, input, collector):
                collector.emit(Values(self.prefix + input.getString(0)))

            def declareOutputFields(self, declarer):
                declarer.declare(Fields("word"))


        class SuffixBolt(ShellBolt):
            def __init__(self):
                super().__init__(sys.executable, "suffix_bolt.py")

            def declareOutputFields(self, declarer):
                declarer.declare(Fields("word"))


        class Collect(BaseBasicBolt):
            def __init__(self, out):
                self.out = out

            def execute(self, input, collector):
                with open(self.out, "a") as out:
                    out.write(input.getString(0) + "\\n")

            def declareOutputFields(self, declarer):
                pass


        def main(out, home):
            builder = TopologyBuilder()
            builder.setSpout("words", FileWordSpout())
            builder.setBolt("prefix", PrefixBolt()).shuffleGrouping("words")
            builder.setBolt("suffix", SuffixBolt()).shuffleGrouping("prefix")
            builder.setBolt("collect", Collect(out)).shuffleGrouping("suffix")
            with LocalCluster(heron_home=home, keep_logs=True) as cluster:
                cluster.submitTopology("storm-resources", {}, builder.createTopology())
                deadline = time.monotonic() + 180
                while not Path(out).exists() or len(Path(out).read_text().split()) < 4:
                    if time.monotonic() > deadline:
                        sys.exit("timed out waiting for every word")
                    time.sleep(0.05)


        if __name__ == "__main__":
            main(*sys.argv[1:])
        ''',
}


def test_a_storm_facade_topology_opens_files_beside_its_script(home: Path, tmp_path: Path) -> None:
    code, out = tmp_path / "storm", tmp_path / "out.txt"
    write(code, STORM_SCRIPT)
    write(code, {"suffix_bolt.py": FLUX_CODE["suffix_bolt.py"]})
    shutil.copy(STORM_PY, code)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [sys.executable, str(code / "storm_resources.py"), str(out), str(home)],
        cwd=elsewhere,  # where the user happens to be: not where the components run
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert sorted(lines(out)) == sorted(f"storm-{word}-shell" for word in WORDS)
