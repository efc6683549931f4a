"""Chaos on ZooKeeper itself, on the localzk cluster: an at-least-once topology on two
containers while the ZooKeeper session of one daemon (the tmanager, a stream manager, a metrics
manager) expires, and while the ZooKeeper server restarts. Every id is still acked, every daemon
keeps running in the same process, the tmanager's location node is there again (owned by its
current session); the time it took is printed, not asserted.

How a daemon's session is expired: as kazoo's own test harness does, a second client joins the
session (id and password) and closes it. The id is found from outside the daemon: the local
port of its connection to ZooKeeper, looked up in the server's ``cons`` four-letter word
(`ZooKeeperServer.session_of`; for the tmanager it is also its location node's
``ephemeralOwner``). The password is derived from the id as the server derives it
(`heron_core.testing.zookeeper.session_password`), so no daemon discloses a secret or has a
test hook."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from e2e_components import AckingSink, FlakyBolt, PacedSpout, read_log  # type: ignore[import-not-found]
from e2e_fixtures import code_fixture, home_fixture  # noqa: F401 - fixtures
from kazoo.client import KazooClient

from heron_core.api import Grouping, TopologyBuilder
from heron_core.plan import LogicalPlan
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.zookeeper import ZooKeeperServer, ZooKeeperServerError

pytestmark = [pytest.mark.processes, pytest.mark.zookeeper]

NAME = "zkchaos"
LIMIT = 3000
CONFIG = {
    "topology.reliability.mode": "ATLEAST_ONCE",
    "topology.stmgrs": 2,
    "topology.max.spout.pending": 100,
    "topology.message.timeout.secs": 5,
}
DEADLINE_S = 120.0
# The daemons holding a ZooKeeper session all along: (module, --container) in its command line.
# (Executors read the plans and close their session; the scheduler service runs in the test
# process with TopologyRun.)
DAEMONS = {
    "tmanager": ("heron_core.tmanager", None),
    "stmgr-1": ("heron_core.stmgr", "1"),
    "metricsmgr-1": ("heron_core.metricsmgr", "1"),
}


def _plan(out: Path) -> LogicalPlan:
    b = TopologyBuilder(NAME)
    spout = b.add_spout("paced", PacedSpout(str(out), pause=0.004, limit=LIMIT), par=1)
    relay = b.add_bolt("relay", FlakyBolt(0.0), par=2, inputs={spout: Grouping.SHUFFLE})
    b.add_bolt("sink", AckingSink(str(out)), par=2, inputs={relay: Grouping.fields("n")})
    return b.build()


def _acked(out: Path) -> set[int]:
    return {r["ack"] for r in read_log(out, "paced") if "ack" in r}


def _config(zk: dict[str, Any]) -> dict[str, Any]:
    return {**CONFIG, **{k: v for k, v in zk.items() if "statemgr" in k}}


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


def _flag(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


def _daemon(run: TopologyRun, daemon: str) -> psutil.Process:
    """The live process of ``daemon`` (a key of `DAEMONS`)."""
    module, container = DAEMONS[daemon]
    for process in run.processes():
        with contextlib.suppress(psutil.Error):
            argv = process.cmdline()
            if module in argv and (container is None or _flag(argv, "--container") == container):
                return process
    raise AssertionError(f"no live {daemon} process")


def _log(run: TopologyRun, daemon: str) -> str:
    return run.logs().get(daemon, "")


def _session_of(server: ZooKeeperServer, process: psutil.Process) -> int | None:
    """The session ``process`` holds now, or None while it has none (reconnecting)."""
    with contextlib.suppress(ZooKeeperServerError):
        return server.session_of(process.pid)
    return None


@pytest.mark.parametrize("daemon", list(DAEMONS))
def test_session_expiry_of_a_daemon_loses_no_id_and_the_tmanager_location_is_kept(
    daemon: str,
    home: Path,
    code: Path,
    tmp_path: Path,
    zk_config: dict[str, Any],
    zookeeper_server: ZooKeeperServer,
) -> None:
    out = tmp_path / "out"
    node = f"{zk_config['heron.statemgr.root.path']}/tmanagers/{NAME}"
    with (
        _kazoo(zookeeper_server) as kazoo,
        TopologyRun(
            _plan(out),
            heron_home=home,
            code_root=code,
            cluster="localzk",
            config=_config(zk_config),
        ) as run,
    ):
        run.wait_until(lambda: len(_acked(out)) >= 100, "the first 100 acks")
        victim = _daemon(run, daemon)
        location = run.state.get_tmanager_location(NAME)
        session = zookeeper_server.session_of(victim.pid)
        assert location is not None
        if daemon == "tmanager":
            assert _owner(kazoo, node) == session

        zookeeper_server.expire_session(session)
        expired_at, acked = time.monotonic(), len(_acked(out))
        run.wait_until(
            lambda: _session_of(zookeeper_server, victim) not in (None, session),
            f"the {daemon} in a new ZooKeeper session",
            DEADLINE_S,
        )
        run.wait_until(
            lambda: _owner(kazoo, node) == _session_of(zookeeper_server, _daemon(run, "tmanager")),
            "the tmanager location owned by the tmanager's current session",
            DEADLINE_S,
        )
        relocated = time.monotonic() - expired_at
        run.wait_until(
            lambda: len(_acked(out)) >= min(acked + 50, LIMIT), "acks after the expiry", DEADLINE_S
        )
        flowing = time.monotonic() - expired_at
        # The metrics managers reach the tmanager: the acks reach its metrics.
        counted = run.counter("paced", "__ack-count")
        run.wait_until(
            lambda: run.counter("paced", "__ack-count") > counted or len(_acked(out)) >= LIMIT,
            "the tmanager's ack count to grow after the expiry",
            DEADLINE_S,
        )
        print(
            f"session expiry of the {daemon}: new session and tmanager location in place "
            f"{relocated:.1f} s after the expiry, acks flowing {flowing:.1f} s after it"
        )
        run.wait_until(lambda: len(_acked(out)) >= LIMIT, f"all {LIMIT} ids acked", 240)

        assert _acked(out) == set(range(LIMIT))
        assert run.state.get_tmanager_location(NAME) == location  # same tmanager, same ports
        assert _daemon(run, daemon).pid == victim.pid  # it kept running: not restarted
        log = _log(run, daemon)
        assert f"session 0x{session:x} expired" in log
        if daemon == "tmanager":
            assert f"created tmanagers/{NAME} again" in log


def test_zookeeper_restart_loses_no_id_and_the_tmanager_location_is_back(
    home: Path,
    code: Path,
    tmp_path: Path,
    private_zk_config: dict[str, Any],
    private_zookeeper: ZooKeeperServer,
) -> None:
    out = tmp_path / "out"
    node = f"{private_zk_config['heron.statemgr.root.path']}/tmanagers/{NAME}"
    config = _config(private_zk_config)
    with TopologyRun(
        _plan(out), heron_home=home, code_root=code, cluster="localzk", config=config
    ) as run:
        try:
            run.wait_until(lambda: len(_acked(out)) >= 100, "the first 100 acks")
            tmanager = _daemon(run, "tmanager")
            location = run.state.get_tmanager_location(NAME)
            assert location is not None
            server_pid = private_zookeeper.pid
            assert server_pid is not None

            private_zookeeper.stop_process()  # SIGTERM to its pid; returns once it exited
            stopped_at, acked = time.monotonic(), len(_acked(out))
            assert private_zookeeper.pid is None
            run.wait_until(
                lambda: len(_acked(out)) >= min(acked + 50, LIMIT),
                "acks while ZooKeeper is down",
                DEADLINE_S,
            )
            flowing_while_down = time.monotonic() - stopped_at

            private_zookeeper.start()  # the same port and data directory
            down_for = time.monotonic() - stopped_at
            with _kazoo(private_zookeeper) as kazoo:
                run.wait_until(
                    lambda: _owner(kazoo, node) is not None,
                    "the tmanager location after the restart",
                    DEADLINE_S,
                )
            acked = len(_acked(out))
            run.wait_until(
                lambda: len(_acked(out)) >= min(acked + 50, LIMIT),
                "acks after the restart",
                DEADLINE_S,
            )
            flowing_after = time.monotonic() - stopped_at - down_for
            print(
                f"ZooKeeper restart: down {down_for:.1f} s, acks flowing "
                f"{flowing_while_down:.1f} s after the stop and {flowing_after:.1f} s after "
                "the restart"
            )
            run.wait_until(lambda: len(_acked(out)) >= LIMIT, f"all {LIMIT} ids acked", 240)
        finally:
            if private_zookeeper.pid is None:  # so that the run can delete its state
                private_zookeeper.start()

        assert _acked(out) == set(range(LIMIT))
        assert run.state.get_tmanager_location(NAME) == location
        assert _daemon(run, "tmanager").pid == tmanager.pid
