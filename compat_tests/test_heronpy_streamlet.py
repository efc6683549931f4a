"""Heron's Streamlet examples (rewritten in ``heronpy_streamlet_examples/``) run unchanged with
``heron run``: the word count with ``reduce_by_key_and_window``, and the join whose results a
``TransformOperator`` describes. What their ``log()`` stages print is checked.

Both programs run at once (two ``heron run`` processes, two heron homes) to keep the suite
short; the test waits on what they print, with a generous deadline, then stops them with
SIGINT. Every process is gone afterwards; on failure the output and the logs are printed.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from idiom_support import HeronRun, idiom_run

pytestmark = pytest.mark.processes

EXAMPLES = Path(__file__).resolve().parent / "heronpy_streamlet_examples"
WINDOW = r"Window \{start_time: (?P<start>\d+), end_time: (?P<end>\d+)\}"
COUNT = re.compile(r"\(KeyedWindow \{key: (?P<key>\w+), window: " + WINDOW + r"\}, (?P<n>\d+)\)")
JOINED = re.compile(
    r"joined (?P<value>\w+) at KeyedWindow \{key: (?P<key>\w+), window: "
    + WINDOW
    + r"\} in partition (?P<partition>\d+)"
)


def said_by(run: HeronRun, component: str) -> list[str]:
    """What ``component``'s tasks logged so far."""
    return [said for seen in run.shown(component, "").values() for said in seen]


def counts_per_window(run: HeronRun) -> list[tuple[str, int, int, int]]:
    """(word, window start, window end, count) of every result the word count logged."""
    found = []
    for said in said_by(run, "log-1"):
        match = COUNT.search(said)
        assert match, f"not a word count result: {said!r}"
        found.append((match["key"], int(match["start"]), int(match["end"]), int(match["n"])))
    return found


def joins(run: HeronRun) -> list[tuple[str, str, int, int, int]]:
    """(key, joined value, window start, window end, partition) of every join result."""
    found = []
    for said in said_by(run, "log-1"):
        match = JOINED.search(said)
        assert match, f"not a described join result: {said!r}"
        found.append(
            (
                match["key"],
                match["value"],
                int(match["start"]),
                int(match["end"]),
                int(match["partition"]),
            )
        )
    return found


def totals(found: list[tuple[str, int, int, int]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for word, _, _, n in found:
        total[word] += n
    return total


# The word count's source: "Mary had a little lamb" twice and "I love you" once, 4 rounds. With
# a 2 s window sliding every 1 s, each word is counted in exactly 2 windows.
EXPECTED = Counter({w: 2 * 8 for w in ["Mary", "had", "a", "little", "lamb"]}) + Counter(
    {w: 2 * 4 for w in ["I", "love", "you"]}
)


def test_streamlet_word_count_and_join_run_unchanged_with_heron_run(tmp_path: Path) -> None:
    with idiom_run(tmp_path) as (home, _):
        runs: list[HeronRun] = []
        try:
            word_count = HeronRun(
                "run", str(EXAMPLES / "word_count_streamlet.py"), home=home / "wc"
            )
            runs.append(word_count)
            join = HeronRun("run", str(EXAMPLES / "join_streamlet_topology.py"), home=home / "join")
            runs.append(join)

            def done() -> bool:
                values = {value for _, value, _, _, _ in joins(join)}
                return totals(counts_per_window(word_count)) == EXPECTED and {"ac", "bc"} <= values

            join.wait_for("complete results", done, lambda: "\n".join(run.stdout for run in runs))
            for run in runs:
                run.stop()
        except BaseException:
            for run in runs:
                print(f"===== heron run output ({run.home}) =====\n{run.stdout}")
            raise
        finally:
            for run in runs:
                run.kill()

    # the word count: every word counted in exactly two 2 s windows, none counted more
    found = counts_per_window(word_count)
    assert totals(found) == EXPECTED
    assert {end - start for _, start, end, _ in found} == {2}
    per_window = Counter((word, start) for word, start, _, _ in found)
    assert max(per_window.values()) == 1  # one result per word and window
    assert len({start for _, start, _, _ in found}) >= 2  # the windows slide

    # the join: only key1 has values on both sides; 'x' (key2) and 'y' (key3) never join
    joined = joins(join)
    assert {(key, value) for key, value, *_ in joined} == {("key1", "ac"), ("key1", "bc")}
    assert {end - start for _, _, start, end, _ in joined} == {2}
    assert {partition for *_, partition in joined} == {0}
