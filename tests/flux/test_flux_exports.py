"""The public names of the Flux modules, pinned: an API change shows up as a diff here."""

from __future__ import annotations

import importlib

import pytest

from heron_core.plugins import resolve_class
from storm_compat.flux import JAVA_CLASSES

PUBLIC = {
    "storm_compat.flux": [
        "BeanDef",
        "ConfigMethodDef",
        "FluxDefinition",
        "GROUPING_TYPES",
        "GroupingDef",
        "JAVA_CLASSES",
        "PROPERTIES_ENV",
        "PropertyDef",
        "Ref",
        "RefList",
        "StreamDef",
        "TopologySourceDef",
        "VertexDef",
        "build_plan",
        "find_properties",
        "load_definition",
        "load_flux_topology",
        "parse_properties",
        "substitute",
    ],
    "storm_compat.flux.wrappers": ["FluxShellBolt", "FluxShellSpout", "LogInfoBolt"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names(module: str) -> None:
    loaded = importlib.import_module(module)
    assert sorted(loaded.__all__) == sorted(PUBLIC[module])
    assert all(hasattr(loaded, name) for name in loaded.__all__)


def test_every_java_class_with_a_counterpart_resolves() -> None:
    assert all(isinstance(resolve_class(path), type) for path in JAVA_CLASSES.values())
