"""Fields, Values and Tuple: Storm's accessors over the kernel's tuple."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.api import GlobalStreamId, InputBatch
from heron_core.api import Tuple as NativeTuple
from storm_compat.tuple import Fields, Tuple, Values
from storm_compat.utils import TupleUtils


def test_fields_accepts_names_or_one_list_and_rejects_duplicates() -> None:
    assert Fields("a", "b") == Fields(["a", "b"]) == Fields(("a", "b"))
    assert list(Fields("a", "b")) == ["a", "b"] and len(Fields("a", "b")) == 2
    assert Fields().size() == 0
    with pytest.raises(ValueError, match="duplicate field name 'a'"):
        Fields("a", "b", "a")
    with pytest.raises(TypeError, match="must be str"):
        Fields(["a", 1])  # type: ignore[list-item]


def test_field_index_of_an_unknown_field_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"field 'c' does not exist; fields: \['a', 'b'\]"):
        Fields("a", "b").fieldIndex("c")


@given(st.lists(st.text(min_size=1), unique=True, min_size=1), st.data())
def test_select_returns_the_values_of_the_selected_fields_in_selector_order(
    names: list[str], data: st.DataObject
) -> None:
    values = [f"v-{name}" for name in names]
    chosen = data.draw(st.permutations(names).map(lambda p: p[: max(1, len(p) // 2)]))
    assert Fields(names).select(Fields(chosen), values) == [f"v-{n}" for n in chosen]


def test_values_builds_a_plain_list_and_every_list_is_values() -> None:
    values = Values("a", 1)
    assert values == ["a", 1] and type(values) is list
    assert Values() == [] and type(Values()) is list
    assert isinstance(["x"], Values) and isinstance(values, Values) and issubclass(list, Values)
    assert not isinstance(("x",), Values) and not issubclass(tuple, Values)


def test_values_pickles_and_copies_as_itself_like_a_class() -> None:
    assert pickle.loads(pickle.dumps(Values)) is Values and copy.deepcopy(Values) is Values
    assert pickle.loads(pickle.dumps({"kind": Values}))["kind"] is Values
    assert repr(Values) == "<class 'storm_compat.tuple.Values'>"


class Pair(Values):
    """A user's subclass of Values."""

    def first(self) -> Any:
        return self[0]


def test_a_subclass_of_values_builds_instances_of_itself() -> None:
    pair = Pair("a", 1)
    assert type(pair) is Pair and pair == ["a", 1] and pair.first() == "a"
    assert isinstance(pair, Values) and isinstance(pair, Pair) and issubclass(Pair, Values)
    assert not isinstance(["a", 1], Pair) and not issubclass(list, Pair)


def sample() -> Tuple:
    return Tuple.of(
        ["storm", 3, 2.5, True, b"\x00", None],
        Fields("word", "count", "ratio", "flag", "raw", "missing"),
        component="split",
        stream="words",
        task=7,
    )


def test_getters_by_index_and_by_field() -> None:
    tup = sample()
    assert tup.size() == 6 and tup.contains("ratio") and not tup.contains("x")
    assert tup.getFields() == Fields("word", "count", "ratio", "flag", "raw", "missing")
    assert tup.fieldIndex("flag") == 3
    assert tup.getValue(0) == tup.getValueByField("word") == "storm"
    assert (tup.getString(0), tup.getInteger(1), tup.getLong(1), tup.getShort(1)) == (
        "storm",
        3,
        3,
        3,
    )
    assert (tup.getDouble(2), tup.getFloat(2), tup.getBoolean(3), tup.getBinary(4)) == (
        2.5,
        2.5,
        True,
        b"\x00",
    )
    assert tup.getStringByField("word") == "storm" and tup.getIntegerByField("count") == 3
    assert tup.getDoubleByField("ratio") == 2.5 and tup.getBooleanByField("flag") is True
    assert tup.getBinaryByField("raw") == b"\x00" and tup.getLongByField("count") == 3
    assert tup.getString(5) is None  # null passes every cast, as in Java
    assert tup.select(Fields("count", "word")) == [3, "storm"]
    assert tup.getValues() == ["storm", 3, 2.5, True, b"\x00", None]


@pytest.mark.parametrize(
    ("getter", "index", "expected"),
    [
        ("getInteger", 0, r"holds 'storm' \(str\), expected an int"),
        ("getInteger", 3, r"holds True \(bool\), expected an int"),
        ("getDouble", 1, r"holds 3 \(int\), expected a float"),
        ("getBoolean", 1, r"holds 3 \(int\), expected a bool"),
        ("getString", 4, r"holds b'\\x00' \(bytes\), expected a str"),
    ],
)
def test_typed_getters_refuse_other_types_like_java_casts(
    getter: str, index: int, expected: str
) -> None:
    with pytest.raises(TypeError, match=f"field {index} .* from 'split' stream 'words' {expected}"):
        getattr(sample(), getter)(index)


def test_source_of_a_tuple_and_of_a_tick() -> None:
    tup = sample()
    assert (tup.getSourceComponent(), tup.getSourceStreamId(), tup.getSourceTask()) == (
        "split",
        "words",
        7,
    )
    assert tup.getSourceGlobalStreamId() == GlobalStreamId("split", "words")
    assert tup.getMessageId() is None
    assert not TupleUtils.isTick(tup)
    tick = Tuple.of([5], Fields("rate_secs"), component="__system", stream="__tick", task=-1)
    assert TupleUtils.isTick(tick) and tick.isTick() and tick.getSourceTask() == -1
    assert "source: split:7, stream: words" in repr(tup)


def test_of_checks_the_arity() -> None:
    args: Any = (["a", "b"], Fields("a"))
    with pytest.raises(ValueError, match=r"2 values for 1 fields \['a'\]"):
        Tuple.of(*args)


def test_getters_by_field_check_the_type_and_the_name() -> None:
    tup = sample()
    with pytest.raises(TypeError, match=r"field 1 \('count'\) .* expected a str"):
        tup.getStringByField("count")
    with pytest.raises(TypeError, match=r"field 3 \('flag'\) .* holds True \(bool\)"):
        tup.getIntegerByField("flag")
    with pytest.raises(ValueError, match="field 'nope' does not exist"):
        tup.getIntegerByField("nope")
    assert tup.getStringByField("missing") is None and tup.getIntegerByField("missing") is None


def test_tuples_are_equal_only_to_themselves_as_storms_tuple_impl() -> None:
    a, b = sample(), sample()
    assert a == a and a != b and len({a, b}) == 2
    assert {a: 1}[a] == 1


def test_a_storm_tuple_is_the_kernels_tuple() -> None:
    tup = sample()
    assert isinstance(tup, NativeTuple) and tup.native is tup
    assert (tup.component, tup.stream, tup.task, tup.values) == (
        "split",
        "words",
        7,
        tup.getValues(),
    )
    assert Tuple(tup, Fields("other")) is tup and tup.getFields().get(0) == "word"


def test_the_storm_tuple_of_a_kernel_tick_is_a_new_one_with_the_given_fields() -> None:
    native = NativeTuple("__tick", "__system", "__tick", -1, [2.0])
    tick = Tuple(native, Fields("rate_secs"))
    assert type(tick) is Tuple and tick is not native and tick.isTick()
    assert tick.getDoubleByField("rate_secs") == 2.0 and tick.getSourceTask() == -1
    assert tick.getMessageId() == "__tick" and tick._roots == () and tick._ackval == 0


def test_a_pickled_or_copied_tuple_is_a_new_tuple_with_the_same_state() -> None:
    tup = sample()
    for copied in (pickle.loads(pickle.dumps(tup)), copy.copy(tup)):
        assert type(copied) is Tuple and copied is not tup and copied != tup
        assert copied.getFields() == tup.getFields() and copied.getValues() == tup.getValues()
        assert (copied.getSourceComponent(), copied.getSourceTask()) == ("split", 7)


def test_the_runtime_builds_storm_tuples_without_their_new_and_they_keep_their_state() -> None:
    # Storm's Tuple has a Python __new__ over a compiled base of its own (TypedTuple): a batch
    # of inputs builds it through that base's __new__, with only the kernel tuple's slots set
    built = InputBatch("split", "words", 7, [["storm"], ["heron"]], kind=Tuple).tuples()
    assert [type(tup) for tup in built] == [Tuple, Tuple]
    assert [tup.values for tup in built] == [["storm"], ["heron"]]
    tup = built[0]
    tup._schema, tup._done = Fields("word"), True  # what the bolt adapter sets per input
    assert tup.getString(0) == "storm" and tup.getStringByField("word") == "storm"
    copied = pickle.loads(pickle.dumps(tup))
    assert copied.getFields() == Fields("word") and copied._done is True
