"""Effectively-once on the real process model: a word count whose spouts replay from
their checkpointed offsets and whose counts are the count bolt's checkpointed state. At every
consistent checkpoint the counts are exactly those of the words the spouts' saved offsets
cover (no loss, no double count), through kill -9 of a bolt instance, a stream manager and a
spout while words flow, and at the end they are the counts of every word."""

from __future__ import annotations

import contextlib
import pickle
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest
from e2e_fixtures import home_fixture  # noqa: F401 - fixtures
from stateful_components import (  # type: ignore[import-not-found]
    CountBolt,
    OffsetSpout,
    Relay,
    expected_counts,
)

from heron_core.api import Grouping, TopologyBuilder
from heron_core.ckptmgr import checkpoint_context, checkpoint_seal, create_state_store
from heron_core.testing.cluster import TopologyRun

pytestmark = pytest.mark.processes

HERE = Path(__file__).resolve().parent
LIMIT = 15000


@pytest.fixture(name="code")
def code_fixture(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    root.mkdir()
    (root / "stateful_components.py").write_text((HERE / "stateful_components.py").read_text())
    return root


class Checkpoints:
    """Reads the newest consistent checkpoint of a run: each task's saved state."""

    def __init__(self, run: TopologyRun) -> None:
        self.run = run
        self.store = create_state_store(run.deployment.config, run.name)
        self.seal = checkpoint_seal(run.name, run.working_dir)
        self.tasks: dict[str, list[int]] = {}
        for container in run.deployment.packing_plan.containers:
            for instance in container.instances:
                self.tasks.setdefault(instance.component_name, []).append(instance.task_id)
        self.seen: list[str] = []

    def newest(self) -> tuple[str, dict[int, int], Counter[str]] | None:
        """(checkpoint id, spout index -> offset, counts), checked exact; None before the
        first."""
        stored = self.run.state.get_stateful_checkpoints(self.run.name)
        if stored is None or not stored.consistent_checkpoints:
            return None
        checkpoint = stored.consistent_checkpoints[0].checkpoint_id
        offsets: dict[int, int] = {}
        for task in self.tasks["words"]:
            state = self._load(checkpoint, task)
            if state:
                offsets[state["index"]] = state["offset"]
        counts: Counter[str] = Counter()
        for task in self.tasks["count"]:
            counts.update(dict(self._load(checkpoint, task).items()))
        if checkpoint not in self.seen:
            self.seen.append(checkpoint)
            expected = expected_counts(offsets)
            assert counts == expected, (
                f"checkpoint {checkpoint}: counts {dict(counts)} != {dict(expected)} for "
                f"offsets {offsets}"
            )
        return checkpoint, offsets, counts

    def _load(self, checkpoint: str, task: int) -> Any:
        sealed = self.store.load(checkpoint, task)
        assert sealed is not None, f"checkpoint {checkpoint} has no state of task {task}"
        data = self.seal.open(checkpoint_context(self.run.name, checkpoint, task), sealed)
        return pickle.loads(data) if data else None

    def total(self) -> int:
        newest = self.newest()
        return 0 if newest is None else sum(newest[1].values())


def _process(run: TopologyRun, module: str, flag: str, value: str) -> psutil.Process:
    for process in run.processes():
        with contextlib.suppress(psutil.Error):
            argv = process.cmdline()
            if module in argv and flag in argv[:-1] and argv[argv.index(flag) + 1] == value:
                return process
    raise AssertionError(f"no live {module} with {flag} {value}")


def test_word_counts_stay_exact_through_kills(home: Path, code: Path) -> None:
    b = TopologyBuilder("eo_count")
    words = b.add_spout("words", OffsetSpout(LIMIT, ((10, 0.005), (100, 0.05))), par=2)
    relay = b.add_bolt("relay", Relay(), par=2, inputs={words: Grouping.SHUFFLE})
    b.add_bolt("count", CountBolt(), par=2, inputs={relay: Grouping.fields("word")})
    config = {
        "topology.reliability.mode": "EFFECTIVELY_ONCE",
        "topology.stateful.checkpoint.interval.seconds": 0.5,
        "topology.stmgrs": 2,
    }
    with TopologyRun(b.build(), heron_home=home, code_root=code, config=config) as run:
        checkpoints = Checkpoints(run)
        victims = [
            ("a count bolt instance", "heron_core.instance", "--component", "count"),
            ("stream manager 2", "heron_core.stmgr", "--container", "2"),
            ("a spout instance", "heron_core.instance", "--component", "words"),
        ]
        progress = 1000
        for what, module, flag, value in victims:
            run.wait_until(lambda at=progress: checkpoints.total() >= at, f"{progress} words", 120)
            before = checkpoints.total()
            assert before < 2 * LIMIT, "the words ran out before the kill: slow the spout"
            _process(run, module, flag, value).kill()
            killed = time.monotonic()
            run.wait_until(
                lambda at=before: checkpoints.total() > at,
                f"a checkpoint after killing {what}",
                180,
            )
            print(f"{what}: checkpoints complete again {time.monotonic() - killed:.1f} s later")
            progress = checkpoints.total() + 1000
        run.wait_until(lambda: checkpoints.total() >= 2 * LIMIT, "every word counted", 240)
        newest = checkpoints.newest()
        assert newest is not None
        _, offsets, counts = newest
        assert offsets == {0: LIMIT, 1: LIMIT}
        assert sum(counts.values()) == 2 * LIMIT
        print(f"{len(checkpoints.seen)} consistent checkpoints checked exact")
