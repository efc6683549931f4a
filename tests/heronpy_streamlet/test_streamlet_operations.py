"""Each Streamlet operation's semantics, driven through its plan in this process (the user
functions unpickled from the plan, as an instance gets them; see streamlet_support)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from streamlet_support import LocalPlan

from heron_core.errors import UserCodeError
from heronpy.connectors.mock.arraylooper import ArrayLooper
from heronpy.connectors.textfiles.textfilesgenerator import TextFileGenerator
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.context import Context
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.transformoperator import TransformOperator

results: list[Any] = []


@pytest.fixture(autouse=True)
def _fresh() -> None:
    results.clear()


def test_flat_map_map_filter_and_consume() -> None:
    builder = Builder()
    lines = builder.new_source(ArrayLooper(["Mary had a little lamb", "", "I love you"]))
    suffix = "!"  # a closure: the lambda travels by value, with it
    (
        lines.flat_map(lambda line: line.split())
        .filter(lambda word: len(word) > 1)
        .map(lambda word: word.upper() + suffix)
        .consume(lambda value: results.append(value))
    )
    local = LocalPlan(builder)
    local.spout("generator-1", calls=3)
    assert results == ["MARY!", "HAD!", "LITTLE!", "LAMB!", "LOVE!", "YOU!"]
    # every input of every bolt is acked once handled
    assert ("filter-1", "a") in local.acked and ("consume-1", "YOU!") in local.acked


def test_flat_map_of_a_non_iterable_result_emits_it_as_one_element() -> None:
    builder = Builder()
    builder.new_source(lambda: 7).flat_map(lambda x: x * 2).consume(results.append)
    LocalPlan(builder).spout("supplier-1")
    assert results == []  # results.append is a bound method: pickled with a copy of the list
    builder = Builder()
    builder.new_source(lambda: 7).flat_map(lambda x: x * 2).consume(lambda v: results.append(v))
    LocalPlan(builder).spout("supplier-1")
    assert results == [14]


def test_a_generator_class_defined_inside_a_function_is_refused_naming_the_stage() -> None:
    class Local(Generator):
        def setup(self, context: Context) -> None:
            pass

        def get(self) -> Any:
            return 1

    builder = Builder()
    builder.new_source(Local()).log()
    with pytest.raises(TypeError, match=r"generator of stage 'generator-1' .* local object"):
        LocalPlan(builder)


class Countdown(Generator):
    def __init__(self) -> None:
        self.left = 2

    def setup(self, context: Context) -> None:
        self.partition = context.get_partition_index()

    def get(self) -> Any:
        self.left -= 1
        return self.left if self.left >= 0 else None


def test_generators_skip_none_and_suppliers_emit_it() -> None:
    builder = Builder()
    builder.new_source(lambda: None).consume(lambda v: results.append(("supplier", v)))
    builder.new_source(Countdown()).consume(lambda v: results.append(("generator", v)))
    local = LocalPlan(builder)
    local.spout("supplier-1")
    local.spout("generator-1", calls=4)
    assert results == [("supplier", None), ("generator", 1), ("generator", 0)]


def test_union_gets_both_sides_and_clone_copies_a_stream() -> None:
    builder = Builder()
    left = builder.new_source(lambda: "L")
    right = builder.new_source(lambda: "R")
    first, second = left.union(right).clone(2)
    first.consume(lambda v: results.append(("first", v)))
    second.consume(lambda v: results.append(("second", v)))
    local = LocalPlan(builder)
    local.spout("supplier-1")
    local.spout("supplier-2")
    assert results == [("first", "L"), ("second", "L"), ("first", "R"), ("second", "R")]


def test_repartition_sends_each_element_to_the_partitions_its_function_names() -> None:
    builder = Builder()
    numbers = builder.new_source(ArrayLooper([0, 1, 2, 3, 4, 5]))
    # an index (taken modulo) or a list of indexes
    numbers.repartition(3, lambda n, partitions: n + 3 if n < 4 else [0, 2]).log()
    local = LocalPlan(builder)
    local.spout("generator-1", calls=6)
    first, second, third = local.task_ids("repartition-1")
    assert local.received[("repartition-1", first)] == [0, 3, 4, 5]
    assert local.received[("repartition-1", second)] == [1]
    assert local.received[("repartition-1", third)] == [2, 4, 5]


def test_repartition_without_a_function_spreads_evenly() -> None:
    builder = Builder()
    builder.new_source(ArrayLooper(range(6))).repartition(2).consume(lambda v: results.append(v))
    local = LocalPlan(builder)
    local.spout("generator-1", calls=6)
    assert [len(local.received[("repartition-1", t)]) for t in local.task_ids("repartition-1")] == [
        3,
        3,
    ]
    assert sorted(results) == [0, 1, 2, 3, 4, 5]


def test_a_repartition_function_returning_junk_names_the_stage() -> None:
    builder = Builder()
    builder.new_source(lambda: "x").repartition(2, lambda e, n: "first").log()
    local = LocalPlan(builder)
    with pytest.raises(UserCodeError, match="stage 'repartition-1': the repartition function"):
        local.spout("supplier-1")


class Tagger(TransformOperator):
    """Emits each element twice, tagged with its partition and the stream it reads."""

    def setup(self, context: Context) -> None:
        self.context = context
        self.tag = (context.get_partition_index(), context.get_num_partitions())
        self.stream = context.get_stream_name()

    def transform(self, tup: Any) -> None:
        for copy in (1, 2):
            self.context.emit((tup.values[0], copy, self.tag, self.stream, tup.component))


def test_transform_gets_each_tuple_and_emits_through_its_context() -> None:
    builder = Builder()
    source = builder.new_source(ArrayLooper(["a", "b"]))
    source.transform(Tagger()).set_num_partitions(2).consume(lambda v: results.append(v))
    local = LocalPlan(builder)
    local.spout("generator-1", calls=2)
    assert results == [
        ("a", 1, (0, 2), "output", "generator-1"),
        ("a", 2, (0, 2), "output", "generator-1"),
        ("b", 1, (1, 2), "output", "generator-1"),
        ("b", 2, (1, 2), "output", "generator-1"),
    ]


def test_log_writes_each_element_at_info(caplog: pytest.LogCaptureFixture) -> None:
    builder = Builder()
    builder.new_source(lambda: ("lamb", 3)).log()
    local = LocalPlan(builder)
    with caplog.at_level(logging.INFO):
        local.spout("supplier-1", calls=2)
    assert [r.getMessage() for r in caplog.records if r.name.endswith("LogBolt")] == [
        "('lamb', 3)",
        "('lamb', 3)",
    ]


def test_text_files_are_shared_out_between_partitions(tmp_path: Any) -> None:
    for name, text in (("a.txt", "a1\na2\n"), ("b.txt", "b1\n"), ("c.txt", "c1\n")):
        (tmp_path / name).write_text(text)
    builder = Builder()
    files = builder.new_source(TextFileGenerator(str(tmp_path / "*.txt"))).set_num_partitions(2)
    files.consume(lambda line: results.append(line.strip()))
    local = LocalPlan(builder)
    local.spout("generator-1", calls=4)
    # partition 0 reads a.txt and c.txt (from the last file, each from its last line), 1 b.txt
    assert results == ["c1", "b1", "a2", "a1"]
