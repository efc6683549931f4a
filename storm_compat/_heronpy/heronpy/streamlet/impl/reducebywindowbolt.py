"""The ``reducebywindow`` stage (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heron_core.api import Grouping, Tuple
from heron_core.api.constants import TOPOLOGY_TICK_TUPLE_FREQ_SECS
from heronpy.streamlet.impl._stage import WindowedStageBolt
from heronpy.streamlet.streamlet import Streamlet
from heronpy.streamlet.window import Window
from heronpy.streamlet.windowconfig import WindowConfig

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["ReduceByWindowBolt", "ReduceByWindowStreamlet"]


class ReduceByWindowBolt(WindowedStageBolt):
    """Per window, emits ``(Window, result)``: ``result`` starts as None and becomes
    ``function(result, e)`` for each element in arrival order (heronpy's fold)."""

    def process_window(self, window: Window, tuples: list[Tuple]) -> None:
        result = None
        for tup in tuples:
            result = self.function(result, tup.values[0])
        self.emit_element((window, result))


class ReduceByWindowStreamlet(Streamlet):
    """The Streamlet of a ``reducebywindow`` stage: every element goes to its lowest task,
    which reduces the whole window."""

    _prefix = "reducebywindow"

    def __init__(
        self,
        window_config: WindowConfig,
        reduce_function: Callable[[Any, Any], Any],
        parent: Streamlet,
    ) -> None:
        super().__init__((parent,))
        self._window_config = window_config
        self._reduce_function = reduce_function

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        window = self._window_config
        bolt = ReduceByWindowBolt(
            name, "reduce function", self._reduce_function, window.duration_secs, window.slide_secs
        )
        bldr.add_bolt(
            name,
            bolt,
            par=self.get_num_partitions(),
            inputs=self._inputs(Grouping.LOWEST),
            config={TOPOLOGY_TICK_TUPLE_FREQ_SECS: window.slide_secs},
        )
