"""The packing registry, the public names, and the errors for bad config and topologies."""

from __future__ import annotations

import pytest

import heron_core.packing
from heron_core.config import build_config
from heron_core.errors import ConfigurationError, TopologyValidationError
from heron_core.packing import (
    BUILTINS,
    FirstFitDecreasingPacking,
    Packing,
    RoundRobinPacking,
    create_packing,
)
from heron_core.proto import topology_pb2
from heron_core.testing.packing_conformance import make_topology

ALGORITHMS = [RoundRobinPacking, FirstFitDecreasingPacking]


def test_public_names() -> None:
    assert sorted(heron_core.packing.__all__) == [
        "BUILTINS",
        "FirstFitDecreasingPacking",
        "Packing",
        "RoundRobinPacking",
        "create_packing",
    ]


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ("round_robin", RoundRobinPacking),
        ("first_fit_decreasing", FirstFitDecreasingPacking),
        ("heron_core.packing:FirstFitDecreasingPacking", FirstFitDecreasingPacking),
    ],
)
def test_create_packing_by_name_or_path(spec: str, cls: type[Packing]) -> None:
    assert type(create_packing(spec)) is cls


def test_create_packing_returns_an_instance_unchanged() -> None:
    packing = RoundRobinPacking()
    assert create_packing(packing) is packing


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as info:
        create_packing("resource_compliant_rr")
    message = str(info.value)
    assert "'resource_compliant_rr'" in message
    assert ", ".join(sorted(BUILTINS)) in message


def test_a_class_that_is_not_a_packing_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="not a subclass of Packing"):
        create_packing("collections:OrderedDict")


@pytest.mark.parametrize("cls", ALGORITHMS)
@pytest.mark.parametrize(
    "key", ["topology.component.ram", "topology.container.cpu", "topology.container.disk.padding"]
)
def test_a_missing_key_names_the_key(cls: type[Packing], key: str) -> None:
    config = build_config()
    del config[key]
    with pytest.raises(ConfigurationError, match=f"{key!r} is missing from the config of topology"):
        cls().pack(make_topology("wc", {"a": 1}), config)


@pytest.mark.parametrize("cls", ALGORITHMS)
@pytest.mark.parametrize(
    ("value", "expected"),
    [("2", "expected float, got '2' (str)"), (True, "expected float"), (0.0, "expected > 0")],
)
def test_a_bad_component_override_names_the_component(
    cls: type[Packing], value: object, expected: str
) -> None:
    topology = make_topology("wc", {"a": 1, "b": 1}, {"b": {"topology.component.cpu": value}})
    with pytest.raises(ConfigurationError) as info:
        cls().pack(topology, build_config())
    message = str(info.value)
    assert "'topology.component.cpu' (from the config of topology 'wc', component 'b')" in message
    assert expected in message


def test_a_component_override_below_the_registry_minimum_is_refused() -> None:
    topology = make_topology("wc", {"a": 1}, {"a": {"topology.component.ram": 1024}})
    with pytest.raises(ConfigurationError, match=r"component 'a'.*expected >= 16777216, got 1024"):
        RoundRobinPacking().pack(topology, build_config())


@pytest.mark.parametrize("cls", ALGORITHMS)
def test_an_invalid_topology_level_value_is_refused(cls: type[Packing]) -> None:
    config = build_config()
    config["topology.container.ram"] = "8g"  # past build_config, which would refuse it
    with pytest.raises(ConfigurationError, match=r"'topology\.container\.ram' .*got '8g'"):
        cls().pack(make_topology("wc", {"a": 1}), config)


def test_an_undecodable_component_config_names_the_component() -> None:
    topology = make_topology("wc", {"a": 1})
    topology.spouts[0].comp.config.kvs.add(key="topology.component.cpu", json_value="{not json")
    with pytest.raises(ConfigurationError, match="component 'a': cannot decode component config"):
        RoundRobinPacking().pack(topology, build_config())


@pytest.mark.parametrize("cls", ALGORITHMS)
def test_parallelism_below_one_is_a_validation_error(cls: type[Packing]) -> None:
    with pytest.raises(TopologyValidationError) as info:
        cls().pack(make_topology("wc", {"a": 1, "b": 0}), build_config())
    assert (info.value.topology, info.value.component) == ("wc", "b")


@pytest.mark.parametrize("cls", ALGORITHMS)
def test_duplicate_component_names_are_a_validation_error(cls: type[Packing]) -> None:
    topology = make_topology("wc", {"a": 1, "b": 1})
    topology.bolts[0].comp.name = "a"
    with pytest.raises(TopologyValidationError, match="component 'a': component is defined twice"):
        cls().pack(topology, build_config())


@pytest.mark.parametrize("cls", ALGORITHMS)
def test_a_topology_without_components_is_a_validation_error(cls: type[Packing]) -> None:
    with pytest.raises(TopologyValidationError, match="has no spouts or bolts"):
        cls().pack(topology_pb2.Topology(id="e-1", name="empty"), build_config())
