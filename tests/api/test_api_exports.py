"""The public surface of heron_core.api, pinned: any change shows up as a diff here."""

from __future__ import annotations

import heron_core.api
import heron_core.plan

API_NAMES = [
    "Bolt",
    "BoltCollector",
    "ComponentSpec",
    "CustomGrouping",
    "DEFAULT_STREAM",
    "GlobalStreamId",
    "Grouping",
    "HashMapState",
    "InputBatch",
    "SYSTEM_COMPONENT",
    "ShellComponent",
    "Spout",
    "SpoutCollector",
    "State",
    "StatefulComponent",
    "Stream",
    "TICK_STREAM",
    "Topology",
    "TopologyBuilder",
    "TopologyContext",
    "Tuple",
    "constants",
    "hooks",
    "metrics",
    "shell_component",
]

PLAN_NAMES = [
    "ComponentDef",
    "ConfigItems",
    "GroupingKind",
    "InputDef",
    "LogicalPlan",
    "PythonSpec",
    "ShellSpec",
    "StreamDef",
    "TopologyState",
]


def test_api_public_names_are_pinned() -> None:
    assert sorted(heron_core.api.__all__) == API_NAMES
    for name in API_NAMES:
        assert getattr(heron_core.api, name) is not None


def test_plan_public_names_are_pinned() -> None:
    assert sorted(heron_core.plan.__all__) == PLAN_NAMES
    for name in PLAN_NAMES:
        assert hasattr(heron_core.plan, name)


def test_system_names() -> None:
    api = heron_core.api
    assert (api.TICK_STREAM, api.SYSTEM_COMPONENT, api.DEFAULT_STREAM) == (
        "__tick",
        "__system",
        "default",
    )
    constants = api.constants
    assert constants.TOPOLOGY_RELIABILITY_MODE == "topology.reliability.mode"
    assert constants.TOPOLOGY_STMGRS == "topology.stmgrs"
    assert constants.TOPOLOGY_CONTAINER_RAM_REQUESTED == "topology.container.ram"
    assert [m.value for m in constants.TopologyReliabilityMode] == [
        "ATMOST_ONCE",
        "ATLEAST_ONCE",
        "EFFECTIVELY_ONCE",
    ]
    keys = [getattr(constants, n) for n in constants.__all__ if n.startswith("TOPOLOGY_")]
    assert len(keys) == len(set(keys)) == 32
    assert all(key.startswith("topology.") for key in keys)
