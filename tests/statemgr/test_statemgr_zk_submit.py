"""``heron submit`` on ``localzk``: a ZooKeeper that is down gives one clear error in time, and a
topology submitted with ``heron.statemgr.zookeeper.auth.file`` runs with every daemon logged in
as the digest user while its nodes refuse everyone else."""

from __future__ import annotations

import logging
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from home_support import (  # noqa: F401 - heron_home_fixture is a fixture
    WORD_COUNT,
    heron_home_fixture,
    wait_until,
)
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from statemgr_auth_support import PASSWORD, write_credential  # type: ignore[import-not-found]

from heron_core.client import kill, list_topologies, submit
from heron_core.errors import StateManagerError
from heron_core.statemgr import Kind
from heron_core.statemgr._zk_auth import AUTH_FILE_KEY, load_credential
from heron_core.testing.statemgr_conformance import DEADLINE_S
from heron_core.testing.zookeeper import ZooKeeperServer

_HOSTS = "heron.statemgr.connection.string"
_CONNECTION = "heron.statemgr.zookeeper.connection.timeout.ms"


def test_submit_to_a_zookeeper_that_is_down_fails_in_time_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as bound_not_listening:  # connections to it are refused
        bound_not_listening.bind(("127.0.0.1", 0))
        hosts = f"127.0.0.1:{bound_not_listening.getsockname()[1]}"
        began = time.monotonic()
        with caplog.at_level(logging.DEBUG), pytest.raises(StateManagerError) as down:
            submit(
                "localzk",
                str(WORD_COUNT),
                overrides=[f"{_HOSTS}={hosts}", f"{_CONNECTION}=1000"],
                heron_home=tmp_path / "home",
            )
        took = time.monotonic() - began
    assert str(down.value) == (
        f"cannot connect to ZooKeeper at {hosts!r} ({_HOSTS}) within 1 s ({_CONNECTION}); the "
        "last attempt: Connection dropped: socket connection error: Connection refused; is "
        "ZooKeeper running there, and does the connection string name it?"
    )
    assert took < 30.0  # the acceptance bound, far above the 1 s asked for
    # kazoo's warning per attempt went to DEBUG: the error above is all the user sees
    kazoo = [r for r in caplog.records if r.name.startswith("kazoo")]
    assert kazoo, "kazoo logged its attempts"
    assert all(r.levelno < logging.WARNING for r in kazoo), [r.getMessage() for r in kazoo]
    assert not (tmp_path / "home" / "topologies").exists()  # nothing was installed


def _tree(client: KazooClient, top: str) -> list[str]:
    return [top] + [
        node
        for child in sorted(client.get_children(top))
        for node in _tree(client, f"{top}/{child}")
    ]


@pytest.mark.zookeeper
@pytest.mark.processes
def test_a_localzk_topology_with_auth_runs_and_refuses_other_clients(
    heron_home: Path, tmp_path: Path, zk_config: dict[str, Any], zookeeper_server: ZooKeeperServer
) -> None:
    auth_file = write_credential(tmp_path / "zk-auth", f"heron:{PASSWORD}\n")
    root = zk_config["heron.statemgr.root.path"]
    overrides = [
        *(f"{k}={v}" for k, v in zk_config.items() if k.startswith("heron.statemgr.")),
        f"{AUTH_FILE_KEY}={auth_file}",
        "topology.tick.tuple.freq.secs=1",
    ]
    result = submit(
        "localzk", str(WORD_COUNT), name="wcacl", overrides=overrides, heron_home=heron_home
    )
    try:
        _check_running_and_protected(result.working_dir / "logs", overrides, heron_home, root)
        _check_nodes(zookeeper_server, root, auth_file)
    finally:
        kill("localzk", "wcacl", heron_home=heron_home, overrides=overrides)  # logged in too
    assert list_topologies("localzk", heron_home=heron_home, overrides=overrides) == []


def _check_running_and_protected(
    logs: Path, overrides: list[str], heron_home: Path, root: str
) -> None:
    def counted() -> bool:  # the count bolts log their counts on every tick
        text = "".join(log.read_text(errors="replace") for log in logs.glob("*.log"))
        return re.search(r"\b[1-9]\d* distinct words", text) is not None

    wait_until(counted, "words counted (spout -> split -> count through the stream managers)")
    (info,) = list_topologies("localzk", heron_home=heron_home, overrides=overrides)
    assert (info.name, info.state) == ("wcacl", "running")  # the scheduler's location read
    for log in logs.glob("*.log"):  # every daemon's log: the password is in none
        assert PASSWORD not in log.read_text(errors="replace"), log


def _check_nodes(server: ZooKeeperServer, root: str, auth_file: str) -> None:
    credential = load_credential({AUTH_FILE_KEY: auth_file})
    assert credential is not None
    owner = KazooClient(server.connection_string, auth_data=credential.auth_data)
    stranger = KazooClient(server.connection_string)
    for client in (owner, stranger):
        client.start(timeout=DEADLINE_S)
    try:
        nodes = _tree(owner, root)
        written = {node.removeprefix(f"{root}/") for node in nodes}
        # every kind, the tmanager's and the scheduler's (set by daemons) included; but the
        # stateful checkpoints, which only an EFFECTIVELY_ONCE topology writes (their ACL is
        # checked in test_statemgr_zk_acl)
        kinds = set(Kind) - {Kind.STATEFUL_CHECKPOINTS}
        assert {f"{kind.value}/wcacl" for kind in kinds} <= written
        for node in nodes:
            assert owner.get_acls(node)[0] == [credential.acl], node
            assert PASSWORD.encode() not in owner.get(node)[0], node
            with pytest.raises(NoAuthError):
                stranger.set(node, b"forged")
            if node != root:  # a delete is checked against the parent's ACL
                with pytest.raises(NoAuthError):
                    stranger.delete(node)
    finally:
        for client in (owner, stranger):
            client.stop()
            client.close()
