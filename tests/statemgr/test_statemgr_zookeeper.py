"""The ZooKeeper state manager against a real server: the conformance suite, its znode layout,
and an unreachable server (sessions that expire and servers that restart:
``test_statemgr_zk_recovery.py``)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from heron_core.errors import ConfigurationError, StateManagerError
from heron_core.proto import tmanager_pb2, topology_pb2
from heron_core.statemgr import ZooKeeperStateManager, create_state_manager
from heron_core.testing.statemgr_conformance import (
    CHECKS,
    DEADLINE_S,
    check_ephemeral_owner_vanishes,
)
from heron_core.testing.zookeeper import ZooKeeperServer

_SESSION_KEY = "heron.statemgr.zookeeper.session.timeout.ms"


@pytest.fixture
def kazoo(zookeeper_server: ZooKeeperServer) -> Iterator[KazooClient]:
    client = KazooClient(zookeeper_server.connection_string)
    client.start(timeout=DEADLINE_S)
    yield client
    client.stop()
    client.close()


@pytest.mark.zookeeper
@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_zookeeper_conformance(check: Any, zk_config: dict[str, Any]) -> None:
    check(zk_config, "test")


@pytest.mark.zookeeper
@pytest.mark.processes
def test_zookeeper_node_of_a_killed_owner_process_is_absent(zk_config: dict[str, Any]) -> None:
    # The server drops the dead owner's session (and node) after its session timeout.
    check_ephemeral_owner_vanishes({**zk_config, _SESSION_KEY: 2000}, "test")


@pytest.mark.zookeeper
def test_zookeeper_layout_and_ephemeral_znodes(
    zk_config: dict[str, Any], kazoo: KazooClient
) -> None:
    root = zk_config["heron.statemgr.root.path"]
    topology = topology_pb2.Topology(name="wc", id="wc-1")
    with ZooKeeperStateManager(zk_config, "test") as sm:
        sm.set_topology("wc", topology)
        sm.set_tmanager_location("wc", tmanager_pb2.TManagerLocation(host="h"))
        data, stat = kazoo.get(f"{root}/topologies/wc")
        assert topology_pb2.Topology.FromString(data) == topology
        assert stat.ephemeralOwner == 0
        _, stat = kazoo.get(f"{root}/tmanagers/wc")
        assert stat.ephemeralOwner == sm._client.client_id[0]
    assert kazoo.exists(f"{root}/tmanagers/wc") is None
    assert kazoo.exists(f"{root}/topologies/wc") is not None


def test_zookeeper_unreachable_server_raises_naming_it() -> None:
    with socket.socket() as bound_not_listening:  # connections to it are refused
        bound_not_listening.bind(("127.0.0.1", 0))
        hosts = f"127.0.0.1:{bound_not_listening.getsockname()[1]}"
        config = {
            "heron.class.state.manager": "zookeeper",
            "heron.statemgr.connection.string": hosts,
            "heron.statemgr.zookeeper.connection.timeout.ms": 2000,
        }
        sm = create_state_manager(config, "test")
        with pytest.raises(StateManagerError, match=hosts):
            sm.start()
        sm.close()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("heron.statemgr.root.path", "~/.herondata/repository/state"),
        (_SESSION_KEY, 0),
        ("heron.statemgr.zookeeper.connection.timeout.ms", "10s"),
    ],
)
def test_zookeeper_bad_config_raises_naming_the_key(key: str, value: object) -> None:
    with pytest.raises(ConfigurationError, match=key):
        ZooKeeperStateManager({key: value}, "test")
