"""An instance decoding the batches its stream manager forwards (the stream manager passes a
data payload on unparsed): a payload that is not a batch is dropped and logged, never the end of
the instance; a well-formed batch decodes to its rows and trees."""

from __future__ import annotations

import marshal
import pickle
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from heron_core.api._tuple import count_runs
from heron_core.errors import UserCodeError
from heron_core.instance import InstanceRuntime
from heron_core.instance._router import DEFAULT_VALUES
from heron_core.instance._values import ValuePolicy
from heron_core.proto import tuple_pb2


def _runtime(acking: bool, values: ValuePolicy = DEFAULT_VALUES) -> Any:
    return SimpleNamespace(acking=acking, _where="task 7", _malformed=0, _refused=0, values=values)


def _batch(values: bytes, serializer: int, roots: bytes = b"") -> bytes:
    return tuple_pb2.TupleBatch(
        src_task=1,
        dest_task=7,
        stream="default",
        src_component="word",
        count=1,
        serializer=serializer,
        values=values,
        roots=roots,
    ).SerializeToString()


MARSHAL, PICKLE = tuple_pb2.MARSHAL, tuple_pb2.PICKLE


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.booleans())
@example(b"\x08\x01\x12", True)  # a truncated protobuf
@example(_batch(b"\xff\x00", MARSHAL), False)  # marshal garbage
@example(_batch(b"\x80\x05garbage", PICKLE), False)  # pickle garbage
@example(_batch(marshal.dumps(7), MARSHAL), False)  # rows that are not a list
@example(
    _batch(marshal.dumps([["a"], ["b"]]), MARSHAL, marshal.dumps([()])), True
)  # 2 rows, 1 tree
@example(
    _batch(marshal.dumps([["a"], ["b"]]), MARSHAL, marshal.dumps([[3, ((1, 2, 3),)]])), True
)  # 2 rows, a run of 3
@example(
    _batch(marshal.dumps([["a"], ["b"]]), MARSHAL, marshal.dumps([[2, [(1, 2, 3)]]])), True
)  # a run whose anchors are a list
@example(_batch(marshal.dumps([["a"]]), MARSHAL, marshal.dumps([[1, ()]])), True)  # a run of 1
@example(_batch(marshal.dumps([["a"]]), MARSHAL, marshal.dumps(((),))), True)  # not a list
def test_a_payload_decodes_or_is_dropped(payload: bytes, acking: bool) -> None:
    runtime = _runtime(acking)
    decoded = InstanceRuntime._decode(runtime, payload)
    if decoded is None:
        assert runtime._malformed + runtime._refused == 1
    else:
        _, rows, trees = decoded
        assert isinstance(rows, list)
        assert trees is None if not acking else count_runs(trees) == len(rows)


def test_a_good_batch_decodes_with_its_trees_as_runs() -> None:
    runs = [(), [2, ((3, 5, 9),)], ((3, 5, 7),)]
    payload = _batch(marshal.dumps([["a"], ["b"], ["c"], ["d"]]), MARSHAL, marshal.dumps(runs))
    batch, rows, trees = InstanceRuntime._decode(_runtime(True), payload)
    assert (batch.src_component, rows, trees) == ("word", [["a"], ["b"], ["c"], ["d"]], runs)
    _, rows, trees = InstanceRuntime._decode(
        _runtime(True), _batch(marshal.dumps([["a"]]), MARSHAL)
    )
    assert trees == [()]  # a sender with acking off sends no roots


class _Gone:
    pass


def test_rows_of_a_class_this_process_cannot_load_name_the_task() -> None:
    """With the fall-back on (any class unpickles); without it, the class is not allowed and
    the batch is dropped (tests/security/test_tuple_values.py)."""
    data = pickle.dumps([[_Gone()]]).replace(b"_Gone", b"_Nope")
    runtime = _runtime(False, ValuePolicy(fall_back=True))
    with pytest.raises(UserCodeError, match="task 7: a batch's tuples need code"):
        InstanceRuntime._decode(runtime, _batch(data, PICKLE))
    runtime = _runtime(False)
    assert InstanceRuntime._decode(runtime, _batch(data, PICKLE)) is None
    assert (runtime._refused, runtime._malformed) == (1, 0)
