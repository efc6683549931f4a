"""heronpy's state on the kernel's effectively-once contract, driven by hand: heronpy's
``State``/``StatefulComponent`` are the kernel's (so the instance recognises heronpy's
components), the windowed bolts get their tuples back through ``init_state`` and
``restart_from_state``, and a Streamlet generator or transform sees the task's state in its
context."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import heron_core.api as kernel
from heron_core.api import Tuple
from heronpy.api.bolt.window_bolt import SlidingWindowBolt, TumblingWindowBolt, WindowContext
from heronpy.api.state.state import HashMapState, State
from heronpy.api.state.stateful_component import StatefulComponent
from heronpy.streamlet.context import Context
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.impl.generatorspout import GeneratorSpout
from heronpy.streamlet.impl.transformbolt import TransformBolt
from heronpy.streamlet.transformoperator import TransformOperator

TICK = Tuple("__tick", "__system", "__tick", None, None)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Collector:
    """The kernel's bolt and spout collector: records acks and emitted values."""

    def __init__(self) -> None:
        self.acked: list[str] = []
        self.emitted: list[Any] = []

    def ack(self, tup: Tuple) -> None:
        self.acked.append(tup.id)

    def emit(self, values: list[Any], *args: Any) -> None:
        self.emitted.append(values[0])


class Windows:
    """Records what ``processWindow`` sees and how often ``close`` ran."""

    closed = 0

    def processWindow(self, window_info: WindowContext, tuples: list[Tuple]) -> None:
        self.seen: tuple[WindowContext, list[str]] = (window_info, [t.id for t in tuples])

    def close(self) -> None:
        self.closed += 1


class Sliding(Windows, SlidingWindowBolt):
    pass


class Tumbling(Windows, TumblingWindowBolt):
    pass


def _tup(n: int) -> Tuple:
    return Tuple(str(n), "words", "default", 3, [f"w{n}"])


def _saved(state: State) -> Any:
    """What the runtime stores and later gives back: the state, pickled and unpickled."""
    return pickle.loads(pickle.dumps(state))


def test_heronpys_state_classes_are_the_kernels() -> None:
    assert (State, HashMapState, StatefulComponent) == (
        kernel.State,
        kernel.HashMapState,
        kernel.StatefulComponent,
    )
    for stateful in (SlidingWindowBolt, TumblingWindowBolt, GeneratorSpout, TransformBolt):
        assert issubclass(stateful, kernel.StatefulComponent)
    assert HashMapState().get("missing", 0) == 0


@pytest.mark.parametrize(
    ("bolt_class", "config"),
    [
        (Sliding, {SlidingWindowBolt.WINDOW_DURATION_SECS: 10}),
        (Tumbling, {TumblingWindowBolt.WINDOW_DURATION_SECS: 10}),
    ],
)
def test_window_bolts_get_their_tuples_back_through_the_contract(
    bolt_class: type[Windows], config: dict[str, Any]
) -> None:
    bolt: Any = bolt_class()
    bolt._clock = clock = Clock(100)
    bolt._collector = Collector()
    first = HashMapState()
    bolt.init_state(first)
    bolt.initialize(dict(config), None)
    bolt.process(_tup(1))
    bolt.process(_tup(2))
    bolt.pre_save("1700000000000-000001")
    at_1 = _saved(first)
    bolt.process(_tup(3))  # after the checkpoint: not in it
    assert len(first.get("tuples")) == 2  # a copy was saved, not the live buffer

    bolt.restart_from_state(at_1, dict(config), None)  # the kernel's default
    assert bolt.closed == 1
    clock.now = 105
    bolt.process_tick(TICK)
    assert bolt.seen == (WindowContext(95, 105), ["1", "2"])

    # a new process of the same task (started from the checkpoint) sees them too
    again: Any = bolt_class()
    again._clock = Clock(101)
    again._collector = Collector()
    again.init_state(_saved(at_1))
    again.initialize(dict(config), None)
    again.process(_tup(4))
    again.process_tick(TICK)
    assert again.seen == (WindowContext(91, 101), ["1", "2", "4"])


def test_a_window_bolt_without_a_checkpoint_starts_empty() -> None:
    bolt: Any = Tumbling()
    bolt._clock = Clock(100)
    bolt._collector = Collector()
    bolt.init_state(HashMapState())
    bolt.initialize({TumblingWindowBolt.WINDOW_DURATION_SECS: 5}, None)
    bolt.process_tick(TICK)
    assert bolt.seen == (WindowContext(95, 100), [])


class Counter(Generator):
    """Counts in its state, so a rollback resumes from the checkpointed count."""

    def setup(self, context: Context) -> None:
        self.state = context.get_state()

    def get(self) -> Any:
        if self.state is None:
            return "stateless"
        n = self.state.get("n", 0) + 1
        self.state.put("n", n)
        return n


class Remember(TransformOperator):
    def setup(self, context: Context) -> None:
        self.context = context

    def transform(self, tup: Tuple) -> None:
        state = self.context.get_state()
        state.put("last", tup.values[0])
        self.context.emit(len(state))


def test_a_generator_counts_in_its_task_state_across_a_rollback() -> None:
    spout = pickle.loads(pickle.dumps(GeneratorSpout("generator1", Counter())))
    collector = Collector()
    spout._collector = collector
    first = HashMapState()
    spout.init_state(first)
    spout.initialize({}, None)
    spout.next_tuple()
    spout.next_tuple()
    spout.pre_save("1700000000000-000001")
    at_1 = _saved(first)
    spout.next_tuple()
    spout.restart_from_state(at_1, {}, None)
    spout.next_tuple()
    assert collector.emitted == [1, 2, 3, 3]


def test_without_effectively_once_the_context_state_is_none() -> None:
    spout = GeneratorSpout("generator1", Counter())
    spout._collector = collector = Collector()
    spout.initialize({}, None)
    spout.next_tuple()
    assert collector.emitted == ["stateless"]


def test_a_transform_operator_sees_the_state_given_to_init_state() -> None:
    bolt = TransformBolt("transform1", "transform operator", Remember())
    bolt._collector = collector = Collector()
    state = HashMapState({"seen": True})
    bolt.init_state(state)
    bolt.initialize({}, None)  # type: ignore[arg-type]
    bolt.process(_tup(1))
    assert state.get("last") == "w1"
    assert collector.emitted == [2]
