"""Spout, Bolt, Tuple, Stream, Grouping, CustomGrouping and TopologyContext behaviours."""

from __future__ import annotations

import logging
import pickle
import threading
from typing import Any

import pytest

from heron_core.api import (
    Bolt,
    CustomGrouping,
    GlobalStreamId,
    Grouping,
    Spout,
    Stream,
    TopologyContext,
    Tuple,
)
from heron_core.errors import ConfigurationError, HeronError
from heron_core.plan import GroupingKind


class Recorder:
    """A fake collector implementing both SpoutCollector and BoltCollector."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def emit(self, *args: Any) -> list[int] | None:
        self.calls.append(("emit", *args))
        return [4, 2] if args[-1] else None

    def ack(self, tup: Tuple) -> None:
        self.calls.append(("ack", tup))

    def fail(self, tup: Tuple) -> None:
        self.calls.append(("fail", tup))


class NumberSpout(Spout):
    outputs = ["n"]

    def __init__(self, start: int = 0) -> None:
        self.start = start


class EchoBolt(Bolt):
    outputs = ["n"]

    def process(self, tup: Tuple) -> None:
        self.emit(tup.values, anchors=[tup])
        self.ack(tup)


class ModGrouping(CustomGrouping):
    def __init__(self, modulus: int = 2) -> None:
        self.modulus = modulus
        self.targets: list[int] = []

    def prepare(
        self, context: TopologyContext, component: str, stream: str, target_tasks: list[int]
    ) -> None:
        self.targets = target_tasks

    def choose_tasks(self, values: list[Any]) -> list[int]:
        return [self.targets[values[0] % self.modulus]]


class LockedGrouping(ModGrouping):
    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


def test_emit_outside_a_running_topology_is_a_clear_error() -> None:
    with pytest.raises(HeronError, match="emit called outside a running topology"):
        NumberSpout().emit([1])
    with pytest.raises(HeronError, match="emit called outside a running topology"):
        EchoBolt().process(Tuple("1", "src", "default", 1, [1]))
    with pytest.raises(HeronError, match="ack called outside a running topology"):
        EchoBolt().ack(Tuple("1", "src", "default", 1, [1]))
    with pytest.raises(HeronError, match="fail called outside a running topology"):
        EchoBolt().fail(Tuple("1", "src", "default", 1, [1]))


def test_spout_emit_delegates_and_returns_task_ids() -> None:
    spout = NumberSpout()
    spout._collector = recorder = Recorder()
    assert spout.emit([1]) is None
    assert spout.emit([2], tup_id="m2", stream="s", direct_task=7, need_task_ids=True) == [4, 2]
    assert recorder.calls == [
        ("emit", [1], None, "default", None, False),
        ("emit", [2], "m2", "s", 7, True),
    ]


def test_bolt_emit_ack_fail_delegate_and_return_task_ids() -> None:
    bolt = EchoBolt()
    bolt._collector = recorder = Recorder()
    tup = Tuple("9", "src", "default", 3, [5])
    bolt.process(tup)
    assert bolt.emit([1], stream="s", direct_task=2, need_task_ids=True) == [4, 2]
    bolt.fail(tup)
    assert recorder.calls == [
        ("emit", [5], "default", [tup], None, False),
        ("ack", tup),
        ("emit", [1], "s", None, 2, True),
        ("fail", tup),
    ]


def test_required_hooks_and_no_op_hooks() -> None:
    spout, bolt = Spout(), Bolt()
    with pytest.raises(NotImplementedError, match="Spout must implement next_tuple"):
        spout.next_tuple()
    with pytest.raises(NotImplementedError, match="Bolt must implement process"):
        bolt.process(Tuple("1", "a", "default", 1, []))
    bolt._collector = recorder = Recorder()
    for hook in (spout.activate, spout.deactivate, spout.close, bolt.close):
        hook()
    spout.ack("id")
    spout.fail("id")
    bolt.process_tick(Tuple("__tick", "__system", "__tick", None, None))
    assert recorder.calls == []  # no hook acks, fails or emits on its own


def test_logger_is_per_class_and_survives_pickling(caplog: pytest.LogCaptureFixture) -> None:
    spout = pickle.loads(pickle.dumps(NumberSpout(3)))
    assert "logger" not in vars(spout)
    assert spout.logger.name == "heron.user.NumberSpout"
    assert EchoBolt.logger.name == "heron.user.EchoBolt"
    with caplog.at_level(5, logger="heron.user"):
        spout.log("hello")
        spout.log("careful", level="warn")
        spout.log("detail", level="TRACE")
        spout.log(12, level=logging.ERROR)
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("heron.user.NumberSpout", logging.INFO, "hello"),
        ("heron.user.NumberSpout", logging.WARNING, "careful"),
        ("heron.user.NumberSpout", 5, "detail"),
        ("heron.user.NumberSpout", logging.ERROR, "12"),
    ]
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        spout.log("x", level="loud")


def test_a_class_may_bring_its_own_logger() -> None:
    class Custom(Spout):
        logger = logging.getLogger("mine")

    assert Custom.logger.name == "mine"


def test_is_tick() -> None:
    assert Bolt.is_tick(Tuple("__tick", "__system", "__tick", None, None))
    assert not Bolt.is_tick(Tuple("1", "spout", "__tick", 1, []))
    assert not Bolt.is_tick(Tuple("1", "__system", "default", 1, []))


def test_tuple_behaves_like_heronpy_namedtuple() -> None:
    tup = Tuple("7", "words", "default", 3, ["hello", 1])
    id_, component, stream, task, values = tup
    assert (id_, component, stream, task, values) == ("7", "words", "default", 3, ["hello", 1])
    assert tup[4] == ["hello", 1] and tup[-1] is values and tup[:2] == ("7", "words")
    assert len(tup) == 5 and list(tup) == ["7", "words", "default", 3, ["hello", 1]]
    assert Tuple._fields == ("id", "component", "stream", "task", "values")
    assert tup._roots == () and tup._ackval == 0
    assert repr(tup) == (
        "Tuple(id='7', component='words', stream='default', task=3, values=['hello', 1])"
    )
    assert tup == Tuple("7", "words", "default", 3, ["hello", 1])
    assert tup != Tuple("7", "words", "default", 3, ["bye", 1])
    assert len({tup, Tuple("7", "words", "default", 3, ["hello", 1])}) == 1
    copy = pickle.loads(pickle.dumps(tup))
    assert copy == tup and copy._roots == ()
    with pytest.raises(AttributeError):
        tup.extra = 1  # type: ignore[attr-defined]


def test_stream_declarations() -> None:
    stream = Stream(["a", "b"], name="pairs", direct=True)
    assert (stream.stream_id, stream.fields, stream.direct) == ("pairs", ("a", "b"), True)
    assert Stream().fields == () and Stream().stream_id == "default"
    same = Stream(("a", "b"), "pairs", True)
    assert stream == same and hash(stream) == hash(same)
    assert stream != Stream(["a", "b"], "pairs")
    with pytest.raises(TypeError, match="got the str 'ab'"):
        Stream("ab")
    with pytest.raises(TypeError, match="must be str"):
        Stream([1])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="non-empty str"):
        Stream(["a"], name="")
    with pytest.raises(TypeError, match="must be a bool"):
        Stream(["a"], direct=1)  # type: ignore[arg-type]


def test_groupings_compare_by_value() -> None:
    assert Grouping.GLOBAL is Grouping.LOWEST
    assert Grouping.LOCAL_OR_SHUFFLE != Grouping.SHUFFLE
    assert Grouping.LOCAL_OR_SHUFFLE.kind is GroupingKind.LOCAL_OR_SHUFFLE
    assert Grouping.fields("a", "b") == Grouping.fields(["a", "b"])
    assert hash(Grouping.fields("a")) == hash(Grouping.fields(["a"]))
    assert Grouping.fields("a") != Grouping.partial_key("a")
    assert Grouping.partial_key("a").grouping_fields == ("a",)
    assert {Grouping.SHUFFLE, Grouping(GroupingKind.SHUFFLE)} == {Grouping.SHUFFLE}
    assert Grouping.custom(ModGrouping(3)) == Grouping.custom(ModGrouping(3))
    assert [
        repr(g) for g in (Grouping.ALL, Grouping.fields("a", "b"), Grouping.partial_key("k"))
    ] == [
        "Grouping.ALL",
        "Grouping.fields('a', 'b')",
        "Grouping.partial_key('k')",
    ]
    assert repr(Grouping.custom(ModGrouping())).startswith("Grouping.custom(<")
    with pytest.raises(ValueError, match="at least one field"):
        Grouping.fields()
    with pytest.raises(TypeError, match="must be str"):
        Grouping.fields("a", 1)  # type: ignore[arg-type]


def test_custom_grouping_is_pickled_by_instance_or_path() -> None:
    grouping = Grouping.custom(ModGrouping(3))
    assert grouping.kind is GroupingKind.CUSTOM
    restored = pickle.loads(grouping.custom_object)
    assert isinstance(restored, ModGrouping) and restored.modulus == 3
    restored.prepare(None, "sink", "default", [10, 11, 12])  # type: ignore[arg-type]
    assert restored.choose_tasks([4]) == [11]
    by_path = Grouping.custom(f"{__name__}:ModGrouping")
    assert pickle.loads(by_path.custom_object).modulus == 2
    with pytest.raises(TypeError, match="is not a CustomGrouping subclass"):
        Grouping.custom(f"{__name__}:EchoBolt")
    with pytest.raises(ConfigurationError, match="no attribute"):
        Grouping.custom(f"{__name__}:Missing")
    with pytest.raises(TypeError, match="expected a CustomGrouping"):
        Grouping.custom(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cannot be pickled") as info:
        Grouping.custom(LockedGrouping())
    assert info.value.__cause__ is not None


class FakeContext(TopologyContext):
    def get_task_id(self) -> int:
        return 3

    def get_component_id(self) -> str:
        return "sink"

    def get_cluster_config(self) -> dict[str, Any]:
        return {}

    def get_topology_name(self) -> str:
        return "t"

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        return {GlobalStreamId("src"): Grouping.SHUFFLE} if component_id == "sink" else None

    def get_component_tasks(self, component_id: str) -> list[int]:
        return [3]

    def get_topology_id(self) -> str:
        return "t-1"

    def get_component_index(self) -> int:
        return 0

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        return ()

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        return {}

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        pass


def test_topology_context_interface() -> None:
    with pytest.raises(TypeError, match="abstract"):
        TopologyContext()  # type: ignore[abstract]
    context = FakeContext()
    assert context.get_this_sources() == {GlobalStreamId("src", "default"): Grouping.SHUFFLE}
    with pytest.raises(NotImplementedError, match="task hooks are not supported by FakeContext"):
        context.add_task_hook(object())
