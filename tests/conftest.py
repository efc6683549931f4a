"""Fixtures shared by every test folder (keep this file small; folder-specific ones live in
the folder's own conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import Generator, Iterator
from typing import Any

import pytest

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
    yield {
        "heron.class.state.manager": "zookeeper",
        "heron.statemgr.connection.string": zookeeper_server.connection_string,
        "heron.statemgr.root.path": f"/t-{uuid.uuid4().hex}",
        "heron.statemgr.zookeeper.session.timeout.ms": 30000,
        "heron.statemgr.zookeeper.connection.timeout.ms": 10000,
    }
    if _failed(request.node):
        print(f"--- ZooKeeper server log during {request.node.nodeid} ---")
        print(zookeeper_server.log_text()[log_start:])
