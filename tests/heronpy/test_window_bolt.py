"""heronpy's windowed bolts on an injected clock: what each window sees and when tuples are
acked (heronpy 0.20.5's semantics)."""

from __future__ import annotations

from typing import Any

import pytest

from heron_core.api import Tuple
from heron_core.errors import ConfigurationError
from heronpy.api.bolt.window_bolt import (
    SlidingWindowBolt,
    TumblingWindowBolt,
    WindowContext,
)
from heronpy.api.state.state import HashMapState

TICK = Tuple("__tick", "__system", "__tick", None, None)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Acks:
    def __init__(self) -> None:
        self.acked: list[str] = []

    def ack(self, tup: Tuple) -> None:
        self.acked.append(tup.id)


def _tup(n: int) -> Tuple:
    return Tuple(str(n), "word_spout", "default", 3, [f"w{n}"])


def _started(bolt: Any, config: dict[str, Any], clock: Clock) -> tuple[Any, Acks]:
    bolt._clock = clock
    acks = Acks()
    bolt._collector = acks
    bolt.initialize(config, None)
    return bolt, acks


class Sliding(SlidingWindowBolt):
    def initialize(self, config: dict[str, Any], context: Any) -> None:
        super().initialize(config, context)
        self.windows: list[tuple[WindowContext, list[str]]] = []

    def processWindow(self, window_info: WindowContext, tuples: list[Tuple]) -> None:
        self.windows.append((window_info, [t.id for t in tuples]))


class Tumbling(TumblingWindowBolt):
    def initialize(self, config: dict[str, Any], context: Any) -> None:
        super().initialize(config, context)
        self.windows: list[tuple[WindowContext, list[str]]] = []

    def processWindow(self, window_info: WindowContext, tuples: list[Tuple]) -> None:
        self.windows.append((window_info, [t.id for t in tuples]))


def test_sliding_window_sees_the_kept_tuples_then_acks_those_older_than_the_duration() -> None:
    clock = Clock(100.9)
    config = {"slidingwindowbolt_duration_secs": "10", "slidingwindowbolt_slideinterval_secs": 2}
    bolt, acks = _started(Sliding(), config, clock)
    assert config["topology.tick.tuple.freq.secs"] == "2"  # ticks every slide interval
    bolt.process(_tup(1))  # kept at 100 (whole seconds)
    clock.now = 105
    bolt.process(_tup(2))
    clock.now = 110  # 110 - 10 > 100 is false: tuple 1 is still in the window
    bolt.process(_tup(3))
    assert acks.acked == []
    clock.now = 111
    bolt.process_tick(TICK)  # the window gets every kept tuple, then 1 expires (111-10 > 100)
    assert bolt.windows == [(WindowContext(101, 111), ["1", "2", "3"])]
    assert acks.acked == ["1"]
    clock.now = 116
    bolt.process(_tup(4))  # expiring also happens on process: 116-10 > 105
    assert acks.acked == ["1", "2"]
    bolt.process_tick(TICK)
    assert bolt.windows[-1] == (WindowContext(106, 116), ["3", "4"])


def test_sliding_window_slide_defaults_to_the_duration_and_may_not_exceed_it() -> None:
    config: dict[str, Any] = {"slidingwindowbolt_duration_secs": 5}
    bolt, _ = _started(Sliding(), config, Clock(0))
    assert (bolt.window_duration, bolt.slide_interval) == (5, 5)
    assert config["topology.tick.tuple.freq.secs"] == "5"
    too_long = {"slidingwindowbolt_duration_secs": 5, "slidingwindowbolt_slideinterval_secs": 6}
    with pytest.raises(ConfigurationError, match="must be <= 'slidingwindowbolt_duration_secs'"):
        _started(Sliding(), too_long, Clock(0))


def test_a_window_bolt_without_its_duration_names_the_key() -> None:
    with pytest.raises(ConfigurationError, match="needs 'slidingwindowbolt_duration_secs'"):
        _started(Sliding(), {}, Clock(0))
    with pytest.raises(ConfigurationError, match="'tumblingwindowbolt_duration_secs' must be a"):
        _started(Tumbling(), {"tumblingwindowbolt_duration_secs": "soon"}, Clock(0))


def test_tumbling_window_sees_its_tuples_once_then_acks_and_drops_them() -> None:
    clock = Clock(50)
    config: dict[str, Any] = {"tumblingwindowbolt_duration_secs": 3}
    bolt, acks = _started(Tumbling(), config, clock)
    assert config["topology.tick.tuple.freq.secs"] == "3"
    bolt.process(_tup(1))
    bolt.process(_tup(2))
    assert acks.acked == []
    clock.now = 53
    bolt.process_tick(TICK)
    assert bolt.windows == [(WindowContext(50, 53), ["1", "2"])]
    assert acks.acked == ["1", "2"]
    clock.now = 56
    bolt.process(_tup(3))
    bolt.process_tick(TICK)
    assert bolt.windows[-1] == (WindowContext(53, 56), ["3"])


def test_window_bolts_keep_their_tuples_in_the_state_they_were_given() -> None:
    # Only EFFECTIVELY_ONCE calls init_state/pre_save; the hooks behave as heronpy's: the
    # tuples are the state's 'tuples' (compat_tests/test_heronpy_state.py: the whole contract).
    state = HashMapState()
    bolt = Tumbling()
    bolt.init_state(state)
    bolt, _ = _started(bolt, {"tumblingwindowbolt_duration_secs": 3}, Clock(0))
    bolt.process(_tup(1))
    bolt.pre_save(7)
    restored = Tumbling()
    restored.init_state(state)
    restored, _ = _started(restored, {"tumblingwindowbolt_duration_secs": 3}, Clock(0))
    assert [t.id for t in restored.current_tuples] == ["1"]
