"""Cluster YAML files: built-ins, a config directory, errors naming the file."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from heron_core.config import CONFIG_PATH_ENV, build_config, known_clusters, load_cluster_config
from heron_core.errors import ConfigurationError

BUILTIN = ("local", "localzk", "spark")


@pytest.fixture(autouse=True)
def _no_config_path_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_PATH_ENV, raising=False)


def test_builtin_yaml_files_ship_as_package_data() -> None:
    clusters = resources.files("heron_core.config").joinpath("clusters")
    for name in BUILTIN:
        assert clusters.joinpath(f"{name}.yaml").is_file()
    assert known_clusters() == list(BUILTIN)


def test_local_cluster() -> None:
    cfg = load_cluster_config("local")
    assert cfg["heron.class.state.manager"] == "localfs"
    assert cfg["heron.class.scheduler"] == "local"


def test_localzk_cluster() -> None:
    cfg = load_cluster_config("localzk")
    assert cfg["heron.class.state.manager"] == "zookeeper"
    assert cfg["heron.statemgr.connection.string"] == "127.0.0.1:2181"
    assert cfg["heron.statemgr.root.path"] == "/heron"
    assert cfg["heron.class.scheduler"] == "local"


def test_spark_cluster() -> None:
    cfg = load_cluster_config("spark")
    assert cfg["heron.class.state.manager"] == "zookeeper"
    assert cfg["heron.class.scheduler"] == "spark"
    assert cfg["heron.scheduler.spark.master"].startswith("local[")


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_clusters_resolve_fully(name: str) -> None:
    cfg = build_config(cluster_config=load_cluster_config(name))
    assert cfg["heron.class.scheduler"] in ("local", "spark")


def test_unknown_cluster_lists_known_ones() -> None:
    with pytest.raises(ConfigurationError) as info:
        load_cluster_config("aurora")
    message = str(info.value)
    assert "'aurora'" in message
    assert "known clusters: local, localzk, spark" in message


def _write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_path_argument_replaces_builtins(tmp_path: Path) -> None:
    _write(tmp_path, "prod", "topology.workers: 4\nmy.setting: [1, 2]\n")
    _write(tmp_path, "empty", "")
    (tmp_path / "notes.txt").write_text("not a cluster", encoding="utf-8")
    assert known_clusters(tmp_path) == ["empty", "prod"]
    assert load_cluster_config("prod", tmp_path) == {"topology.stmgrs": 4, "my.setting": [1, 2]}
    assert load_cluster_config("empty", str(tmp_path)) == {}
    with pytest.raises(ConfigurationError, match="known clusters: empty, prod"):
        load_cluster_config("local", tmp_path)


def test_environment_variable_names_the_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "envcluster", "heron.class.scheduler: spark\n")
    monkeypatch.setenv(CONFIG_PATH_ENV, str(tmp_path))
    assert known_clusters() == ["envcluster"]
    assert load_cluster_config("envcluster") == {"heron.class.scheduler": "spark"}


def test_missing_config_dir_has_no_clusters(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert known_clusters(missing) == []
    with pytest.raises(ConfigurationError, match="known clusters: none"):
        load_cluster_config("local", missing)


def test_invalid_value_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad", "topology.stmgrs: many\n")
    with pytest.raises(ConfigurationError) as info:
        load_cluster_config("bad", tmp_path)
    message = str(info.value)
    assert str(path) in message
    assert "'topology.stmgrs'" in message
    assert "expected int" in message


def test_unknown_reserved_key_in_file_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "typo", "heron.class.schedular: local\n")
    with pytest.raises(ConfigurationError, match=r"heron\.class\.schedular") as info:
        load_cluster_config("typo", tmp_path)
    assert str(path) in str(info.value)
    assert "'heron.class.scheduler'" in str(info.value)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("heron.class.scheduler: [local\n", "is not valid YAML"),
        ("- a\n- b\n", "expected a mapping"),
    ],
)
def test_malformed_file_names_the_file(tmp_path: Path, text: str, pattern: str) -> None:
    path = _write(tmp_path, "broken", text)
    with pytest.raises(ConfigurationError, match=pattern) as info:
        load_cluster_config("broken", tmp_path)
    assert str(path) in str(info.value)
