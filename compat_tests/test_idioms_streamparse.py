"""streamparse idioms, run with ``heron sparse run`` inside the project as its users do: a
spout that sleeps in ``next_tuple`` and reads a resource file by a relative path, named
streams, a bolt that logs with ``self.logger`` and one that prints. Each says what Storm
(with streamparse) does and checks the same here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from idiom_support import IDIOMS, Records, heron, idiom_run, median, must_have_settled

pytestmark = pytest.mark.processes


def test_a_project_with_a_sleeping_spout_named_streams_and_a_resource_file(
    tmp_path: Path,
) -> None:
    # Under `sparse run` on Storm, the components start in the topology's resources directory
    # (the project's src/), so open("data/sentences.txt") works; the spout sleeps 100 ms per
    # next_tuple and each sentence is split at once onto the "short" and "long" streams,
    # tallied, and acked: nothing waits for a round of next_tuple calls, nothing times out.
    project = shutil.copytree(IDIOMS / "sparse_sentences", tmp_path / "sparse_sentences")
    with idiom_run(tmp_path) as (home, out):
        ran = heron("sparse", "run", "-t", "12", home=home, out=out, cwd=project)
        records = Records.read(out)
        stopped = ran.first("stopping")
    emitted = records.of("emit")
    settled_by_now = must_have_settled(emitted, stopped, 100)  # (the spout sleeps 100 ms)
    assert len(settled_by_now) >= 3, f"only {len(emitted)} sentences emitted:\n{ran.stdout}"
    assert [n for n in settled_by_now if n not in records.of("ack")] == []
    assert [n for n in settled_by_now if n not in records.of("done")] == []
    assert records.of("fail") == {}
    assert median(records.delays_ms("emit", "ack")) < 500.0
    # As `sparse run` shows Storm's local-mode output, the run shows each component's own
    # lines, self.logger's and print's, prefixed with the component and task.
    shown = ran.stdout.splitlines()
    assert any(line.startswith("split_bolt:") and "split sentence" in line for line in shown), (
        ran.stdout
    )
    assert any(
        line.startswith(("short_tally:", "long_tally:")) and "tallied" in line for line in shown
    ), ran.stdout
