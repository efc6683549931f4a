"""The ZooKeeper state manager outliving its sessions and its server: after a session expiry it
creates its ephemeral nodes again in a new session (never taking one from another owner, never
reviving one it deleted), its watches go on, and its calls wait through a server restart."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from heron_core.errors import StateManagerError
from heron_core.proto import (
    execution_state_pb2,
    physical_plan_pb2,
    scheduler_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.statemgr import ZooKeeperStateManager
from heron_core.testing.processes import wait_until
from heron_core.testing.statemgr_conformance import DEADLINE_S
from heron_core.testing.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.zookeeper

_SESSION_KEY = "heron.statemgr.zookeeper.session.timeout.ms"
LOCATION = tmanager_pb2.TManagerLocation(topology_name="wc", host="h", server_port=1)
SCHEDULER = scheduler_pb2.SchedulerLocation(topology_name="wc", pid=7)
TOPOLOGY = topology_pb2.Topology(name="wc", id="wc-1")
STATE = execution_state_pb2.ExecutionState(topology_name="wc", topology_id="wc-1")


@contextlib.contextmanager
def _kazoo(server: ZooKeeperServer) -> Iterator[KazooClient]:
    client = KazooClient(server.connection_string)
    client.start(timeout=DEADLINE_S)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def _owner(kazoo: KazooClient, znode: str) -> int | None:
    """The session owning ephemeral ``znode``, or None when it is absent."""
    stat = kazoo.exists(znode)
    return None if stat is None else int(stat.ephemeralOwner)


def _nodes(config: dict[str, Any]) -> tuple[str, str]:
    root = config["heron.statemgr.root.path"]
    return f"{root}/tmanagers/wc", f"{root}/schedulers/wc"


def _recreated(kazoo: KazooClient, znode: str, old: int | None) -> bool:
    return _owner(kazoo, znode) not in (None, old)


def test_expired_session_gets_its_ephemeral_nodes_back_and_watches_go_on(
    zk_config: dict[str, Any], zookeeper_server: ZooKeeperServer
) -> None:
    tmanager_node, scheduler_node = _nodes(zk_config)
    plans: queue.Queue[Any] = queue.Queue()
    with _kazoo(zookeeper_server) as kazoo:
        with (
            ZooKeeperStateManager(zk_config, "test") as sm,
            ZooKeeperStateManager(zk_config, "test") as other,
        ):
            sm.set_topology("wc", TOPOLOGY)
            sm.set_tmanager_location("wc", LOCATION)
            sm.set_scheduler_location("wc", SCHEDULER)
            sm.watch("pplans", "wc", plans.put)
            assert plans.get(timeout=DEADLINE_S) is None
            old = sm.session_id
            assert old is not None and _owner(kazoo, tmanager_node) == old

            zookeeper_server.expire_session(old)  # the id alone: the password is derived
            wait_until(
                lambda: (
                    _recreated(kazoo, tmanager_node, old) and _recreated(kazoo, scheduler_node, old)
                ),
                "both ephemeral nodes created again in a new session",
                DEADLINE_S,
            )

            assert sm.session_id not in (None, old)
            assert _owner(kazoo, tmanager_node) == _owner(kazoo, scheduler_node) == sm.session_id
            assert sm.get_tmanager_location("wc") == LOCATION
            assert sm.get_scheduler_location("wc") == SCHEDULER
            assert sm.get_topology("wc") == TOPOLOGY  # persistent nodes are not a session's
            sm.set_execution_state("wc", STATE)  # and writes go through
            assert other.get_execution_state("wc") == STATE
            plan = physical_plan_pb2.PhysicalPlan(topology=TOPOLOGY)
            other.set_physical_plan("wc", plan)
            assert plans.get(timeout=DEADLINE_S) == plan  # the watch survived the expiry
        assert kazoo.exists(tmanager_node) is None  # closing still drops them
        assert kazoo.exists(scheduler_node) is None


def test_restore_leaves_a_node_another_live_session_took(
    zk_config: dict[str, Any], zookeeper_server: ZooKeeperServer, caplog: pytest.LogCaptureFixture
) -> None:
    tmanager_node, scheduler_node = _nodes(zk_config)
    theirs = tmanager_pb2.TManagerLocation(topology_name="wc", host="other", server_port=2)
    with (
        _kazoo(zookeeper_server) as kazoo,
        ZooKeeperStateManager(zk_config, "test") as first,
        ZooKeeperStateManager(zk_config, "test") as second,
    ):
        first.set_tmanager_location("wc", LOCATION)
        first.set_scheduler_location("wc", SCHEDULER)
        second.delete_tmanager_location("wc")  # as `heron kill` does: first keeps its record
        second.set_tmanager_location("wc", theirs)
        old = first.session_id

        zookeeper_server.expire_session(old)
        # The restore goes in the order the nodes were set: the scheduler node comes back
        # after the attempt on the tmanager node.
        wait_until(
            lambda: _recreated(kazoo, scheduler_node, old), "the scheduler node back", DEADLINE_S
        )

        assert _owner(kazoo, tmanager_node) == second.session_id
        assert first.get_tmanager_location("wc") == theirs
        with pytest.raises(StateManagerError, match="owned by another live ZooKeeper session"):
            first.set_tmanager_location("wc", LOCATION)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, errors
    assert errors[0].startswith("not restoring tmanagers/wc after the session expired: ")
    assert "owned by another live ZooKeeper session" in errors[0]


def test_a_node_its_owner_deleted_is_not_revived_by_an_expiry(
    zk_config: dict[str, Any], zookeeper_server: ZooKeeperServer
) -> None:
    tmanager_node, scheduler_node = _nodes(zk_config)
    with _kazoo(zookeeper_server) as kazoo, ZooKeeperStateManager(zk_config, "test") as sm:
        sm.set_tmanager_location("wc", LOCATION)
        sm.set_scheduler_location("wc", SCHEDULER)
        sm.delete_tmanager_location("wc")
        old = sm.session_id

        zookeeper_server.expire_session(old)
        wait_until(
            lambda: _recreated(kazoo, scheduler_node, old), "the scheduler node back", DEADLINE_S
        )
        assert kazoo.exists(tmanager_node) is None


@pytest.mark.processes
def test_a_call_waits_through_a_server_restart_and_the_session_lives_on(
    private_zk_config: dict[str, Any], private_zookeeper: ZooKeeperServer
) -> None:
    config = {
        **private_zk_config,
        _SESSION_KEY: 60000,  # the longest the server allows
        "heron.statemgr.connection.string": private_zookeeper.restart_connection_string,
    }
    tmanager_node, _ = _nodes(config)
    with ZooKeeperStateManager(config, "test") as sm:
        sm.set_tmanager_location("wc", LOCATION)
        session = sm.session_id
        private_zookeeper.stop_process()
        restart = threading.Thread(target=private_zookeeper.start, name="zookeeper-restart")
        restart.start()
        try:
            sm.set_topology("wc", TOPOLOGY)  # asked while the server boots: waits for it
        finally:
            restart.join(DEADLINE_S)
        assert private_zookeeper.pid is not None, "the server did not start again"
        assert sm.get_topology("wc") == TOPOLOGY
        assert sm.session_id == session  # back within the timeout: the same session
        with _kazoo(private_zookeeper) as kazoo:
            assert _owner(kazoo, tmanager_node) == session


@pytest.mark.processes
def test_calls_fail_in_time_while_the_server_is_down_and_succeed_once_it_is_back(
    private_zk_config: dict[str, Any], private_zookeeper: ZooKeeperServer
) -> None:
    config = {**private_zk_config, _SESSION_KEY: 2000}
    tmanager_node, _ = _nodes(config)
    with ZooKeeperStateManager(config, "test") as sm:
        sm.set_topology("wc", TOPOLOGY)
        sm.set_tmanager_location("wc", LOCATION)
        private_zookeeper.stop_process()
        with pytest.raises(StateManagerError, match=r"ZooKeeper within 2 s"):
            sm.get_topology("wc")
        private_zookeeper.start()

        def answers() -> bool:
            with contextlib.suppress(StateManagerError):
                return sm.get_topology("wc") == TOPOLOGY
            return False

        wait_until(answers, "a call to succeed after the restart", DEADLINE_S)
        with _kazoo(private_zookeeper) as kazoo:
            # The same session, or (if it expired meanwhile) the node made again in a new one.
            wait_until(
                lambda: _owner(kazoo, tmanager_node) == sm.session_id,
                "the tmanager node owned by the manager's current session",
                DEADLINE_S,
            )
