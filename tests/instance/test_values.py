"""The classes tuple values may hold (``heron_core.instance._values``), on the router's sending
path and the runtime's receiving path, outside any process (the process-level tests are in
tests/security/test_tuple_values.py)."""

from __future__ import annotations

import collections
import datetime
import decimal
import fractions
import logging
import pickle
import uuid
import zoneinfo
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from instance_support import physical_plan

from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder
from heron_core.errors import ConfigurationError, UserCodeError
from heron_core.instance import InstanceRuntime
from heron_core.instance._router import DEFAULT_VALUES, Router
from heron_core.instance._values import (
    FALL_BACK_KEY,
    REGISTER_KEY,
    SKIP_MISSING_KEY,
    RefusedValueClass,
    ValueClassError,
    ValuePolicy,
    policy_for,
    registered_paths,
)
from heron_core.proto import tuple_pb2
from heron_core.testing.attack import evil_pickle


class Src(Spout):
    outputs = [Stream(["v"]), Stream(["v"], name="other")]


class Sink(Bolt):
    pass


class Point(NamedTuple):
    """A user class (a namedtuple is one): allowed only when registered."""

    x: int
    y: int


class Meters(float):
    """A subclass of a core type: another class."""


class LaterDate(datetime.date):
    """A subclass of an allowed class: another class."""


class Liar:
    """Claims the module and name of an allowed class."""


Liar.__module__, Liar.__qualname__ = "decimal", "Decimal"


class Wire:
    """What the router sends: each batch's payload, as the stream manager forwards it."""

    def __init__(self) -> None:
        self.payloads: list[bytes] = []

    def send_data(self, task: int, batch: bytes) -> None:
        self.payloads.append(batch)


def router(values: ValuePolicy = DEFAULT_VALUES) -> tuple[Router, Wire]:
    b = TopologyBuilder("values")
    src = b.add_spout("src", Src, par=1)
    b.add_bolt("sink", Sink, par=1, inputs={src: Grouping.SHUFFLE, src["other"]: Grouping.SHUFFLE})
    wire = Wire()
    view = physical_plan(b.build())
    return Router(view, "src", 1, 1, wire, 100, lambda *a: None, values=values), wire


def receiver(values: ValuePolicy = DEFAULT_VALUES) -> Any:
    """What `InstanceRuntime._decode` reads of its runtime."""
    return SimpleNamespace(acking=False, _where="task 2", _malformed=0, _refused=0, values=values)


def received(payloads: list[bytes], values: ValuePolicy = DEFAULT_VALUES) -> list[Any]:
    rows: list[Any] = []
    for payload in payloads:
        decoded = InstanceRuntime._decode(receiver(values), payload)
        assert decoded is not None
        rows.extend(decoded[1])
    return rows


STDLIB = [
    datetime.date(2024, 2, 29),
    datetime.time(23, 59, 1, 5),
    datetime.datetime(2024, 2, 29, 12, 0, tzinfo=datetime.UTC),
    datetime.datetime(2024, 2, 29, 12, 0, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")),
    datetime.timedelta(days=2, microseconds=3),
    datetime.timezone(datetime.timedelta(hours=-3), "BRT"),
    decimal.Decimal("3.14159265358979323846"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    fractions.Fraction(22, 7),
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.defaultdict(list, {"k": [1]}),
    collections.Counter("mississippi"),
    collections.deque([1, 2, 3], maxlen=5),
]


@pytest.mark.parametrize("value", STDLIB, ids=lambda v: type(v).__name__)
def test_the_standard_value_types_cross_unchanged(value: Any) -> None:
    r, wire = router()
    r.emit([value])
    r.flush()
    [batch] = [tuple_pb2.TupleBatch.FromString(p) for p in wire.payloads]
    assert batch.serializer == tuple_pb2.PICKLE  # marshal refuses a batch holding it
    [[out]] = received(wire.payloads)
    assert out == value and type(out) is type(value)
    if isinstance(value, collections.defaultdict):
        assert out.default_factory is list


def test_the_core_types_marshal_refuses_not_cross_too() -> None:
    """complex and Ellipsis marshal; a bytearray marshals as bytes (marshal writes any
    buffer so), and crosses as a bytearray in a pickled batch."""
    r, wire = router()
    r.emit([[2j, ..., bytearray(b"raw")]])
    r.flush()
    assert received(wire.payloads) == [[[2j, ..., b"raw"]]]
    r.emit([[2j, ..., bytearray(b"raw"), decimal.Decimal(1)]])
    r.flush()
    [row] = received(wire.payloads[1:])
    assert row == [[2j, ..., bytearray(b"raw"), decimal.Decimal(1)]]
    assert type(row[0][2]) is bytearray


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (Point(1, 2), f"a value of class {__name__}.Point"),
        (Meters(1.5), f"a value of class {__name__}.Meters"),
        (LaterDate(2024, 1, 1), f"a value of class {__name__}.LaterDate"),
        (Liar(), "a value of class decimal.Decimal"),  # the check is by identity, not name
        (Path("/etc"), "a value of class pathlib.PosixPath"),
        (collections.defaultdict(lambda: 0), f"the object {__name__}.<lambda>"),
        (print, "the object builtins.print"),
        (datetime.date, None),  # an allowed class itself, as a value
    ],
)
def test_an_unregistered_class_stops_its_batch_naming_class_stream_and_key(
    value: Any, named: str | None
) -> None:
    r, wire = router()
    r.emit(["fine"])
    r.flush()
    r.emit([value])
    if named is None:
        r.flush()
        assert received(wire.payloads)[-1] == [value]
        return
    r.emit(["also in the batch"])
    with pytest.raises(UserCodeError) as error:
        r.flush()
    message = str(error.value)
    for part in (
        "topology 'values', component 'src', task 1: a tuple emitted on stream 'default'",
        f"holds {named}, which tuple values may not hold",
        f"its batch of 2 tuples was not sent. List {named.split(' ')[-1]!r} in {REGISTER_KEY}",
        "Config.registerSerialization",
        f"{FALL_BACK_KEY}=true pickles any class",
    ):
        assert part in message, (part, message)
    assert received(wire.payloads) == [["fine"]]  # nothing of the refused batch went out


def test_the_first_emit_of_a_class_fails_even_after_batches_of_core_types() -> None:
    r, wire = router()
    for word in ("a", "b"):
        r.emit([word])
        r.flush()
    r.emit([Point(1, 2)])
    with pytest.raises(UserCodeError, match=r"Point"):
        r.flush()
    assert received(wire.payloads) == [["a"], ["b"]]


def test_a_registered_class_crosses_and_so_do_the_core_types_beside_it() -> None:
    values = policy_for({REGISTER_KEY: [f"{__name__}.Point"]}, {}, "topology 'values'")
    r, wire = router(values)
    rows = [[Point(1, 2)], [{"nested": [Point(3, 4), (1.5, None)]}], ["word"]]
    for row in rows:
        r.emit(row)
    r.flush()
    assert received(wire.payloads, values) == rows
    assert type(received(wire.payloads, values)[0][0]) is Point
    with pytest.raises(RefusedValueClass, match=r"Point is not allowed"):
        DEFAULT_VALUES.loads(tuple_pb2.TupleBatch.FromString(wire.payloads[0]).values)


def test_the_fall_back_pickles_and_unpickles_any_class() -> None:
    values = ValuePolicy(fall_back=True)
    r, wire = router(values)
    r.emit([Path("/etc")])
    r.flush()
    assert received(wire.payloads, values) == [[Path("/etc")]]


def test_registrations_come_from_the_topology_and_every_component() -> None:
    values = policy_for(
        {REGISTER_KEY: [f"{__name__}:Point"]},
        {"a": {REGISTER_KEY: [{f"{__name__}.Meters": "some.KryoSerializer"}]}, "b": {}},
        "topology 'values'",
    )
    assert {f"{__name__}.Point", f"{__name__}.Meters"} <= values.allowed
    assert values.loads(values.dumps([[Point(1, 2), Meters(2.0)]])) == [[(1, 2), 2.0]]


def test_a_registration_that_does_not_resolve_fails_unless_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config: dict[str, Any] = {REGISTER_KEY: ["nowhere.Gone", f"{__name__}.Point"]}
    with pytest.raises(ConfigurationError) as error:
        policy_for(config, {}, "topology 'values'")
    assert "topology 'values': topology.kryo.register entry 'nowhere.Gone' (from topology " in (
        str(error.value)
    )
    assert f"set {SKIP_MISSING_KEY}=true to skip it" in str(error.value)
    with caplog.at_level(logging.WARNING):
        values = policy_for({**config, SKIP_MISSING_KEY: True}, {}, "topology 'values'")
    assert "'nowhere.Gone' (from topology config) does not resolve, skipped" in caplog.text
    assert f"{__name__}.Point" in values.allowed and "nowhere.Gone" not in values.allowed


def test_a_component_s_own_fall_back_is_ignored_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        values = policy_for({}, {"loose": {FALL_BACK_KEY: True}}, "topology 'values'")
    assert not values.fall_back
    assert f"component 'loose''s own config sets {FALL_BACK_KEY}=True, which is ignored" in (
        caplog.text
    )


@pytest.mark.parametrize(
    "value",
    [["Point"], [""], ["a..b"], [3], [{"ok.Path": "x", 4: "y"}], "a.B", [["a.B"]]],
)
def test_a_registration_of_the_wrong_shape_is_refused_naming_the_entry(value: Any) -> None:
    with pytest.raises(ConfigurationError, match=rf"'{REGISTER_KEY}' \(from component 'c'\)"):
        registered_paths(value, "component 'c'")


def test_the_receiver_resolves_no_other_class_and_calls_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = tuple_pb2.TupleBatch(
        src_task=9, dest_task=2, stream="s", src_component="x", serializer=tuple_pb2.PICKLE
    )
    payload.values = evil_pickle(marker)
    runtime = receiver()
    assert InstanceRuntime._decode(runtime, payload.SerializeToString()) is None
    assert (runtime._refused, runtime._malformed) == (1, 0)
    assert not marker.exists()
    for crafted in (pickle.dumps(getattr), pickle.dumps(pickle.loads), pickle.dumps(Path)):
        with pytest.raises(RefusedValueClass, match="is not allowed in tuple values"):
            DEFAULT_VALUES.loads(crafted)
    # the control: the same batch, unpickled as before (the fall-back), runs its code
    runtime = receiver(ValuePolicy(fall_back=True))
    InstanceRuntime._decode(runtime, payload.SerializeToString())
    assert marker.exists()


class _DateWithState:
    """Pickles as a date with a state dict: unpickling it raises AttributeError."""

    def __reduce__(self) -> Any:
        return datetime.date, (2024, 1, 1), {"x": 1}


def test_a_batch_of_allowed_names_that_fails_to_build_is_malformed_not_fatal() -> None:
    payload = tuple_pb2.TupleBatch(serializer=tuple_pb2.PICKLE, src_component="x")
    payload.values = pickle.dumps([[_DateWithState()]])
    runtime = receiver()
    assert InstanceRuntime._decode(runtime, payload.SerializeToString()) is None
    assert (runtime._refused, runtime._malformed) == (0, 1)


def _global(module: str, name: str) -> bytes:
    """A protocol-4 pickle of the object ``module`` holds at the dotted ``name``."""
    text = b"\x80\x04"
    for part in (module.encode(), name.encode()):
        text += b"\x8c" + bytes([len(part)]) + part
    return text + b"\x93."


def test_a_crafted_pickle_can_name_only_the_exact_allowed_names() -> None:
    """A protocol-4 global is a dotted path walked with getattr: only exact allowed names
    resolve, so no attribute of an allowed class (a classmethod, ``__init__``) is reachable."""
    for module, name in [
        ("datetime", "datetime.fromtimestamp"),
        ("decimal", "Decimal.__init__"),
        ("collections", "OrderedDict.__class__"),
        ("builtins", "eval"),
    ]:
        text = _global(module, name)
        assert pickle.loads(text) is not None  # the control: plain pickle resolves it
        with pytest.raises(RefusedValueClass, match=rf"{module}.{name} is not allowed"):
            DEFAULT_VALUES.loads(text)
    assert DEFAULT_VALUES.loads(_global("datetime", "date")) is datetime.date


def test_a_zoneinfo_read_from_a_file_is_refused() -> None:
    with open("/usr/share/zoneinfo/UTC", "rb") as file:
        zone = zoneinfo.ZoneInfo.from_file(file)
    with pytest.raises(ValueClassError, match=r"read from a file\) of class zoneinfo.ZoneInfo"):
        DEFAULT_VALUES.dumps([[zone]])


_KEYS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.binary(max_size=8)
)
_LEAVES = st.one_of(
    _KEYS,
    st.floats(allow_nan=False),
    st.complex_numbers(allow_nan=False),
    st.datetimes(timezones=st.none() | st.timezones()),
    st.dates(),
    st.times(),
    st.timedeltas(),
    st.decimals(allow_nan=False),
    st.uuids(),
    st.fractions(),
    st.builds(bytearray, st.binary(max_size=8)),
)
"""(A bytearray in a batch marshal takes arrives as bytes: see
`test_the_core_types_marshal_refuses_not_cross_too`.)"""
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=4),
        st.frozensets(_KEYS, max_size=4),
        st.sets(_KEYS, max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=4).map(collections.OrderedDict),
        st.lists(inner, max_size=4).map(collections.deque),
    ),
    max_leaves=12,
)


def _typed(value: Any, marshaled: bool = False) -> Any:
    """``value`` with every container's type kept (== alone takes 1 == 1.0 == True, a tuple
    for no list); ``marshaled``: a bytearray as the bytes marshal makes of it."""
    if marshaled and isinstance(value, bytearray):
        return (bytes, bytes(value))
    if isinstance(value, dict):
        items = [(_typed(k, marshaled), _typed(v, marshaled)) for k, v in value.items()]
        return (type(value), items)
    if isinstance(value, list | tuple | collections.deque):
        return (type(value), [_typed(v, marshaled) for v in value])
    if isinstance(value, set | frozenset):
        return (type(value), sorted(repr(_typed(v, marshaled)) for v in value))
    return (type(value), value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_VALUES, min_size=1, max_size=1), min_size=1, max_size=5))
def test_any_value_of_the_allowed_types_round_trips_unchanged(rows: list[list[Any]]) -> None:
    r, wire = router()
    for row in rows:
        r.emit(row)
    r.flush()
    [batch] = [tuple_pb2.TupleBatch.FromString(p) for p in wire.payloads]
    marshaled = batch.serializer == tuple_pb2.MARSHAL
    assert _typed(received(wire.payloads)) == _typed(rows, marshaled)
