"""TopologyRun's error messages: a wait that times out names what it waited for and shows the
tail of every log of the topology (nothing is started here: the logs are written by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from heron_core.api import Grouping, TopologyBuilder
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import FixedSpout, RecordingBolt


def _run(tmp_path: Path) -> TopologyRun:
    builder = TopologyBuilder("waits")
    spout = builder.add_spout("numbers", FixedSpout(["n"], [[1]]))
    builder.add_bolt("sink", RecordingBolt(tmp_path / "out"), inputs={spout: Grouping.SHUFFLE})
    return TopologyRun(builder.build(), heron_home=tmp_path / "home")


def test_a_timed_out_wait_shows_the_tail_of_every_log(tmp_path: Path) -> None:
    run = _run(tmp_path)
    logs = run.working_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "stmgr-1.log").write_text("".join(f"stmgr line {i}\n" for i in range(100)))
    (logs / "instance-2.log").write_text("only line\n")

    with pytest.raises(TimeoutError) as caught:
        run.wait_until(lambda: False, "every tree acked", timeout=0.2)

    message = str(caught.value)
    assert message.startswith("waits: every tree acked did not happen in 0s")
    assert "===== stmgr-1 (last 40 lines) =====" in message
    assert "stmgr line 99" in message and "stmgr line 60" in message
    assert "stmgr line 59\n" not in message
    assert "===== instance-2 (last 40 lines) =====\nonly line" in message
    assert run.log_tails(lines=1).splitlines() == [
        "===== instance-2 (last 1 lines) =====",
        "only line",
        "===== stmgr-1 (last 1 lines) =====",
        "stmgr line 99",
    ]
