"""The local-filesystem state manager: the conformance suite plus its file format."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from heron_core.errors import StateManagerError
from heron_core.proto import tmanager_pb2, topology_pb2
from heron_core.statemgr import Kind, LocalFileSystemStateManager, create_state_manager
from heron_core.testing.statemgr_conformance import (
    CHECKS,
    check_ephemeral_owner_vanishes,
)


def _config(root: Path) -> dict[str, Any]:
    return {"heron.class.state.manager": "localfs", "heron.statemgr.root.path": str(root)}


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_localfs_conformance(check: Any, tmp_path: Path) -> None:
    check(_config(tmp_path), "local")


@pytest.mark.processes
def test_localfs_node_of_a_dead_owner_process_is_absent(tmp_path: Path) -> None:
    check_ephemeral_owner_vanishes(_config(tmp_path), "local")


def test_localfs_layout_under_home_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with create_state_manager({}, "devbox") as sm:
        assert isinstance(sm, LocalFileSystemStateManager)
        sm.set_topology("wc", topology_pb2.Topology(name="wc"))
        sm.set_tmanager_location("wc", tmanager_pb2.TManagerLocation(host="h"))
        state = tmp_path / ".herondata" / "repository" / "state" / "devbox"
        assert (state / "topologies" / "wc").read_bytes() == (
            b"heron-state 1 -\n" + topology_pb2.Topology(name="wc").SerializeToString()
        )
        header = (state / "tmanagers" / "wc").read_bytes().split(b"\n")[0].split(b" ")
        assert header[:3] == [b"heron-state", b"1", str(os.getpid()).encode()]
        assert sorted(os.listdir(state / "topologies")) == ["wc"]  # no temporary files left


@pytest.mark.parametrize(
    "content",
    [b"garbage", b"heron-state 2 -\n", b"heron-state 1 12 x\n", b"heron-state 1 -\n\x0a\xff"],
    ids=["no-header", "wrong-version", "bad-owner", "bad-protobuf"],
)
def test_localfs_corrupt_file_raises_naming_the_path(tmp_path: Path, content: bytes) -> None:
    with create_state_manager(_config(tmp_path), "local") as sm:
        sm.set_topology("wc", topology_pb2.Topology(name="wc"))
        file = tmp_path / "local" / Kind.TOPOLOGY.value / "wc"
        file.write_bytes(content)
        with pytest.raises(StateManagerError, match=re.escape(str(file))):
            sm.get_topology("wc")
        with pytest.raises(StateManagerError, match=re.escape(str(file))):
            sm.watch(Kind.TOPOLOGY, "wc", print)


def test_localfs_unwritable_root_raises_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    sm = create_state_manager(_config(blocker), "local")
    with pytest.raises(StateManagerError, match=re.escape(str(blocker / "local"))):
        sm.start()
