"""``heron restart`` through the installed command on a topology ``heron submit`` started, on
``local`` and ``localzk``: one container, then all of them (the topology manager's included);
each comes back with new processes and the acks go on; a bad container id is named."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_components import read_log  # type: ignore[import-not-found]
from e2e_fixtures import HERE, home_fixture  # noqa: F401 - fixtures

from heron_core.client import client_config
from heron_core.statemgr import create_state_manager
from heron_core.testing.processes import run_command, wait_until

pytestmark = pytest.mark.processes

HERON = str(Path(sys.executable).with_name("heron"))
NAME = "restarted"


def _acked(out: Path) -> set[int]:
    return {r["ack"] for r in read_log(out, "paced") if "ack" in r}


@pytest.mark.parametrize("cluster", ["local", pytest.param("localzk", marks=pytest.mark.zookeeper)])
def test_restart_one_container_then_all_and_the_acks_go_on(
    cluster: str, home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    zk = request.getfixturevalue("zk_config") if cluster == "localzk" else {}
    statemgr = [f"{k}={v}" for k, v in zk.items() if "statemgr" in k]
    flags = [f"--config-property={p}" for p in statemgr]
    out = tmp_path / "out"
    env = {**os.environ, "RESTART_OUT": str(out)}

    def heron(*args: str, ok: bool = True) -> Any:
        argv = [HERON, *args, "--heron-home", str(home), *flags]
        done = run_command(argv, timeout=300, env=env)
        if ok:
            assert done.returncode == 0, f"heron {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    def stmgr_pids() -> dict[int, int]:
        config = client_config(cluster, heron_home=home, overrides=statemgr)
        with create_state_manager(config, cluster) as state:
            plan = state.get_physical_plan(NAME)
            return {} if plan is None else {s.container_id: s.pid for s in plan.stmgrs}

    heron("submit", cluster, str(HERE / "restart_topology.py"))
    try:
        wait_until(lambda: len(_acked(out)) >= 20, "the first acks", timeout=120)
        before = stmgr_pids()
        assert sorted(before) == [1, 2]

        done = heron("restart", cluster, NAME, "--container-id", "1")
        assert done.stdout == f"restarted topology {NAME!r} on {cluster!r} (container 1)\n"
        after = stmgr_pids()
        assert after[1] != before[1] and after[2] == before[2]
        acked = len(_acked(out))
        wait_until(lambda: len(_acked(out)) >= acked + 20, "acks after restarting container 1")

        done = heron("restart", cluster, NAME)
        assert done.stdout == f"restarted topology {NAME!r} on {cluster!r} (containers 0, 1, 2)\n"
        again = stmgr_pids()
        assert again[1] != after[1] and again[2] != after[2]
        acked = len(_acked(out))
        wait_until(lambda: len(_acked(out)) >= acked + 20, "acks after restarting everything")

        bad = heron("restart", cluster, NAME, "--container-id", "7", ok=False)
        assert bad.returncode != 0 and "Traceback" not in bad.stderr
        assert f"topology {NAME!r} has no container 7; its containers are 0, 1, 2" in bad.stderr
    finally:
        heron("kill", cluster, NAME)
