"""Layering, aliases, cross-key rules and the helpers built on a resolved config."""

from __future__ import annotations

from pathlib import Path

import pytest

from heron_core.config import (
    REGISTRY,
    Layer,
    acking_enabled,
    build_config,
    inert_settings,
    merge_layers,
    resolve_path,
)
from heron_core.errors import ConfigurationError

LOW = "heron.streammgr.network.backpressure.lowwatermark.mb"
HIGH = "heron.streammgr.network.backpressure.highwatermark.mb"


def test_no_layers_gives_every_default() -> None:
    assert merge_layers() == {name: key.default for name, key in REGISTRY.items()}


def test_each_layer_beats_the_one_below() -> None:
    name = "topology.message.timeout.secs"
    assert build_config()[name] == 30
    assert build_config(cluster_config={name: 40})[name] == 40
    assert build_config({name: 40}, {name: 50})[name] == 50
    assert build_config({name: 40}, {name: 50}, {name: 60})[name] == 60
    assert build_config({name: 40}, None, {name: 60})[name] == 60


def test_layers_only_override_the_keys_they_set() -> None:
    cfg = build_config({"topology.debug": True}, {"topology.stmgrs": 3}, {"user.key": 1})
    assert (cfg["topology.debug"], cfg["topology.stmgrs"], cfg["user.key"]) == (True, 3, 1)
    assert cfg["topology.message.timeout.secs"] == 30


def test_user_keys_layer_like_registered_ones() -> None:
    cfg = build_config({"a": 1, "b": 1}, {"b": 2, "c": 2}, {"c": 3})
    assert (cfg["a"], cfg["b"], cfg["c"]) == (1, 2, 3)


def test_alias_sets_the_canonical_key_and_is_not_kept() -> None:
    cfg = build_config(topology_config={"topology.workers": 4})
    assert cfg["topology.stmgrs"] == 4
    assert "topology.workers" not in cfg


def test_alias_in_a_later_layer_beats_canonical_in_an_earlier_one() -> None:
    assert build_config({"topology.stmgrs": 2}, {"topology.workers": 5})["topology.stmgrs"] == 5
    assert build_config({"topology.workers": 2}, {"topology.stmgrs": 5})["topology.stmgrs"] == 5


def test_alias_and_canonical_equal_in_one_layer_is_fine() -> None:
    layer = Layer("topology config", {"topology.workers": 3, "topology.stmgrs": 3})
    assert layer.validated() == {"topology.stmgrs": 3}


def test_alias_and_canonical_conflict_in_one_layer() -> None:
    layer = Layer("topology config", {"topology.stmgrs": 2, "topology.workers": 3})
    with pytest.raises(ConfigurationError) as info:
        layer.validated()
    message = str(info.value)
    for part in ("topology config", "'topology.stmgrs' = 2", "'topology.workers' = 3"):
        assert part in message


def test_alias_values_are_validated_under_the_canonical_key() -> None:
    with pytest.raises(ConfigurationError, match=r"'topology\.stmgrs'.*expected >= 1"):
        Layer("l", {"topology.workers": 0}).validated()


def test_layer_names_appear_in_errors_from_build_config() -> None:
    for position, name in enumerate(("cluster config", "topology config", "command line")):
        layers: list[dict[str, object] | None] = [None, None, None]
        layers[position] = {"topology.debug": "yes"}
        with pytest.raises(ConfigurationError, match=f"from {name}"):
            build_config(*layers)


def test_watermark_pair_must_be_ordered() -> None:
    with pytest.raises(ConfigurationError) as info:
        merge_layers(Layer("cluster.yaml", {LOW: 80}), Layer("command line", {HIGH: 80}))
    message = str(info.value)
    assert f"{LOW!r} = 80 (from cluster.yaml)" in message
    assert f"{HIGH!r} = 80 (from command line)" in message


def test_watermark_pair_checked_after_merging() -> None:
    cfg = merge_layers(Layer("a", {LOW: 150}), Layer("b", {HIGH: 200}))
    assert (cfg[LOW], cfg[HIGH]) == (150, 200)
    with pytest.raises(ConfigurationError, match=r"from registry defaults"):
        merge_layers(Layer("a", {LOW: 150}))


def test_backoff_initial_may_equal_but_not_exceed_max() -> None:
    initial = "heron.executor.restart.backoff.initial.secs"
    assert merge_layers(Layer("a", {initial: 30}))[initial] == 30.0
    with pytest.raises(ConfigurationError, match=r"<="):
        merge_layers(Layer("a", {initial: 31}))


def test_result_is_independent_of_input_layers() -> None:
    env = {"A": "1"}
    cfg = build_config(topology_config={"topology.environment": env})
    cfg["topology.environment"]["B"] = "2"
    assert env == {"A": "1"}


@pytest.mark.parametrize(
    ("mode", "ackers", "expected"),
    [
        ("ATLEAST_ONCE", None, True),
        ("ATLEAST_ONCE", 1, True),
        ("ATLEAST_ONCE", 0, False),
        ("ATMOST_ONCE", None, False),
    ],
)
def test_acking_enabled(mode: str, ackers: int | None, expected: bool) -> None:
    cfg = build_config(
        topology_config={"topology.reliability.mode": mode, "topology.acker.executors": ackers}
    )
    assert acking_enabled(cfg) is expected


def test_effectively_once_is_accepted_with_a_positive_checkpoint_interval() -> None:
    config = build_config(topology_config={"topology.reliability.mode": "EFFECTIVELY_ONCE"})
    assert config["topology.reliability.mode"] == "EFFECTIVELY_ONCE"
    assert config["topology.stateful.checkpoint.interval.seconds"] == 5.0
    with pytest.raises(ConfigurationError) as refused:
        build_config(overrides={"topology.stateful.checkpoint.interval.seconds": 0})
    assert "'topology.stateful.checkpoint.interval.seconds' (from command line)" in str(
        refused.value
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("topology.serializer.classname", "mypkg.ser:Kryo"),
        ("topology.component.output.bps", 1000),
        ("topology.component.parallelism", 3),
        ("topology.component.rammap", "count:2147483648"),
        ("topology.container.max.cpu.hint", 4.0),
    ],
)
def test_a_key_that_is_not_honoured_is_refused_not_ignored(key: str, value: object) -> None:
    with pytest.raises(ConfigurationError, match=rf"'{key}' \(from command line\).* is refused: "):
        build_config(overrides={key: value})
    assert build_config(overrides={key: REGISTRY[key].default})[key] == REGISTRY[key].default


def test_inert_settings_are_named_not_ignored() -> None:
    cfg = build_config(
        topology_config={
            "topology.worker.childopts": "-Xmx2g",
            "topology.kryo.factory": "a.Factory",
            "topology.kryo.register": ["a.B"],  # honoured: the classes tuple values may hold
        }
    )
    assert inert_settings(cfg) == [
        "config key 'topology.worker.childopts' = '-Xmx2g' has no effect: no JVM runs here",
        "config key 'topology.kryo.factory' = 'a.Factory' has no effect: tuple values are "
        "pickled; no Kryo or Java serialization runs here",
    ]
    assert inert_settings(build_config()) == []


def test_acking_enabled_uses_defaults_for_missing_keys() -> None:
    assert acking_enabled({}) is True
    assert acking_enabled({"topology.reliability.mode": "ATMOST_ONCE"}) is False


def test_resolve_path_expands_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_path("~/.herondata") == tmp_path / ".herondata"
    assert resolve_path("/abs/dir") == Path("/abs/dir")
