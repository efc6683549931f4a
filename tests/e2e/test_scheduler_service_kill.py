"""kill -9 of a submitted topology's scheduler service, on ``local`` and ``localzk`` (issue 18):
its executors die with it, its supervisor starts a new service, which starts the containers
again and publishes its location; every id is acked, ``heron list`` says ``running`` and
``heron kill`` leaves no process."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from e2e_components import read_log  # type: ignore[import-not-found]
from e2e_fixtures import HERE, home_fixture  # noqa: F401 - fixtures

from heron_core.client import client_config, topology_processes
from heron_core.statemgr import create_state_manager
from heron_core.testing.processes import run_command, wait_until

pytestmark = pytest.mark.processes

HERON = str(Path(sys.executable).with_name("heron"))
NAME = "restarted"
LIMIT = 1500


def _acked(out: Path) -> set[int]:
    return {r["ack"] for r in read_log(out, "paced") if "ack" in r}


@pytest.mark.parametrize("cluster", ["local", pytest.param("localzk", marks=pytest.mark.zookeeper)])
def test_kill_9_of_the_scheduler_service_loses_no_id(
    cluster: str, home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    zk = request.getfixturevalue("zk_config") if cluster == "localzk" else {}
    statemgr = [f"{k}={v}" for k, v in zk.items() if "statemgr" in k]
    if zk:  # the new tmanager waits for the killed one's session to expire: make that short
        statemgr.append("heron.statemgr.zookeeper.session.timeout.ms=6000")
    flags = [f"--config-property={p}" for p in statemgr]
    out = tmp_path / "out"
    env = {**os.environ, "RESTART_OUT": str(out), "RESTART_LIMIT": str(LIMIT)}

    def heron(*args: str) -> Any:
        argv = [HERON, *args, "--heron-home", str(home), *flags]
        done = run_command(argv, timeout=300, env=env)
        assert done.returncode == 0, f"heron {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    def scheduler() -> tuple[int, str]:
        """The pid in the scheduler location (0: none) and the topology id."""
        config = client_config(cluster, heron_home=home, overrides=statemgr)
        with create_state_manager(config, cluster) as state:
            location = state.get_scheduler_location(NAME)
            topology = state.get_topology(NAME)
            assert topology is not None
            return (location.pid if location else 0), topology.id

    heron("submit", cluster, str(HERE / "restart_topology.py"))
    killed = False
    try:
        wait_until(lambda: len(_acked(out)) >= 20, "the first acks", timeout=120)
        pid, ident = scheduler()
        assert pid and psutil.pid_exists(pid)
        os.kill(pid, signal.SIGKILL)
        killed_at, acked = time.monotonic(), len(_acked(out))
        wait_until(
            lambda: scheduler()[0] not in (0, pid) and psutil.pid_exists(scheduler()[0]),
            "a new scheduler service",
            timeout=120,
        )
        wait_until(lambda: len(_acked(out)) >= min(acked + 20, LIMIT), "acks again", 120)
        print(f"{cluster}: flowing again {time.monotonic() - killed_at:.1f} s after kill -9")
        listed = heron("list", cluster).stdout
        assert listed.splitlines()[1].endswith(" running"), listed
        wait_until(lambda: len(_acked(out)) >= LIMIT, f"all {LIMIT} ids acked", 240)
        assert _acked(out) == set(range(LIMIT))
        heron("kill", cluster, NAME)
        killed = True
        assert topology_processes(ident) == []
    finally:
        if not killed:
            heron("kill", cluster, NAME)
