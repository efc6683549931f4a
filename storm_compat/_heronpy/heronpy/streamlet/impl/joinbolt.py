"""The ``join`` stage: inner and outer joins over time windows (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heron_core.api import Grouping, Tuple
from heron_core.api.constants import TOPOLOGY_TICK_TUPLE_FREQ_SECS
from heronpy.streamlet.impl._grouping import KeyGrouping
from heronpy.streamlet.impl._stage import WindowedStageBolt, pair
from heronpy.streamlet.keyedwindow import KeyedWindow
from heronpy.streamlet.streamlet import Streamlet
from heronpy.streamlet.window import Window
from heronpy.streamlet.windowconfig import WindowConfig

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["JoinBolt", "JoinStreamlet"]


class JoinBolt(WindowedStageBolt):
    """Joins the ``(key, value)`` elements of a window from the left and the right stage.

    For each key (in order of first arrival) with values on both sides, it emits
    ``(KeyedWindow(key, window), function(left, right))`` for every left value and every
    right value (arrival order). The outer joins also join a key's values on one side alone
    with None: ``function(left, None)`` (OUTER_LEFT, OUTER) or ``function(None, right)``
    (OUTER_RIGHT, OUTER).
    """

    OUTER_LEFT = 1
    INNER = 2
    OUTER_RIGHT = 3
    OUTER = 4

    def __init__(
        self,
        stage: str,
        function: Callable[[Any, Any], Any],
        duration: int,
        slide: int,
        join_type: int,
        right_component: str,
    ) -> None:
        super().__init__(stage, "join function", function, duration, slide)
        self.join_type = join_type
        self.right_component = right_component

    def process_window(self, window: Window, tuples: list[Tuple]) -> None:
        sides: dict[Any, tuple[list[Any], list[Any]]] = {}
        for tup in tuples:
            key, value = pair(tup.values[0], self._stage)
            left, right = sides.setdefault(key, ([], []))
            (right if tup.component == self.right_component else left).append(value)
        keep_left = self.join_type in (JoinBolt.OUTER_LEFT, JoinBolt.OUTER)
        keep_right = self.join_type in (JoinBolt.OUTER_RIGHT, JoinBolt.OUTER)
        function = self.function
        for key, (left, right) in sides.items():
            keyed = KeyedWindow(key, window)
            if left and right:
                for left_value in left:
                    for right_value in right:
                        self.emit_element((keyed, function(left_value, right_value)))
            elif left and keep_left:
                for left_value in left:
                    self.emit_element((keyed, function(left_value, None)))
            elif right and keep_right:
                for right_value in right:
                    self.emit_element((keyed, function(None, right_value)))


class JoinStreamlet(Streamlet):
    """The Streamlet of a ``join`` stage: both sides grouped by key, so a key's values meet
    in one task; it has the left side's partitions and is built once both sides are."""

    _prefix = "join"

    def __init__(
        self,
        join_type: int,
        window_config: WindowConfig,
        join_function: Callable[[Any, Any], Any],
        left: Streamlet,
        right: Streamlet,
    ) -> None:
        if join_type not in (
            JoinBolt.INNER,
            JoinBolt.OUTER_LEFT,
            JoinBolt.OUTER_RIGHT,
            JoinBolt.OUTER,
        ):
            raise ValueError(f"unknown join type {join_type!r}")
        super().__init__((left, right))
        self._join_type = join_type
        self._window_config = window_config
        self._join_function = join_function
        self._left = left
        self._right = right

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        window = self._window_config
        bolt = JoinBolt(
            name,
            self._join_function,
            window.duration_secs,
            window.slide_secs,
            self._join_type,
            self._right._stage_name(),
        )
        bldr.add_bolt(
            name,
            bolt,
            par=self.get_num_partitions(),
            inputs=self._inputs(Grouping.custom(KeyGrouping(name))),
            config={TOPOLOGY_TICK_TUPLE_FREQ_SECS: window.slide_secs},
        )
