"""The state manager registry and the public names of heron_core.statemgr."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import heron_core.statemgr
from heron_core.errors import ConfigurationError, StateManagerError
from heron_core.statemgr import (
    BUILTINS,
    Kind,
    LocalFileSystemStateManager,
    StateManager,
    ZooKeeperStateManager,
    create_state_manager,
)


def test_statemgr_public_names() -> None:
    assert sorted(heron_core.statemgr.__all__) == [
        "BUILTINS",
        "Kind",
        "LocalFileSystemStateManager",
        "Seal",
        "SealBroken",
        "StateAuthenticationError",
        "StateKey",
        "StateManager",
        "WatchCallback",
        "WatchHandle",
        "ZooKeeperStateManager",
        "create_state_manager",
    ]
    assert sorted(BUILTINS) == ["localfs", "zookeeper"]


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        (None, LocalFileSystemStateManager),
        ("localfs", LocalFileSystemStateManager),
        ("zookeeper", ZooKeeperStateManager),
        ("heron_core.statemgr:ZooKeeperStateManager", ZooKeeperStateManager),
    ],
)
def test_create_state_manager_builds_the_named_class(
    spec: str | None, cls: type[StateManager], tmp_path: Path
) -> None:
    config = {
        "heron.statemgr.root.path": "/heron" if cls is ZooKeeperStateManager else str(tmp_path)
    }
    if spec is not None:
        config["heron.class.state.manager"] = spec
    sm = create_state_manager(config, "c1")
    assert type(sm) is cls
    assert (sm.config, sm.cluster) == (config, "c1")
    with pytest.raises(StateManagerError, match="not started"):
        sm.list_topologies()


def test_create_state_manager_accepts_an_instance(tmp_path: Path) -> None:
    sm = LocalFileSystemStateManager({"heron.statemgr.root.path": str(tmp_path)}, "c1")
    assert create_state_manager({"heron.class.state.manager": sm}, "other") is sm


@pytest.mark.parametrize("spec", ["etcd", "heron_core.errors:HeronError", "no.such.module:X"])
def test_create_state_manager_refuses_bad_names(spec: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(spec)):
        create_state_manager({"heron.class.state.manager": spec}, "c1")


def test_kinds_match_heron_layout() -> None:
    assert [kind.value for kind in Kind] == [
        "topologies",
        "packingplans",
        "pplans",
        "executionstate",
        "tmanagers",
        "schedulers",
        "statefulcheckpoints",
    ]
    assert [kind for kind in Kind if kind.ephemeral] == [
        Kind.TMANAGER_LOCATION,
        Kind.SCHEDULER_LOCATION,
    ]
