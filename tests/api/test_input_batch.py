"""InputBatch: the inputs a bolt that overrides process_batch gets, with their Tuples on demand."""

from __future__ import annotations

import pytest

from heron_core.api import InputBatch, Tuple


class Marked(Tuple):
    __slots__ = ()


def test_with_acking_off_a_tuple_is_built_per_call_of_the_bolts_tuple_type() -> None:
    batch = InputBatch("split", "default", 3, [["a"], ["b"]], "stats", 1.5, Marked)
    one, again = batch.tuple(0), batch.tuple(0)
    assert one is not again and one == again and type(one) is Marked
    assert (one._origin, one._received) == ("stats", 1.5)
    assert not batch.tracked and len(batch) == 2


def test_with_acking_on_each_tuple_carries_its_trees_and_is_built_once() -> None:
    trees = [((1, 10, 5),), ((1, 11, 6), (2, 12, 7))]
    batch = InputBatch("split", "default", 3, [["a"], ["b"]], trees=trees)
    tuples = batch.tuples()
    assert [t._roots for t in tuples] == trees and all(t._ackval == 0 for t in tuples)
    assert batch.tuple(1) is tuples[1] and batch.tuples() is tuples and batch.tracked


def test_trees_that_do_not_match_the_values_are_an_error() -> None:
    batch = InputBatch("split", "default", 3, [["a"], ["b"]], trees=[()])
    with pytest.raises(ValueError, match="2 inputs from 'split' on 'default' came with 1 tuple"):
        batch.tuples()


def test_a_paced_run_serves_between_two_calls_once_due_and_only_then() -> None:
    due = [False]
    events: list[str] = []

    def serve() -> None:
        events.append(f"serve, {batch._left} left")
        due[0] = False

    def process(tup: Tuple) -> None:
        events.append(tup.values[0])
        if tup.values[0] == "b":  # a slow call: the flush interval passes during it
            due[0] = True

    batch = InputBatch("split", "default", 3, [["a"], ["b"], ["c"], ["d"]], due=due, serve=serve)
    batch._each(process, paced=True)
    assert events == ["a", "b", "serve, 2 left", "c", "d"]


@pytest.mark.parametrize("built_first", [False, True])
def test_each_is_the_paced_run_and_keeps_its_tuples_for_tuples(built_first: bool) -> None:
    due = [False]
    events: list[str] = []

    def serve() -> None:
        events.append(f"serve, {batch._left} left")
        due[0] = False

    seen: list[Tuple] = []

    def process(tup: Tuple) -> None:
        seen.append(tup)
        events.append(tup.values[0])
        due[0] = tup.values[0] == "a"

    batch = InputBatch("split", "default", 3, [["a"], ["b"], ["c"]], None, 0.0, Marked, due=due)
    batch.serve = serve
    before = batch.tuples() if built_first else None
    batch.each(process)
    assert events == ["a", "serve, 2 left", "b", "c"]
    assert all(type(t) is Marked for t in seen)
    assert batch.tuples() == seen and all(a is b for a, b in zip(batch.tuples(), seen, strict=True))
    if before is not None:
        assert batch.tuples() is before


def test_the_default_process_batch_runs_process_paced_over_the_same_tuples() -> None:
    from heron_core.api import Bolt

    class Recording(Bolt):
        def process(self, tup: Tuple) -> None:
            self.seen.append(tup)

    due = [True]
    served: list[int] = []

    def serve() -> None:
        served.append(batch._left)
        due[0] = False

    bolt = Recording()
    bolt.seen = []  # type: ignore[attr-defined]
    batch = InputBatch("split", "default", 3, [["a"], ["b"]], due=due, serve=serve)
    bolt.process_batch(batch)
    assert served == [1]
    assert all(a is b for a, b in zip(batch.tuples(), bolt.seen, strict=True))  # type: ignore[attr-defined]


def test_building_tuples_never_serves() -> None:
    def serve() -> None:
        raise AssertionError("served while building tuples")

    batch = InputBatch("split", "default", 3, [["a"], ["b"]], due=[True], serve=serve)
    assert [t.values for t in batch.tuples()] == [["a"], ["b"]]
    assert batch.tuple(1).values == ["b"]


def test_outside_an_instance_nothing_is_ever_due() -> None:
    batch = InputBatch("split", "default", 3, [["a"]])
    assert batch.due == [False]
    batch.serve()  # a no-op


def test_plain_tuples_are_built_alike_compiled_or_not() -> None:
    import heron_core.api._tuple as module

    compiled = not (module.__file__ or "").endswith(".py")
    assert module._COMPILED is compiled
    trees = [((1, 10, 5),)]
    for acking in (None, trees):
        batch = InputBatch("split", "default", 3, [["a"]], "stats", 1.5, trees=acking)
        tup = batch.tuples()[0]
        assert type(tup) is Tuple
        assert (tup.id, tup.component, tup.stream, tup.task, tup.values) == (
            None,
            "split",
            "default",
            3,
            ["a"],
        )
        assert (tup._origin, tup._received) == ("stats", 1.5)
        if acking:
            assert (tup._roots, tup._ackval) == (trees[0], 0)


def _readme_block(marker: str) -> str:
    """The README's ```python block that contains ``marker``."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    (block,) = [b for b in blocks if marker in b]
    return block


class _Printing:
    """A fake collector that prints what a bolt asks of it; ``emit_and_ack`` as its docstring
    says it equals (the real one is checked against that in tests/instance)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def emit_many(self, rows: list[object], stream: object, anchors: object) -> None:
        self.calls.extend(("emit", values) for values in rows)  # as one emit per row

    def ack(self, tup: Tuple) -> None:
        self.calls.append(("ack", tup.values))

    def emit_and_ack(self, batch: InputBatch, outputs: list[list[object]], stream: str) -> None:
        for tup, rows in zip(batch.tuples(), outputs, strict=True):
            self.emit_many(rows, stream, [tup])
            self.ack(tup)


def test_the_readmes_batch_bolt_counts_and_acks_each_input() -> None:
    from heron_core.api import Bolt

    scope: dict[str, object] = {"Bolt": Bolt}
    exec(_readme_block("class FastCountBolt"), scope)
    bolt = scope["FastCountBolt"]()  # type: ignore[operator]
    bolt._collector = out = _Printing()
    bolt.initialize({}, None)
    bolt.process_batch(InputBatch("w", "default", 1, [["a"], ["b"], ["a"]]))
    assert out.calls == [
        ("emit", ["a", 1]),
        ("ack", ["a"]),
        ("emit", ["b", 1]),
        ("ack", ["b"]),
        ("emit", ["a", 2]),
        ("ack", ["a"]),
    ]
