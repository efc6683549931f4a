"""The ZooKeeperServer test helper: readiness, logs, the install hint when it is missing, a
restart on the same port with the same data, and finding and expiring another process's
session."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from kazoo.client import KazooClient

from heron_core.testing.processes import PipeLines, wait_until
from heron_core.testing.statemgr_conformance import DEADLINE_S
from heron_core.testing.zookeeper import ZooKeeperServer, ZooKeeperServerError, session_password


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


_SESSION_HOLDER = """
import sys
import threading
from kazoo.client import KazooClient, KazooState
client = KazooClient(sys.argv[1])
lock = threading.Lock()

def say(line):  # one line at a time: kazoo's thread and this one both write
    with lock:
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()

client.add_listener(lambda state: say(state) if state == KazooState.LOST else None)
client.start(timeout=60)
say(f"session {client.client_id[0]}")
sys.stdin.readline()
client.stop()
client.close()
"""


@pytest.mark.zookeeper
@pytest.mark.processes
def test_zk_server_finds_and_expires_the_session_of_another_process(
    zookeeper_server: ZooKeeperServer,
) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", _SESSION_HOLDER, zookeeper_server.connection_string],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            lines = PipeLines(holder.stdout)
            wait_until(lambda: lines.match(r"session \d+"), "the holder's session", DEADLINE_S)
            session = int(lines.match(r"session \d+")[0].split()[1])
            assert zookeeper_server.session_of(holder.pid) == session
            assert session_password(session) != bytes(16)

            zookeeper_server.expire_session(session)  # no password from the holder: derived
            wait_until(lambda: lines.match("LOST"), "the holder's session to expire", DEADLINE_S)

            # kazoo opens a new session at once: that is the one the holder holds then.
            def renewed() -> bool:
                with contextlib.suppress(ZooKeeperServerError):  # while it reconnects
                    return zookeeper_server.session_of(holder.pid) != session
                return False

            wait_until(renewed, "the holder's new session", DEADLINE_S)
        finally:
            holder.kill()  # by pid; the with block waits for it and closes the pipes


@pytest.mark.zookeeper
@pytest.mark.processes
def test_zk_server_restarts_on_its_port_with_its_data(private_zookeeper: ZooKeeperServer) -> None:
    port, pid = private_zookeeper.port, private_zookeeper.pid
    client = KazooClient(private_zookeeper.restart_connection_string)
    client.start(timeout=DEADLINE_S)
    try:
        client.create("/kept", b"data")
        private_zookeeper.stop_process()
        assert private_zookeeper.pid is None
        assert pid is not None and not _running(pid)
        private_zookeeper.start()
        assert private_zookeeper.port == port
        assert private_zookeeper.pid not in (None, pid)
        assert client.get("/kept")[0] == b"data"  # kazoo reconnected to the same address
    finally:
        client.stop()
        client.close()
    with pytest.raises(ZooKeeperServerError, match="already running"):
        private_zookeeper.start()


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
