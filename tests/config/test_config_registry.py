"""The key registry: the table's integrity and per-key validation."""

from __future__ import annotations

from typing import Any

import pytest

from heron_core.config import REGISTRY, RESERVED_PREFIXES, Key, Layer, merge_layers
from heron_core.errors import ConfigurationError

BRIEF_KEYS = {
    "topology.name": (str, ""),
    "topology.stmgrs": (int, 1),
    "topology.debug": (bool, False),
    "topology.message.timeout.secs": (int, 30),
    "topology.max.spout.pending": (int, None),
    "topology.acker.executors": (int, None),
    "topology.reliability.mode": (str, "ATLEAST_ONCE"),
    "topology.enable.message.timeouts": (bool, True),
    "topology.tick.tuple.freq.secs": (float, None),
    "topology.component.parallelism": (int, 1),
    "topology.component.cpu": (float, 1.0),
    "topology.component.ram": (int, 1 << 30),
    "topology.component.disk": (int, 1 << 30),
    "topology.container.cpu": (float, None),
    "topology.container.ram": (int, None),
    "topology.container.disk": (int, None),
    "topology.container.max.instances": (int, 10),
    "topology.container.padding.percentage": (int, 10),
    "topology.container.cpu.padding": (float, 1.0),
    "topology.container.ram.padding": (int, 1 << 30),
    "topology.container.disk.padding": (int, 1 << 30),
    "topology.packing.ffd.sorting.strategy": (str, "RAM_FIRST"),
    "topology.subprocess.timeout.secs": (int, 30),
    "topology.multilang.serializer": (str, "json"),
    "topology.sleep.spout.wait.strategy.time.ms": (int, 1),
    "topology.environment": (dict, {}),
    "topology.worker.childopts": (str, ""),
    "topology.stateful.checkpoint.interval.seconds": (float, 5.0),
    "topology.team.name": (str, ""),
    "heron.class.packing.algorithm": (str, "round_robin"),
    "heron.class.state.manager": (str, "localfs"),
    "heron.class.scheduler": (str, "local"),
    "heron.statemgr.connection.string": (str, ""),
    "heron.statemgr.root.path": (str, "~/.herondata/repository/state"),
    "heron.statemgr.zookeeper.session.timeout.ms": (int, 30000),
    "heron.statemgr.zookeeper.connection.timeout.ms": (int, 10000),
    "heron.directory.home": (str, "~/.herondata"),
    "heron.scheduler.spark.master": (str, "local[2]"),
    "heron.instance.batch.max.tuples": (int, 1024),
    "heron.instance.batch.flush.interval.ms": (float, 10.0),
    "heron.instance.acknowledgement.nbuckets": (int, 10),
    "heron.streammgr.network.backpressure.highwatermark.mb": (int, 8),
    "heron.streammgr.network.backpressure.lowwatermark.mb": (int, 4),
    "heron.streammgr.xormgr.rotatingmap.nbuckets": (int, 3),
    "heron.streammgr.tmanager.heartbeat.interval.sec": (float, 10.0),
    "heron.tmanager.stmgr.state.timeout.sec": (float, 60.0),
    "heron.executor.restart.backoff.initial.secs": (float, 1.0),
    "heron.executor.restart.backoff.max.secs": (float, 30.0),
    "heron.executor.restart.max.attempts": (int, 150),
    "heron.executor.stop.grace.secs": (float, 10.0),
    "heron.metrics.export.interval.sec": (float, 1.0),
}


@pytest.mark.parametrize("name", sorted(BRIEF_KEYS))
def test_required_key_registered_with_type_and_default(name: str) -> None:
    key = REGISTRY[name]
    assert (key.type, key.default) == BRIEF_KEYS[name]
    assert type(key.default) in (key.type, type(None))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_default_validates_against_its_own_key(name: str) -> None:
    key = REGISTRY[name]
    assert key.name == name
    assert key.name.startswith(RESERVED_PREFIXES)
    assert key.check(key.default, "defaults") == key.default
    assert key.doc and "\n" not in key.doc


def test_defaults_are_copied_not_shared() -> None:
    first = merge_layers()
    first["topology.environment"]["X"] = "1"
    assert merge_layers()["topology.environment"] == {}
    assert REGISTRY["topology.environment"].default == {}


def test_unknown_reserved_key_names_key_layer_and_close_matches() -> None:
    with pytest.raises(ConfigurationError) as info:
        Layer("topology config", {"topology.stmgr": 2}).validated()
    message = str(info.value)
    assert "'topology.stmgr'" in message
    assert "topology config" in message
    assert "'topology.stmgrs'" in message


def test_unknown_heron_key_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match=r"heron\.no\.such\.thing.*cluster\.yaml"):
        Layer("cluster.yaml", {"heron.no.such.thing": 1}).validated()


def test_non_string_key_is_rejected() -> None:
    values: dict[Any, Any] = {3: "x"}
    with pytest.raises(ConfigurationError, match=r"must be strings.*topology config"):
        Layer("topology config", values).validated()


def test_user_keys_pass_through_untouched() -> None:
    marker = object()
    values = {"my.key": marker, "storm.zookeeper.servers": ["a"], "topologyish": 1}
    out = merge_layers(Layer("topology config", values))
    assert out["my.key"] is marker
    assert out["storm.zookeeper.servers"] == ["a"]
    assert out["topologyish"] == 1


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("topology.stmgrs", "2", "int"),
        ("topology.stmgrs", 2.0, "int"),
        ("topology.stmgrs", True, "int"),
        ("topology.debug", 1, "bool"),
        ("topology.component.cpu", True, "float"),
        ("topology.component.cpu", "1.0", "float"),
        ("topology.name", 5, "str"),
        ("topology.environment", [("A", "1")], "dict"),
        ("topology.auto.task.hooks", "a:B", "list"),
        ("topology.stmgrs", None, "int"),
    ],
)
def test_wrong_type_names_key_layer_expected_and_got(
    name: str, value: object, expected: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        Layer("my layer", {name: value}).validated()
    message = str(info.value)
    assert repr(name) in message
    assert "my layer" in message
    assert f"expected {expected}" in message
    assert repr(value) in message
    assert type(value).__name__ in message


def test_int_is_accepted_and_normalized_for_float_keys() -> None:
    out = Layer("l", {"topology.component.cpu": 2}).validated()
    assert out["topology.component.cpu"] == 2.0
    assert type(out["topology.component.cpu"]) is float


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_float_keys_reject_non_finite(value: float) -> None:
    with pytest.raises(ConfigurationError, match="finite"):
        Layer("l", {"heron.metrics.export.interval.sec": value}).validated()


def test_nullable_key_accepts_none() -> None:
    assert Layer("l", {"topology.max.spout.pending": None}).validated() == {
        "topology.max.spout.pending": None
    }


def test_bad_choice_lists_the_choices() -> None:
    with pytest.raises(ConfigurationError) as info:
        Layer("l", {"topology.reliability.mode": "atleast_once"}).validated()
    message = str(info.value)
    for choice in ("'ATMOST_ONCE'", "'ATLEAST_ONCE'", "'EFFECTIVELY_ONCE'", "'atleast_once'"):
        assert choice in message


@pytest.mark.parametrize(
    ("name", "bad", "good"),
    [
        ("topology.stmgrs", 0, 1),
        ("topology.max.spout.pending", 0, 1),
        ("topology.acker.executors", -1, 0),
        ("topology.message.timeout.secs", 0, 1),
        ("topology.component.ram", (16 << 20) - 1, 16 << 20),
        ("topology.tick.tuple.freq.secs", 0, 0.5),
        ("heron.instance.batch.max.tuples", 0, 1),
        ("heron.instance.batch.flush.interval.ms", -0.5, 0),
    ],
)
def test_minimum(name: str, bad: float, good: float) -> None:
    with pytest.raises(ConfigurationError, match=rf"{name}.*expected >=? {REGISTRY[name].minimum}"):
        Layer("l", {name: bad}).validated()
    assert Layer("l", {name: good}).validated() == {name: good}


def test_maximum() -> None:
    name = "topology.container.padding.percentage"
    with pytest.raises(ConfigurationError, match=r"expected <= 100"):
        Layer("l", {name: 101}).validated()
    assert Layer("l", {name: 100}).validated() == {name: 100}


def test_key_rejects_unsupported_type() -> None:
    with pytest.raises(TypeError, match="tuple"):
        Key("topology.x", tuple, (), "doc")
