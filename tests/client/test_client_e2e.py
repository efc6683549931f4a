"""submit, list, kill and run with the real daemons on topologies/word_count.py."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from home_support import (  # noqa: F401 - heron_home_fixture is a fixture
    WORD_COUNT,
    heron_home_fixture,
    processes_under,
    wait_until,
)
from rich.console import Console

from heron_core.client import (
    client_config,
    kill,
    list_topologies,
    run,
    submit,
    topology_processes,
)
from heron_core.errors import SchedulerError
from heron_core.statemgr import create_state_manager

pytestmark = pytest.mark.processes


def test_submit_list_kill_leaves_no_process_and_no_state(heron_home: Path) -> None:
    messages: list[str] = []
    result = submit(
        "local", str(WORD_COUNT), name="wc", heron_home=heron_home, progress=messages.append
    )
    assert result.name == "wc"
    assert any("scheduler" in m for m in messages)
    assert result.scheduler_pid in {p.pid for p in topology_processes(result.topology_id)}
    (info,) = list_topologies("local", heron_home=heron_home)
    assert (info.name, info.topology_id, info.state) == ("wc", result.topology_id, "running")
    with pytest.raises(SchedulerError, match="'wc' already exists"):
        submit("local", str(WORD_COUNT), name="wc", heron_home=heron_home)

    config = client_config("local", heron_home=heron_home)
    with create_state_manager(config, "local") as state:
        wait_until(lambda: state.get_physical_plan("wc") is not None, "the physical plan")
    assert (result.working_dir / "code" / "word_count.py").exists()
    assert (result.working_dir / "logs" / "stmgr-1.log").exists()

    kill("local", "wc", heron_home=heron_home)
    assert topology_processes(result.topology_id) == []
    assert processes_under(heron_home) == []
    assert list_topologies("local", heron_home=heron_home) == []
    assert not result.working_dir.exists()
    with create_state_manager(config, "local") as state:
        assert state.get_tmanager_location("wc") is None
        assert state.get_physical_plan("wc") is None


def test_run_stops_by_itself_and_cleans_up(heron_home: Path) -> None:
    out = io.StringIO()
    result = run(
        str(WORD_COUNT),
        seconds=6,
        containers=2,
        heron_home=heron_home,
        console=Console(file=out, width=120),
    )
    assert result.stopped_by == "time limit"
    # the 6 s count from when every instance had reported, so the last read covers them all
    assert result.started_in is not None and result.elapsed - result.started_in >= 6
    assert {s.component: s.instances for s in result.components} == {
        "sentence": 1,
        "split": 2,
        "count": 2,
    }
    assert result.working_dir is None
    assert processes_under(heron_home) == []
    assert not (heron_home / "topologies" / "local" / "WordCount").exists()
    assert list_topologies("local", heron_home=heron_home) == []
    text = out.getvalue()
    first = text.splitlines()[0]  # the first plain progress line: before or after the first
    # metrics arrive, depending on how fast the topology manager answered
    assert first == "WordCount: 0 s, starting" or first.startswith("[0 s] sentence emitted"), first
    assert "stopped by time limit" in text
