"""``heron update`` through the installed command on a topology ``heron submit`` started, on
``local`` and ``localzk`` (issue 18): a dry run changes nothing; the sink goes from 1 to 3
instances in 3 containers while tuples flow with acking on, then back to 1 in 2 containers;
every one of 3,000 ids is acked (the spout does not emit again after a restart, so a tuple
lost in the update would stay unacked), each key reaches one task after each change, and bad
arguments get clear errors."""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
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
NAME = "updated"
LIMIT = 3000


def _acked(out: Path) -> set[int]:
    return {r["ack"] for r in read_log(out, "resuming") if "ack" in r}


def _tasks_by_key(out: Path, since: float) -> dict[int, set[int]]:
    tasks: dict[int, set[int]] = defaultdict(set)
    for record in read_log(out, "keyed"):
        if record["at"] > since:
            tasks[record["key"]].add(record["task"])
    return tasks


@pytest.mark.parametrize("cluster", ["local", pytest.param("localzk", marks=pytest.mark.zookeeper)])
def test_update_while_tuples_flow_loses_nothing(
    cluster: str, home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    zk = request.getfixturevalue("zk_config") if cluster == "localzk" else {}
    statemgr = [f"{k}={v}" for k, v in zk.items() if "statemgr" in k]
    flags = [f"--config-property={p}" for p in statemgr]
    out = tmp_path / "out"
    env = {**os.environ, "UPDATE_OUT": str(out), "UPDATE_LIMIT": str(LIMIT)}

    def heron(*args: str, ok: bool = True) -> Any:
        argv = [HERON, *args, "--heron-home", str(home), *flags]
        done = run_command(argv, timeout=400, env=env)
        if ok:
            assert done.returncode == 0, f"heron {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    def plans() -> tuple[Any, Any]:
        config = client_config(cluster, heron_home=home, overrides=statemgr)
        with create_state_manager(config, cluster) as state:
            return state.get_packing_plan(NAME), state.get_physical_plan(NAME)

    def sinks() -> tuple[list[int], list[int]]:
        """The containers of the physical plan, and the sink's task ids."""
        _, pplan = plans()
        tasks = [i.info.task_id for i in pplan.instances if i.info.component_name == "sink"]
        return sorted(s.container_id for s in pplan.stmgrs), sorted(tasks)

    heron("submit", cluster, str(HERE / "update_topology.py"))
    try:
        wait_until(lambda: len(_acked(out)) >= 100, "the first acks", timeout=120)

        packing_before, _ = plans()
        dry = heron("update", cluster, NAME, "--component-parallelism=sink:3", "--dry-run")
        assert "sink: parallelism 1 -> 3" in dry.stdout
        assert f"dry run: topology {NAME!r} on {cluster!r} is unchanged" in dry.stdout
        assert plans()[0] == packing_before
        assert sinks() == ([1, 2], [3])

        for args, wanted in (
            (
                ["--component-parallelism=sink:0"],
                "component 'sink': parallelism must be at least 1",
            ),
            (["--component-parallelism=nope:2"], f"topology {NAME!r} has no component 'nope'"),
            (["--component-parallelism=sink"], "expected COMPONENT:N"),
            ([], "nothing to update"),
        ):
            bad = heron("update", cluster, NAME, *args, ok=False)
            assert bad.returncode != 0 and "Traceback" not in bad.stderr, bad.stderr
            assert wanted in bad.stderr, bad.stderr
        missing = heron("update", cluster, "nope", "--component-parallelism=sink:2", ok=False)
        assert f"no topology 'nope' on cluster {cluster!r}" in missing.stderr

        for parallelism, containers, wait in ((3, 3, []), (1, 2, ["--wait-secs=1"])):
            acked = len(_acked(out))
            done = heron(
                "update",
                cluster,
                NAME,
                f"--component-parallelism=sink:{parallelism}",
                f"--container-number={containers}",
                *wait,
            )
            updated_at = time.time()
            assert f"updated topology {NAME!r} on {cluster!r}" in done.stdout, done.stdout
            in_plan, tasks = sinks()
            assert in_plan == list(range(1, containers + 1)) and len(tasks) == parallelism
            print(f"{cluster}: sink -> {parallelism} in {containers} containers:\n{done.stderr}")
            wait_until(
                lambda: len(_acked(out)) >= min(acked + 200, LIMIT),  # noqa: B023
                "acks after the update",
                120,
            )
            by_key = _tasks_by_key(out, updated_at)
            assert by_key and all(len(t) == 1 for t in by_key.values()), dict(by_key)
            assert {t for ts in by_key.values() for t in ts} == set(tasks)

        wait_until(lambda: len(_acked(out)) >= LIMIT, f"all {LIMIT} ids acked", 300)
        assert _acked(out) == set(range(LIMIT))
    finally:
        heron("kill", cluster, NAME)
