"""The ZooKeeperServer test helper: readiness, logs, and the install hint when it is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from kazoo.client import KazooClient

from heron_core.testing.statemgr_conformance import DEADLINE_S
from heron_core.testing.zookeeper import ZooKeeperServer, ZooKeeperServerError


@pytest.mark.zookeeper
def test_zk_server_serves_and_logs(zookeeper_server: ZooKeeperServer) -> None:
    client = KazooClient(zookeeper_server.connection_string)
    client.start(timeout=DEADLINE_S)
    try:
        assert "zookeeper" in client.get_children("/")
    finally:
        client.stop()
        client.close()
    assert f"127.0.0.1:{zookeeper_server.port}" in zookeeper_server.log_text()


def test_zk_server_missing_install_says_how_to_install(tmp_path: Path) -> None:
    server = ZooKeeperServer(zookeeper_jar=tmp_path / "zookeeper.jar")
    with pytest.raises(ZooKeeperServerError, match="apt-get install zookeeper"):
        server.start()
    server.stop()
