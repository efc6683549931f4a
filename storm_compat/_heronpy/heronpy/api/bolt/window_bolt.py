"""heronpy's ``bolt.window_bolt``: ``SlidingWindowBolt``, ``TumblingWindowBolt`` and
``WindowContext``.

A windowed bolt implements ``processWindow(window_info, tuples)``; the bolt keeps the
tuples and runs on tick tuples, whose period it sets in ``initialize`` (the config dict it
receives is the one the runtime reads the tick period from after ``initialize``). Times are
whole seconds of the bolt's clock (``time.time`` unless a test sets ``_clock``).

- ``SlidingWindowBolt``: component config ``slidingwindowbolt_duration_secs`` (required) and
  ``slidingwindowbolt_slideinterval_secs`` (default: the duration; at most the duration).
  ``process`` keeps ``(tuple, now)`` and then acks (expires) the tuples older than the
  duration (``now - duration > t``). Every slide interval, ``processWindow`` gets
  ``WindowContext(now - duration, now)`` and every tuple still kept, then the expired ones
  are acked.
- ``TumblingWindowBolt``: ``tumblingwindowbolt_duration_secs`` (required). Every duration,
  ``processWindow`` gets ``WindowContext(now - duration, now)`` and the tuples received
  since the last one, which are then acked and dropped.

Both are `StatefulComponent` s: under ``EFFECTIVELY_ONCE`` the kept tuples are the
``'tuples'`` key of the state (a copy is put there before each checkpoint), and ``initialize``
takes them back from the state given to ``init_state``, at start and after a rollback
(``restart_from_state``: ``close``, ``init_state``, ``initialize``). In the other modes the
state is not used.

>>> class Sizes(TumblingWindowBolt):
...     def processWindow(self, window_info, tuples):
...         print(window_info, [t.values[0] for t in tuples])
>>> bolt = Sizes()
>>> bolt._clock = lambda: 100.0
>>> config = {TumblingWindowBolt.WINDOW_DURATION_SECS: 5}
>>> bolt.initialize(config, None)
>>> config["topology.tick.tuple.freq.secs"]
'5'
>>> class Collector:
...     def ack(self, tup):
...         print("ack", tup.id)
>>> bolt._collector = Collector()
>>> bolt.process(Tuple("1", "word_spout", "default", 3, ["heron"]))
>>> bolt.process_tick(Tuple("__tick", "__system", "__tick", None, None))
WindowContext(start=95, end=100) ['heron']
ack 1
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

from heron_core.api import Tuple
from heron_core.api.constants import TOPOLOGY_TICK_TUPLE_FREQ_SECS
from heron_core.errors import ConfigurationError
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.state.state import State
from heronpy.api.state.stateful_component import StatefulComponent

__all__ = ["SlidingWindowBolt", "TumblingWindowBolt", "WindowContext"]


class WindowContext(NamedTuple):
    """The window ``processWindow`` is called for: ``start`` and ``end``, whole seconds."""

    start: int
    end: int


class _WindowBolt(Bolt, StatefulComponent):
    """What both windowed bolts share: the clock, the kept tuples and their state."""

    _clock: Callable[[], float] = time.time
    """The time source (seconds); a test sets it on the instance."""

    current_tuples: deque[Any]
    saved_state: State

    def init_state(self, stateful_state: State) -> None:
        """Keep the checkpointed state (its ``'tuples'`` are restored by ``initialize``)."""
        self.saved_state = stateful_state

    def pre_save(self, checkpoint_id: Any) -> None:
        """Put a copy of the kept tuples into the state before a checkpoint."""
        self.saved_state.put("tuples", deque(self.current_tuples))

    def processWindow(self, window_info: WindowContext, tuples: list[Tuple]) -> None:
        """Handle one window (heronpy's hook; must be implemented)."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement processWindow()")

    def _now(self) -> int:
        return int(self._clock())

    def _seconds(self, config: dict[str, Any], key: str, context: Any) -> int:
        where = _where(type(self), context)
        if key not in config:
            raise ConfigurationError(f"{where}: the component config needs {key!r} (seconds)")
        value = config[key]
        try:
            seconds = int(value)
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"{where}: {key!r} must be a whole number of seconds, got {value!r}"
            ) from None
        if seconds <= 0:
            raise ConfigurationError(f"{where}: {key!r} must be positive, got {value!r}")
        return seconds

    def _start(self, config: dict[str, Any], tick_secs: int) -> None:
        # the runtime reads the tick period from this dict once initialize returns
        config[TOPOLOGY_TICK_TUPLE_FREQ_SECS] = str(tick_secs)
        saved = getattr(self, "saved_state", None)
        tuples = None if saved is None else saved.get("tuples")
        self.current_tuples = deque() if tuples is None else deque(tuples)


class SlidingWindowBolt(_WindowBolt):
    """A bolt that sees, every slide interval, the tuples of the last window duration."""

    WINDOW_DURATION_SECS = "slidingwindowbolt_duration_secs"
    WINDOW_SLIDEINTERVAL_SECS = "slidingwindowbolt_slideinterval_secs"

    window_duration: int
    slide_interval: int

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Read the duration and slide interval and set the tick period to the slide.

        Raises:
            ConfigurationError: the duration is missing, a value is not a positive whole
                number, or the slide interval exceeds the duration.
        """
        self.window_duration = self._seconds(config, self.WINDOW_DURATION_SECS, context)
        if self.WINDOW_SLIDEINTERVAL_SECS in config:
            self.slide_interval = self._seconds(config, self.WINDOW_SLIDEINTERVAL_SECS, context)
        else:
            self.slide_interval = self.window_duration
        if self.slide_interval > self.window_duration:
            raise ConfigurationError(
                f"{_where(type(self), context)}: {self.WINDOW_SLIDEINTERVAL_SECS!r} "
                f"({self.slide_interval}) must be <= {self.WINDOW_DURATION_SECS!r} "
                f"({self.window_duration})"
            )
        self._start(config, self.slide_interval)

    def process(self, tup: Tuple) -> None:
        """Keep ``tup`` with the time it came, then expire what is older than the window."""
        now = self._now()
        self.current_tuples.append((tup, now))
        self._expire(now)

    def _expire(self, now: int) -> None:
        kept = self.current_tuples
        while kept and now - self.window_duration > kept[0][1]:
            tup, _ = kept.popleft()
            self.ack(tup)

    def process_tick(self, tup: Tuple) -> None:
        """Call ``processWindow`` with the kept tuples, then expire the old ones."""
        now = self._now()
        window = WindowContext(now - self.window_duration, now)
        self.processWindow(window, [kept for kept, _ in self.current_tuples])
        self._expire(now)


class TumblingWindowBolt(_WindowBolt):
    """A bolt that sees, every window duration, the tuples received in it."""

    WINDOW_DURATION_SECS = "tumblingwindowbolt_duration_secs"

    window_duration: int

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Read the duration and set the tick period to it.

        Raises:
            ConfigurationError: the duration is missing or not a positive whole number.
        """
        self.window_duration = self._seconds(config, self.WINDOW_DURATION_SECS, context)
        self._start(config, self.window_duration)

    def process(self, tup: Tuple) -> None:
        """Keep ``tup`` for the current window."""
        self.current_tuples.append(tup)

    def process_tick(self, tup: Tuple) -> None:
        """Call ``processWindow`` with the window's tuples, then ack and drop them."""
        now = self._now()
        window = WindowContext(now - self.window_duration, now)
        tuples = list(self.current_tuples)
        self.processWindow(window, tuples)
        for kept in tuples:
            self.ack(kept)
        self.current_tuples.clear()


def _where(cls: type, context: Any) -> str:
    component = getattr(context, "get_component_id", None)
    if component is None:
        return cls.__qualname__
    return f"component {component()!r} ({cls.__qualname__})"
