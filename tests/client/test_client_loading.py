"""load_topology: which object of a file or module is the topology, and the errors."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from heron_core.client import load_topology
from heron_core.errors import ConfigurationError, TopologyValidationError, UserCodeError

HEADER = """
from heron_core.api import Topology, TopologyBuilder, shell_component
WORDS = shell_component(["python3", "words.py"], ["word"])
COUNT = shell_component(["python3", "count.py"], ["word", "n"])
"""

ONE_CLASS = """
class Counting(Topology):
    words = WORDS.spout_spec()
    count = COUNT.bolt_spec(inputs=[words], par=2)
"""


@pytest.fixture(name="write_module")
def write_module_fixture(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Writes a uniquely named module under ``tmp_path``; forgets it (sys.modules, sys.path)
    afterwards."""
    written: list[str] = []
    saved_path = list(sys.path)

    def write(body: str) -> Path:
        name = f"topo_{uuid.uuid4().hex[:12]}"
        written.append(name)
        path = tmp_path / f"{name}.py"
        path.write_text(HEADER + textwrap.dedent(body))
        return path

    yield write
    for name in written:
        sys.modules.pop(name, None)
    sys.path[:] = saved_path


def test_a_file_with_one_topology_class(write_module: Callable[[str], Path]) -> None:
    path = write_module(ONE_CLASS)
    loaded = load_topology(str(path))
    assert loaded.plan.name == "Counting"
    assert [c.name for c in loaded.plan.components] == ["words", "count"]
    assert loaded.code_root == path.parent
    assert loaded.origin == f"{path}:Counting"
    assert sys.path[0] == str(path.parent)
    assert sys.modules[path.stem].__file__ == str(path)


def test_the_name_overrides_the_class_name(write_module: Callable[[str], Path]) -> None:
    assert load_topology(str(write_module(ONE_CLASS)), name="wc").plan.name == "wc"


def test_an_attribute_after_the_colon_wins(write_module: Callable[[str], Path]) -> None:
    path = write_module(
        ONE_CLASS
        + """
class Other(Counting):
    pass
"""
    )
    assert load_topology(f"{path}:Other").plan.name == "Other"


def test_several_topology_classes_need_a_name(write_module: Callable[[str], Path]) -> None:
    path = write_module(ONE_CLASS + "\nclass Second(Counting):\n    pass\n")
    with pytest.raises(
        ConfigurationError, match=r"several Topology subclasses \(Counting, Second\)"
    ):
        load_topology(str(path))


def test_a_module_level_builder_named_topology(write_module: Callable[[str], Path]) -> None:
    path = write_module(
        """
topology = TopologyBuilder()
words = topology.add_spout("words", WORDS)
topology.add_bolt("count", COUNT, inputs=[words])
"""
    )
    loaded = load_topology(str(path))
    assert loaded.plan.name == path.stem  # an unnamed builder takes the module's name
    assert loaded.origin.endswith(":topology")


def test_a_module_level_logical_plan_renamed_gets_a_new_id(
    write_module: Callable[[str], Path],
) -> None:
    path = write_module(ONE_CLASS + "\ntopology = Counting.build('plan')\n")
    plan = load_topology(f"{path}:topology").plan
    assert plan.name == "plan"
    renamed = load_topology(f"{path}:topology", name="renamed").plan
    assert renamed.name == "renamed"
    assert renamed.id.startswith("renamed-") and renamed.id != plan.id


def test_no_topology_names_the_file_and_what_was_looked_for(
    write_module: Callable[[str], Path],
) -> None:
    path = write_module("x = 1\n")
    with pytest.raises(ConfigurationError) as info:
        load_topology(str(path))
    message = str(info.value)
    assert str(path) in message
    assert "no topology found" in message
    assert "Topology subclass" in message and "'topology'" in message


def test_a_missing_attribute_is_named(write_module: Callable[[str], Path]) -> None:
    path = write_module(ONE_CLASS)
    with pytest.raises(ConfigurationError, match="no attribute 'Nope'"):
        load_topology(f"{path}:Nope")


def test_an_attribute_that_is_not_a_topology(write_module: Callable[[str], Path]) -> None:
    with pytest.raises(ConfigurationError, match="is not a topology"):
        load_topology(f"{write_module('x = 1')}:x")


def test_a_missing_file() -> None:
    with pytest.raises(ConfigurationError, match=r"topology file 'nowhere/wc\.py'.*does not exist"):
        load_topology("nowhere/wc.py")


def test_an_import_error_in_user_code_is_chained(write_module: Callable[[str], Path]) -> None:
    path = write_module("raise RuntimeError('boom')\n")
    with pytest.raises(UserCodeError, match="boom") as info:
        load_topology(str(path))
    assert isinstance(info.value.__cause__, RuntimeError)
    assert path.stem not in sys.modules


def test_an_invalid_topology_is_a_validation_error(write_module: Callable[[str], Path]) -> None:
    path = write_module(
        """
class Broken(Topology):
    count = COUNT.bolt_spec(inputs=[WORDS.spout_spec(name="ghost")])
"""
    )
    with pytest.raises(TopologyValidationError, match="Broken"):
        load_topology(str(path))


def test_a_file_named_like_a_loaded_module_is_refused(tmp_path: Path) -> None:
    (tmp_path / "json.py").write_text(HEADER + ONE_CLASS)
    with pytest.raises(ConfigurationError, match="already loaded"):
        load_topology(str(tmp_path / "json.py"))


def test_a_module_colon_attr_spec_and_its_code_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = f"pkg_{uuid.uuid4().hex[:12]}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "topo.py").write_text(HEADER + ONE_CLASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        loaded = load_topology(f"{package}.topo:Counting")
        assert loaded.plan.name == "Counting"
        assert loaded.code_root == tmp_path
    finally:
        for name in [m for m in sys.modules if m.startswith(package)]:
            del sys.modules[name]


def test_an_unknown_module() -> None:
    with pytest.raises(ConfigurationError, match="cannot import module 'no_such_pkg_x'"):
        load_topology("no_such_pkg_x:Topo")
