"""How other front ends plug into the client: objects with ``to_logical_plan`` and loaders
registered for file suffixes (entry points)."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from heron_core.api import Bolt, Grouping, Spout, TopologyBuilder
from heron_core.client import LoadedTopology, _loading, load_topology
from heron_core.errors import ConfigurationError
from heron_core.plan import LogicalPlan


class OneSpout(Spout):
    outputs = ["x"]

    def next_tuple(self) -> None:
        pass


class OneBolt(Bolt):
    def process(self, tup: Any) -> None:
        pass


def plan(name: str) -> LogicalPlan:
    b = TopologyBuilder(name)
    s = b.add_spout("s", OneSpout, par=1)
    b.add_bolt("b", OneBolt, par=1, inputs={s: Grouping.SHUFFLE})
    return b.build()


class ForeignTopology:
    """What another front end (the Storm facade's StormTopology) looks like to the client."""

    def to_logical_plan(self, name: str | None = None) -> LogicalPlan:
        return plan(name or "foreign")


def test_an_object_with_to_logical_plan_is_a_topology(tmp_path: Path) -> None:
    file = tmp_path / "foreign_topo.py"
    file.write_text(
        "from test_client_extensions import ForeignTopology\ntopology = ForeignTopology()\n"
    )
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        loaded = load_topology(str(file), name="renamed")
    finally:
        sys.modules.pop("foreign_topo", None)
    assert loaded.plan.name == "renamed" and [c.name for c in loaded.plan.components] == ["s", "b"]


def fake_yaml_loader(path: Path, name: str | None) -> LoadedTopology:
    return LoadedTopology(plan(name or path.stem), path.parent, str(path))


def test_files_with_a_registered_suffix_go_to_their_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = metadata.EntryPoint(
        name=".fake", value=f"{__name__}:fake_yaml_loader", group=_loading.LOADERS_GROUP
    )
    monkeypatch.setattr(_loading.metadata, "entry_points", lambda group: [entry])
    sys.modules.setdefault(__name__, sys.modules[__name__])
    file = tmp_path / "flow.fake"
    file.write_text("whatever")
    assert load_topology(str(file)).plan.name == "flow"
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_topology(str(tmp_path / "missing.fake"))
