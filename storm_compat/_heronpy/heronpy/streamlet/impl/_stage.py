"""What every Streamlet stage's spout or bolt shares: its stage name, the user callable it
carries (pickled by value, see `_functions`), emitting one element on ``output``, and time
windows on tick tuples.

A stage's component is built once, when the topology is built, holding its user callable as
bytes; each task unpickles the component and then the callable in ``initialize``, so a
callable that does not load fails there, naming the stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from heron_core.api import Bolt, Spout, TopologyContext, Tuple
from heron_core.api.constants import TOPOLOGY_TICK_TUPLE_FREQ_SECS
from heron_core.errors import UserCodeError
from heronpy.streamlet.impl import _functions
from heronpy.streamlet.impl._window import TimeWindows
from heronpy.streamlet.impl.streamletboltbase import OUTPUT_STREAM, StreamletBoltBase
from heronpy.streamlet.impl.streamletspoutbase import StreamletSpoutBase
from heronpy.streamlet.window import Window

__all__ = ["StageBolt", "StageSpout", "WindowedStageBolt", "pair"]


class _Stage:
    """The stage name and the pickled user callable of a spout or bolt."""

    def _set_payload(self, stage: str, what: str, payload: object) -> None:
        self._stage = stage
        self._what = what
        self._payload = _functions.dumps(payload, f"{what} of stage {stage!r}")

    def _load_payload(self) -> Any:
        try:
            return _functions.loads(self._payload, f"the {self._what} of stage {self._stage!r}")
        except Exception as exc:
            raise UserCodeError(
                f"stage {self._stage!r}: its {self._what} cannot be loaded: {exc}"
            ) from exc


class StageSpout(StreamletSpoutBase, _Stage, Spout):
    """A source stage: emits each element alone on ``output`` (unreliably, as heronpy does)."""

    def emit_element(self, value: Any) -> None:
        """Emit ``value`` as one element."""
        self.emit([value], stream=OUTPUT_STREAM)


class StageBolt(StreamletBoltBase, _Stage, Bolt):
    """A stage that processes elements: ``initialize`` loads its callable (if any) as
    ``self.function``; each input is acked once handled."""

    function: Any = None

    def __init__(self, stage: str, what: str = "", payload: object = None) -> None:
        self._stage = stage
        self._what = what
        self._payload = b""
        if what:
            self._set_payload(stage, what, payload)

    def initialize(self, config: dict[str, Any], context: TopologyContext) -> None:
        if self._payload:
            self.function = self._load_payload()

    def emit_element(self, value: Any) -> None:
        """Emit ``value`` as one element (unanchored, as heronpy's stages emit)."""
        self.emit([value], stream=OUTPUT_STREAM)


def pair(element: Any, stage: str) -> tuple[Any, Any]:
    """``element`` as a ``(key, value)`` pair.

    Raises:
        UserCodeError: it is not a sequence of two items; the message names ``stage``.
    """
    try:
        key, value = element
    except (TypeError, ValueError):
        raise UserCodeError(
            f"stage {stage!r} takes (key, value) pairs, got {type(element).__name__} {element!r}"
        ) from None
    return key, value


class WindowedStageBolt(StageBolt):
    """A stage over time windows: inputs are buffered; every slide interval (a tick tuple,
    ``topology.tick.tuple.freq.secs`` set to the slide) the window ending now is handed to
    `process_window` if it holds any element, and the inputs that leave their last window
    are acked.

    The clock is ``self.clock`` (``time.time``; a test sets another). Window times are whole
    seconds: ``Window(int(now) - duration, int(now))``.
    """

    clock: Callable[[], float] = time.time

    def __init__(self, stage: str, what: str, payload: object, duration: int, slide: int) -> None:
        super().__init__(stage, what, payload)
        self.duration = duration
        self.slide = slide

    def initialize(self, config: dict[str, Any], context: TopologyContext) -> None:
        super().initialize(config, context)
        # heronpy's windowed bolts set the tick frequency here; the plan carries it too
        config[TOPOLOGY_TICK_TUPLE_FREQ_SECS] = str(self.slide)
        self._windows: TimeWindows[Tuple] = TimeWindows(self.duration, self.slide)

    def process(self, tup: Tuple) -> None:
        self._windows.add(tup, self.clock())

    def process_tick(self, tup: Tuple) -> None:
        now = self.clock()
        tuples, expired = self._windows.slide(now)
        if tuples:
            end = int(now)
            self.process_window(Window(end - self.duration, end), tuples)
        for done in expired:
            self.ack(done)

    def process_window(self, window: Window, tuples: list[Tuple]) -> None:
        """Compute the window's result from its input tuples (in arrival order) and emit it."""
        raise NotImplementedError
