"""Key prefixes: ``heron.scheduler.spark.conf.<property>`` keys are validated (not silently
accepted), keep their full names through every layer and the plan's protobuf, and hold
strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from heron_core.config import (
    REGISTRY,
    SPARK_CONF_PREFIX,
    Key,
    KeyPrefix,
    Layer,
    build_config,
    config_from_proto,
    config_to_proto,
    load_cluster_config,
    parse_override,
)
from heron_core.config._registry import Registry
from heron_core.errors import ConfigurationError

CORES = "heron.scheduler.spark.conf.spark.cores.max"


def test_the_spark_conf_prefix_is_registered() -> None:
    assert SPARK_CONF_PREFIX in REGISTRY.prefixes
    assert REGISTRY.prefix_of(CORES) is SPARK_CONF_PREFIX
    assert SPARK_CONF_PREFIX.suffix(CORES) == "spark.cores.max"
    assert CORES not in REGISTRY  # a family, not a key with a default
    assert SPARK_CONF_PREFIX.doc and "\n" not in SPARK_CONF_PREFIX.doc


@pytest.mark.parametrize(
    ("value", "expected"),
    [("4", "4"), (4, "4"), (0.5, "0.5"), (True, "true"), (False, "false"), ("", "")],
)
def test_values_are_strings_in_property_spelling(value: object, expected: str) -> None:
    assert Layer("cluster.yaml", {CORES: value}).validated() == {CORES: expected}


@pytest.mark.parametrize("value", [[4], {"a": 1}, None, float("nan")])
def test_other_values_are_rejected_naming_key_and_layer(value: object) -> None:
    with pytest.raises(ConfigurationError, match=rf"{CORES}.*topology config.*string, number"):
        Layer("topology config", {CORES: value}).validated()


def test_a_prefix_alone_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="needs a name after the prefix"):
        Layer("command line", {"heron.scheduler.spark.conf.": "x"}).validated()


def test_a_near_miss_of_the_prefix_is_an_unknown_key() -> None:
    with pytest.raises(
        ConfigurationError, match=r"unknown config key 'heron\.scheduler\.spark\.cnf"
    ):
        Layer("command line", {"heron.scheduler.spark.cnf.spark.cores.max": "2"}).validated()


def test_command_line_keeps_the_raw_string() -> None:
    assert parse_override(f"{CORES}=4") == (CORES, "4")
    assert parse_override("heron.scheduler.spark.conf.spark.executor.extraJavaOptions=-Da=b") == (
        "heron.scheduler.spark.conf.spark.executor.extraJavaOptions",
        "-Da=b",
    )


def test_prefixed_keys_layer_and_survive_the_plan(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(f"{CORES}: 8\nheron.class.scheduler: spark\n")
    cluster = load_cluster_config("mine", tmp_path)
    assert cluster[CORES] == "8"
    config = build_config(cluster, {CORES: "6"}, dict([parse_override(f"{CORES}=4")]))
    assert config[CORES] == "4"
    assert config_from_proto(config_to_proto(config))[CORES] == "4"
    assert CORES not in build_config()  # no default: absent unless set


def test_a_registry_refuses_a_key_under_one_of_its_prefixes() -> None:
    family = KeyPrefix("heron.x.conf.", "Passed through.")
    with pytest.raises(ValueError, match="registered under key prefix"):
        Registry([Key("heron.x.conf.y", str, "", "A key.")], prefixes=[family])
    with pytest.raises(ValueError, match="must be reserved"):
        KeyPrefix("spark.", "Not reserved.")
