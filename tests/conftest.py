"""Fixtures shared by every test folder (keep this file small; folder-specific ones live in
the folder's own conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import Generator, Iterator
from typing import Any

import pytest

from heron_core.testing.spark import (
    QUICK_START_JAVA_OPTIONS,
    SparkClusterError,
    SparkStandaloneCluster,
)
from heron_core.testing.zookeeper import ZooKeeperServer, ZooKeeperServerError

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the item, so fixtures can tell whether the test failed."""
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


def _failed(item: pytest.Item) -> bool:
    return any(report.failed for report in item.stash.get(_REPORTS, {}).values())


@pytest.fixture(scope="session")
def zookeeper_server() -> Iterator[ZooKeeperServer]:
    """A real ZooKeeper server for the whole session; fails (never skips) when not installed.

    Tests should take :func:`zk_config` rather than this, to get a fresh root and the
    server's log when they fail.
    """
    server = ZooKeeperServer()
    try:
        server.start()
    except ZooKeeperServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def zk_config(
    zookeeper_server: ZooKeeperServer, request: pytest.FixtureRequest
) -> Iterator[dict[str, Any]]:
    """A config for ``create_state_manager`` on the session's ZooKeeper, under a fresh root
    path per test. When the test fails, the server's log written during it is printed."""
    log_start = len(zookeeper_server.log_text())
    yield _zk_state_config(zookeeper_server)
    if _failed(request.node):
        print(f"--- ZooKeeper server log during {request.node.nodeid} ---")
        print(zookeeper_server.log_text()[log_start:])


@pytest.fixture
def private_zookeeper(request: pytest.FixtureRequest) -> Iterator[ZooKeeperServer]:
    """A ZooKeeper server of the test's own (a free port, an empty data directory), for a
    test that stops and restarts it (`ZooKeeperServer.stop_process`, then `start`: same port,
    same data). Killed by pid after the test, its log printed when the test failed. Slower
    than `zk_config` (a JVM per test): take it only to restart the server."""
    server = ZooKeeperServer()
    try:
        server.start()
    except ZooKeeperServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        server.stop()
        if _failed(request.node):
            print(f"--- private ZooKeeper server log of {request.node.nodeid} ---")
            print(server.log_text())


@pytest.fixture
def private_zk_config(private_zookeeper: ZooKeeperServer) -> dict[str, Any]:
    """Like `zk_config`, on `private_zookeeper`."""
    return _zk_state_config(private_zookeeper)


def _zk_state_config(server: ZooKeeperServer) -> dict[str, Any]:
    """A config for ``create_state_manager`` on ``server``, under a fresh root path."""
    return {
        "heron.class.state.manager": "zookeeper",
        "heron.statemgr.connection.string": server.connection_string,
        "heron.statemgr.root.path": f"/t-{uuid.uuid4().hex}",
        "heron.statemgr.zookeeper.session.timeout.ms": 30000,
        "heron.statemgr.zookeeper.connection.timeout.ms": 10000,
    }


@pytest.fixture(scope="session")
def spark_cluster() -> Iterator[SparkStandaloneCluster]:
    """A real Spark standalone cluster (a master and two 2-core workers on loopback, from the
    pip ``pyspark``) for the whole session; fails (never skips) when PySpark or Java is
    missing. Its JVMs start with :data:`QUICK_START_JAVA_OPTIONS` (the client compiler only,
    one GC thread), as the applications the tests submit do (`spark_support.QUICK_JVMS`): on
    CI's two cores the server compiler's threads cost more CPU than these short runs gain.
    Tests should take :func:`spark` rather than this."""
    cluster = SparkStandaloneCluster(
        workers=2, cores=2, memory="2g", java_options=QUICK_START_JAVA_OPTIONS
    )
    try:
        cluster.start()
    except SparkClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def spark(
    spark_cluster: SparkStandaloneCluster, request: pytest.FixtureRequest
) -> Iterator[SparkStandaloneCluster]:
    """The session's Spark cluster, idle. Take it before the fixture that kills the test's
    scheduler services, so that it is torn down after them: it then waits until the master
    runs no application and the containers' daemons are gone (a minute at most); any still
    running from the executors' directories is killed by pid and fails the test. The
    cluster's logs are printed when the test failed."""
    yield spark_cluster
    survivors = spark_cluster.wait_idle()
    if _failed(request.node) or survivors:
        print(f"--- Spark cluster logs after {request.node.nodeid} ---")
        print(spark_cluster.log_text())
    assert not survivors, f"container processes outlived the test: {[p.pid for p in survivors]}"
