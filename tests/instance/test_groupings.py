"""Each grouping's contract, checked on the choosers the emitting instance builds."""

from __future__ import annotations

import pickle
import random
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.api import CustomGrouping
from heron_core.instance._groupings import Chooser, build_chooser, stable_hash
from heron_core.proto import topology_pb2

G = topology_pb2.Grouping
FIELDS = ("word", "n")


def chooser(
    gtype: int,
    tasks: list[int],
    fields: tuple[str, ...] = (),
    local: set[int] | None = None,
    custom: Any = None,
    seed: int = 0,
) -> Chooser:
    inp = topology_pb2.InputStream(gtype=gtype, grouping_fields=list(fields))
    inp.stream.id = "default"
    inp.stream.component_name = "src"
    if custom is not None:
        inp.custom_grouping_object = pickle.dumps(custom)
    made = build_chooser(
        "dst",
        inp,
        FIELDS,
        tasks,
        local or set(),
        random.Random(seed),
        lambda g, s, t: g.prepare(None, "dst", s, t),
    )
    assert made is not None
    return made


task_lists = st.lists(st.integers(1, 500), min_size=1, max_size=12, unique=True)
words = st.text(min_size=0, max_size=12)


@given(task_lists, st.lists(words, min_size=1, max_size=50), st.integers(0, 1000))
def test_fields_sends_a_key_always_to_the_same_task(
    tasks: list[int], keys: list[str], seed: int
) -> None:
    a = chooser(G.FIELDS, tasks, ("word",), seed=seed)
    b = chooser(G.FIELDS, list(reversed(tasks)), ("word",), seed=seed + 1)
    for key in keys + keys:
        task = a.choose([key, 1])
        assert task in tasks
        assert task == b.choose([key, 2])  # independent of other fields, order and rng


@given(task_lists, st.lists(st.tuples(words, st.integers()), min_size=1, max_size=30))
def test_fields_on_two_fields_is_a_function_of_both(
    tasks: list[int], rows: list[tuple[str, int]]
) -> None:
    a = chooser(G.FIELDS, tasks, ("word", "n"))
    for word, n in rows:
        assert a.choose([word, n]) == a.choose([word, n]) in tasks


def test_stable_hash_is_identical_across_processes() -> None:
    keys = ["alpha", "βeta", "", "x" * 100]
    script = (
        "import sys; from heron_core.instance._groupings import stable_hash; "
        f"print([stable_hash(k) for k in {keys!r}] + [stable_hash(('a', 1))])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1
    assert outputs.pop().strip() == str([stable_hash(k) for k in keys] + [stable_hash(("a", 1))])


@given(task_lists, st.integers(1, 5), st.integers(0, 1000))
def test_shuffle_gives_every_task_an_equal_share(tasks: list[int], rounds: int, seed: int) -> None:
    for gtype in (G.SHUFFLE, G.NONE):
        c = chooser(gtype, tasks, seed=seed)
        counts = Counter(c.choose(["w", 1]) for _ in range(rounds * len(tasks)))
        assert counts == {t: rounds for t in tasks}


@given(task_lists)
def test_all_sends_to_every_task(tasks: list[int]) -> None:
    c = chooser(G.ALL, tasks)
    assert c.multi and sorted(c.choose(["w", 1])) == sorted(tasks)


@given(task_lists)
def test_global_sends_to_the_lowest_task(tasks: list[int]) -> None:
    c = chooser(G.LOWEST, tasks)
    assert {c.choose([str(i), i]) for i in range(20)} == {min(tasks)}


@given(task_lists, st.data())
def test_local_or_shuffle_stays_in_the_container(tasks: list[int], data: st.DataObject) -> None:
    local = set(data.draw(st.lists(st.sampled_from(tasks), unique=True)))
    c = chooser(G.LOCAL_OR_SHUFFLE, tasks, local=local)
    chosen = {c.choose(["w", 1]) for _ in range(3 * len(tasks))}
    assert chosen == (local or set(tasks))


@given(task_lists, st.lists(words, min_size=1, max_size=40))
def test_partial_key_uses_one_of_two_tasks_per_key(tasks: list[int], keys: list[str]) -> None:
    c = chooser(G.PARTIAL_KEY, tasks, ("word",))
    seen: dict[str, set[int]] = {}
    for key in keys * 3:
        seen.setdefault(key, set()).add(c.choose([key, 0]))
    assert all(len(s) <= 2 and s <= set(tasks) for s in seen.values())


class EvenOdd(CustomGrouping):
    def prepare(self, context: Any, component: str, stream: str, target_tasks: list[int]) -> None:
        self.tasks = sorted(target_tasks)

    def choose_tasks(self, values: list[Any]) -> list[int]:
        return [self.tasks[values[1] % len(self.tasks)]]


class Rogue(EvenOdd):
    def choose_tasks(self, values: list[Any]) -> list[int]:
        return [10_000]


def test_custom_grouping_is_prepared_and_chooses() -> None:
    c = chooser(G.CUSTOM, [4, 5, 6], custom=EvenOdd())
    assert c.multi and [c.choose(["w", n])[0] for n in range(4)] == [4, 5, 6, 4]


def test_custom_grouping_choosing_a_foreign_task_is_an_error() -> None:
    c = chooser(G.CUSTOM, [4, 5], custom=Rogue())
    with pytest.raises(ValueError, match="not one of its tasks"):
        c.choose(["w", 1])


def test_direct_grouping_has_no_chooser() -> None:
    inp = topology_pb2.InputStream(gtype=G.DIRECT)
    assert build_chooser("dst", inp, FIELDS, [1], set(), random.Random(), lambda *a: None) is None


@pytest.mark.parametrize(
    ("gtype", "fields"),
    [
        (G.SHUFFLE, ()),
        (G.NONE, ()),
        (G.LOCAL_OR_SHUFFLE, ()),
        (G.LOWEST, ()),
        (G.FIELDS, ("word",)),
        (G.FIELDS, ("word", "n")),
        (G.PARTIAL_KEY, ("word",)),
    ],
)
def test_a_grouping_over_one_task_names_it_as_fixed(gtype: int, fields: tuple[str, ...]) -> None:
    # the router then sends every tuple there without calling choose (no hashing, no memo)
    one = chooser(gtype, [7], fields)
    assert one.fixed == 7 and one.cache is None
    assert {one.choose([word, n]) for word, n in [("a", 1), ("b", 2), ("", 3)]} == {7}
    assert chooser(gtype, [7, 9], fields).fixed == -1


def test_all_and_custom_groupings_over_one_task_are_not_fixed() -> None:
    assert chooser(G.ALL, [7]).fixed == -1
    rogue = chooser(G.CUSTOM, [7], custom=Rogue())  # still asked, and still refused
    assert rogue.fixed == -1
    with pytest.raises(ValueError, match="not one of its tasks"):
        rogue.choose(["w", 1])
