"""Heron's Python example topologies (rewritten in ``heronpy_examples/``) run unchanged with
the installed ``heron`` command, and what they log shows they behaved as in Heron.

Each test waits for the components' own log lines (their ticks), with a generous deadline,
then stops the topologies; every process is gone afterwards, and the logs are printed when a
test fails.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from compat_support import processes_under
from idiom_support import HeronRun, idiom_run

pytestmark = pytest.mark.processes

EXAMPLES = Path(__file__).resolve().parent / "heronpy_examples" / "examples" / "src" / "python"
WORDS = {"hello", "bye", "good", "bad", "heron", "storm"}


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """A heron home; on failure its logs are printed; no process of it may be left."""
    with idiom_run(tmp_path) as (home, _):
        yield home


def _running(program: str, home: Path, *flags: str) -> HeronRun:
    """``heron run PROGRAM`` in the background."""
    return HeronRun("run", str(EXAMPLES / program), *flags, home=home)


def test_word_count_with_heron_run(home: Path) -> None:
    # TopologyBuilder + build_and_submit() under __main__, named by sys.argv[1]; ATLEAST_ONCE:
    # every word is acked by a count bolt and the ack reaches the spout with its tup_id; fields
    # grouping: each word is counted by one task only; "heron" counts ten.
    run = _running("word_count_topology.py", home)
    try:

        def ready() -> bool:
            maps = run.shown("count_bolt", "Current map: ")
            acks = run.shown("word_spout", "Acked ")
            return len(maps) == 2 and all(len(m) >= 2 for m in maps.values()) and len(acks) == 2

        run.wait_for("ticks and acks", ready, lambda: run.stdout)
    finally:
        run.stop()
    assert "running 'word_count_topology'" in run.stdout  # the name the program got
    maps = run.shown("count_bolt", "Current map: ")
    last = [ast.literal_eval(seen[-1]) for seen in maps.values()]
    counted = [set(m) for m in last]
    assert counted[0].isdisjoint(counted[1]), last
    assert counted[0] | counted[1] <= WORDS and counted[0] | counted[1], last
    assert all(m["heron"] % 10 == 0 for m in last if "heron" in m), last
    acks = [a for seen in run.shown("word_spout", "Acked ").values() for a in seen]
    assert all(a.endswith("tup_id: message id") for a in acks), acks
    assert run.shown("word_spout", "Failed ") == {}, run.stdout


def test_multi_stream_and_custom_grouping_with_heron_run(home: Path) -> None:
    # Two Topology classes, run side by side. MultiStream: words go to the count bolts, both
    # the default and the "error" stream go to the aggregator (ALL). CustomGrouping: the
    # grouping defined in the program sends every word to the first consume_bolt task;
    # prepare() gets the source component's name.
    multi = _running("multi_stream_topology.py", home / "multi")
    run = _running("custom_grouping_topology.py", home / "custom")

    def streams() -> list[dict[str, int]]:
        found = multi.shown("stream_aggregator", "Current stream counter: ")
        return [ast.literal_eval(c) for seen in found.values() for c in seen]

    def ready() -> bool:
        consumed = run.shown("consume_bolt", "Total received data tuple: ")
        return (
            any(c.get("error", 0) >= 1 for c in streams())
            and len(consumed) == 3
            and all(len(t) >= 2 for t in consumed.values())
            and any(int(t[-1]) > 0 for t in consumed.values())
        )

    try:
        run.wait_for("stream counts and consumed totals", ready, lambda: multi.stdout + run.stdout)
    finally:
        multi.stop()
        run.stop()
    counters = streams()
    maps = multi.shown("count_bolt", "Current map: ")
    assert set(counters[-1]) == {"default", "error"}, counters
    assert counters[-1]["default"] > counters[-1]["error"], counters
    assert all(set(ast.literal_eval(m[-1])) <= WORDS for m in maps.values() if m), maps
    totals = run.shown("consume_bolt", "Total received data tuple: ")
    consumed = {task: int(seen[-1]) for task, seen in totals.items()}
    first = min(consumed)
    assert consumed[first] > 0, consumed
    assert all(consumed[t] == 0 for t in consumed if t != first), consumed
    prepared = [
        line.partition("SampleCustomGrouping prepare: ")[2]
        for _, line in run.lines
        if "SampleCustomGrouping prepare: " in line
    ]
    assert prepared == [
        f"src component word_spout, stream default, target tasks {sorted(consumed)}"
    ]


def test_window_size_and_half_acking_with_heron_run(home: Path) -> None:
    # WindowSize: a SlidingWindowBolt (4 s windows every 1 s) acks a tuple only when it leaves
    # the window, so with max spout pending 100 a window holds at most the 200 tuples of the
    # two spouts, and windows stay non-empty long after the first ones only if those acks reach
    # the spouts. HalfAcking: the bolt fails every second tuple, and the spouts see fails and
    # acks alike.
    window = _running("window_size_topology.py", home / "window")
    half = _running("half_acking_topology.py", home / "half")
    pattern = re.compile(r"\[(\d+), (\d+)\] holds (\d+) tuples")

    def windows() -> dict[int, list[tuple[int, int, int]]]:
        return {
            task: [(int(m[1]), int(m[2]), int(m[3])) for m in map(pattern.search, seen) if m]
            for task, seen in window.shown("count_bolt", "Window ").items()
        }

    def ready() -> bool:
        late = [w for ws in windows().values() for w in ws if w[0] >= ws[0][0] + 6 and w[2] > 0]
        return (
            len(windows()) == 2
            and bool(late)
            and bool(half.shown("word_spout", "Acked "))
            and bool(half.shown("word_spout", "Failed "))
        )

    try:
        window.wait_for("late windows, acks and fails", ready, lambda: window.stdout + half.stdout)
    finally:
        window.stop()
        half.stop()
    for task_windows in windows().values():
        assert all(end - start == 4 for start, end, _ in task_windows), task_windows
        assert all(size <= 200 for _, _, size in task_windows), task_windows
    received = half.shown("half_ack_bolt", "Total received: ")
    assert any(int(seen[-1]) > 0 for seen in received.values()), half.stdout


def test_stateful_word_count_with_heron_run(home: Path) -> None:
    # EFFECTIVELY_ONCE (the program's 30 s checkpoint interval made 1 s on the command line):
    # every stateful component gets init_state (an empty state at first) before initialize and
    # pre_save before each checkpoint; after kill -9 of a count bolt the whole topology rolls
    # back, and the restarted bolt starts from the state it saved at a checkpoint.
    interval = ("--config-property", "topology.stateful.checkpoint.interval.seconds=1")
    run = _running("stateful_word_count_topology.py", home, *interval)
    snapshot = re.compile(r"^(\d{13}-\d{6}) : (\{.*\})$")

    def snapshots(component: str) -> dict[int, list[tuple[str, dict[str, int]]]]:
        return {
            task: [(m[1], ast.literal_eval(m[2])) for m in map(snapshot.match, seen) if m]
            for task, seen in run.shown(component, "Checkpoint Snapshot ").items()
        }

    def recovered() -> dict[int, list[dict[str, int]]]:
        return {
            task: [ast.literal_eval(s) for s in seen]
            for task, seen in run.shown("count_bolt", "Checkpoint Snapshot recovered : ").items()
        }

    try:

        def saved() -> bool:
            counts = snapshots("count_bolt")
            return len(counts) == 2 and all(len(s) >= 2 and s[-1][1] for s in counts.values())

        run.wait_for("two snapshots of each count bolt", saved, lambda: run.stdout)
        victim_task = min(snapshots("count_bolt"))
        victim = next(
            p
            for p in processes_under(home)
            if "--component" in p.cmdline()
            and p.cmdline()[p.cmdline().index("--component") + 1] == "count_bolt"
            and p.cmdline()[p.cmdline().index("--task-id") + 1] == str(victim_task)
        )
        victim.kill()
        run.wait_for(
            "the killed bolt's restart from its saved state",
            lambda: any(r for r in recovered().get(victim_task, [])[1:]),
            lambda: run.stdout,
        )
    finally:
        run.stop()
    first = recovered()
    assert sorted(first) == sorted(snapshots("count_bolt"))
    assert all(states[0] == {} for states in first.values()), first  # empty at the start
    restored = [r for r in first[victim_task][1:] if r]
    saved_states = [state for _, state in snapshots("count_bolt")[victim_task]]
    assert restored and all(r in saved_states for r in restored), (restored, saved_states)
    for component in ("count_bolt", "word_spout"):
        for task, seen in snapshots(component).items():
            ids = [checkpoint for checkpoint, _ in seen]
            assert len(set(ids)) == len(ids), (component, task, ids)  # one save per checkpoint
            assert all(set(state) <= WORDS for _, state in seen), seen
    keys = [set().union(*(state for _, state in seen)) for seen in snapshots("count_bolt").values()]
    assert keys[0].isdisjoint(keys[1]), keys  # fields grouping: each word counted by one task
