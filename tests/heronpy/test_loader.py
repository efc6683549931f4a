"""Loading heronpy programs as ``heron run FILE`` / ``heron submit local FILE`` do
(`heronpy._loader`, through the client's `load_topology`)."""

from __future__ import annotations

import runpy
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from heron_core.client import load_topology
from heron_core.config import build_config
from heron_core.errors import ConfigurationError, UserCodeError
from heronpy._submit import SubmitOutsideHeronError

COMPONENTS = """
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.spout.spout import Spout


class WordSpout(Spout):
    outputs = ["word"]

    def next_tuple(self):
        self.emit(["heron"])


class CountBolt(Bolt):
    def process(self, tup):
        self.ack(tup)
"""

BUILDER_PROGRAM = """
import sys

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import TopologyBuilder

from {package}components import CountBolt, WordSpout

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(1)
    builder = TopologyBuilder(name=sys.argv[1])
    words = builder.add_spout("word_spout", WordSpout, par=2)
    builder.add_bolt("count_bolt", CountBolt, par=2, inputs={{words: Grouping.fields("word")}})
    builder.set_config({{constants.TOPOLOGY_RELIABILITY_MODE: "{mode}"}})
    builder.build_and_submit()
"""


@pytest.fixture(autouse=True)
def _clean_modules() -> Iterator[None]:
    """The programs' modules are imported by the loader; forget them after each test."""
    before = set(sys.modules)
    path = list(sys.path)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("components", "pkg", "program", "classy")):
            del sys.modules[name]
    sys.path[:] = path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_builder_program_runs_as_main_named_by_its_argv(tmp_path: Path) -> None:
    _write(tmp_path / "components.py", COMPONENTS)
    program = _write(
        tmp_path / "program.py", BUILDER_PROGRAM.format(package="", mode="ATLEAST_ONCE")
    )
    loaded = load_topology(str(program))
    assert loaded.plan.name == "program"  # sys.argv[1] is the file's stem
    assert loaded.code_root == tmp_path
    assert [(c.name, c.parallelism) for c in loaded.plan.components] == [
        ("word_spout", 2),
        ("count_bolt", 2),
    ]
    assert loaded.plan.config["topology.reliability.mode"] == "ATLEAST_ONCE"
    assert loaded.plan.config["topology.max.spout.pending"] == 100  # heronpy's default
    assert load_topology(str(program), name="wc").plan.name == "wc"


def test_a_program_importing_through_packages_has_their_root_as_code_root(tmp_path: Path) -> None:
    # as Heron's examples: examples/src/python/x_topology.py imports examples.src.python...
    package = tmp_path / "pkg" / "src"
    _write(package / "__init__.py", "")
    _write(package / "components.py", COMPONENTS)
    program = _write(
        package / "program.py", BUILDER_PROGRAM.format(package="pkg.src.", mode="ATMOST_ONCE")
    )
    loaded = load_topology(str(program))
    assert loaded.code_root == tmp_path
    spout = loaded.plan.component("word_spout").spec
    assert spout.class_path == "pkg.src.components:WordSpout"  # type: ignore[union-attr]


def test_a_program_defining_a_topology_class_needs_no_heron_options(tmp_path: Path) -> None:
    _write(tmp_path / "components.py", COMPONENTS)
    program = _write(
        tmp_path / "classy.py",
        "from heronpy.api.topology import Topology\n"
        "from heronpy.api.custom_grouping import ICustomGrouping\n"
        "from heronpy.api.stream import Grouping\n"
        "from components import CountBolt, WordSpout\n\n"
        "class First(ICustomGrouping):\n"
        "    def prepare(self, context, component, stream, target_tasks):\n"
        "        self.target = target_tasks[0]\n"
        "    def choose_tasks(self, values):\n"
        "        return [self.target]\n\n"
        "class Words(Topology):\n"
        "    word_spout = WordSpout.spec()\n"
        "    count_bolt = CountBolt.spec(par=3, inputs={word_spout: Grouping.custom(First())})\n",
    )
    loaded = load_topology(str(program))
    assert loaded.plan.name == "Words"
    assert loaded.origin.endswith("classy.py:Words")
    # the grouping defined in the program is pickled by the program's module name
    assert b"classy" in loaded.plan.component("count_bolt").inputs[0].custom
    assert loaded.plan.config["topology.reliability.mode"] == "ATMOST_ONCE"


def test_programs_that_submit_nothing_or_exit_say_so(tmp_path: Path) -> None:
    nothing = _write(tmp_path / "program.py", "import heronpy.api.topology\n")
    with pytest.raises(ConfigurationError, match=r"submitted no topology .* defines no heronpy"):
        load_topology(str(nothing))
    exits = _write(tmp_path / "programx.py", "import sys\nimport heronpy\nsys.exit(3)\n")
    with pytest.raises(UserCodeError, match=r"exited \(sys.exit\(3\)\) before submitting"):
        load_topology(str(exits))


def test_a_file_without_heronpy_is_left_to_the_default_loader(tmp_path: Path) -> None:
    plain = _write(tmp_path / "program.py", "x = 1\n")
    with pytest.raises(ConfigurationError, match="no topology found"):
        load_topology(str(plain))


def test_python_file_outside_heron_tells_the_command(tmp_path: Path) -> None:
    _write(tmp_path / "components.py", COMPONENTS)
    program = _write(
        tmp_path / "program.py", BUILDER_PROGRAM.format(package="", mode="ATLEAST_ONCE")
    )
    sys.path.insert(0, str(tmp_path))
    argv = sys.argv
    sys.argv = [str(program), "wc"]
    try:
        with pytest.raises(SubmitOutsideHeronError, match=r"'heron run .*program.py'"):
            runpy.run_path(str(program), run_name="__main__")
    finally:
        sys.argv = argv


def test_an_effectively_once_program_keeps_its_mode_at_submission(tmp_path: Path) -> None:
    # Heron's stateful example sets EFFECTIVELY_ONCE: the config check `heron run`/`heron submit`
    # do before starting keeps it (never silently downgraded).
    _write(tmp_path / "components.py", COMPONENTS)
    program = _write(
        tmp_path / "program.py", BUILDER_PROGRAM.format(package="", mode="EFFECTIVELY_ONCE")
    )
    plan = load_topology(str(program)).plan
    assert build_config(None, plan.config)["topology.reliability.mode"] == "EFFECTIVELY_ONCE"
