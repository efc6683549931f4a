"""Storm's multilang idioms, run with ``heron run`` through the real process model: a
storm-starter topology whose split bolt is ``splitsentence.py`` on a ``storm.py`` module, fed
by a spout sleeping 100 ms per nextTuple, and Storm's flux-examples ``multilang.yaml`` wiring
of shell components. Each says what Storm does and checks the same here.

The ``storm.py`` beside them is this project's module with the interface and protocol of
Storm's own (tests/multilang/scripts/storm.py): Storm's file is not shipped in any package
that installs here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from idiom_support import IDIOMS, Records, heron, idiom_run, median, must_have_settled

pytestmark = pytest.mark.processes

MULTILANG = IDIOMS / "multilang"


def check_every_tree_completes(records: Records, stopped: float) -> None:
    """Every sentence the run must have settled by its stop (`must_have_settled`: the spouts
    sleep 100 ms per sentence) was acked, none failed (so none was replayed), and the median
    emit-to-ack time is under half a second."""
    emitted = records.of("emit")
    settled_by_now = must_have_settled(emitted, stopped, 100)
    assert len(settled_by_now) >= 3, f"only {len(emitted)} sentences emitted"
    assert [n for n in settled_by_now if n not in records.of("ack")] == []
    assert records.of("fail") == {}
    assert median(records.delays_ms("emit", "ack")) < 500.0


def test_storm_starter_word_count_with_the_splitsentence_shell_bolt(tmp_path: Path) -> None:
    # On Storm, RandomSentenceSpout sleeps 100 ms per nextTuple and each sentence goes at once
    # through the ShellBolt's subprocess (started in the topology's resources directory, where
    # splitsentence.py and storm.py are) and the count bolt: every tree completes in
    # milliseconds, nothing times out.
    with idiom_run(tmp_path) as (home, out):
        ran = heron(
            "run", str(MULTILANG / "word_count_shell.py"), "--time", "12", home=home, out=out
        )
        check_every_tree_completes(Records.read(out), ran.first("stopping"))


def test_flux_multilang_example_wires_shell_spout_and_bolt(tmp_path: Path) -> None:
    # Storm's flux-examples multilang.yaml: a shell spout emitting a sentence every 100 ms
    # with an id, Storm's splitsentence.py as a shell bolt, TestWordCounter and LogInfoBolt.
    # On Storm every sentence's tree completes; none fails by timeout.
    with idiom_run(tmp_path) as (home, out):
        ran = heron("run", str(MULTILANG / "multilang.yaml"), "--time", "12", home=home, out=out)
        check_every_tree_completes(Records.read(out), ran.first("stopping"))
