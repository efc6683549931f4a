"""The ``reducebykeyandwindow`` stage (heronpy's module path)."""

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

__all__ = ["ReduceByKeyAndWindowBolt", "ReduceByKeyAndWindowStreamlet"]


class ReduceByKeyAndWindowBolt(WindowedStageBolt):
    """Per window and key (in order of first arrival), emits ``(KeyedWindow, result)``, the
    key's values folded with ``function(a, b)`` from the first value."""

    def process_window(self, window: Window, tuples: list[Tuple]) -> None:
        reduced: dict[Any, Any] = {}
        function = self.function
        for tup in tuples:
            key, value = pair(tup.values[0], self._stage)
            reduced[key] = function(reduced[key], value) if key in reduced else value
        for key, result in reduced.items():
            self.emit_element((KeyedWindow(key, window), result))


class ReduceByKeyAndWindowStreamlet(Streamlet):
    """The Streamlet of a ``reducebykeyandwindow`` stage, grouped by key. Like heronpy's, it
    has 1 partition unless ``set_num_partitions`` says otherwise."""

    _prefix = "reducebykeyandwindow"

    def __init__(
        self,
        window_config: WindowConfig,
        reduce_function: Callable[[Any, Any], Any],
        parent: Streamlet,
    ) -> None:
        super().__init__((parent,))
        self._num_partitions = 1
        self._window_config = window_config
        self._reduce_function = reduce_function

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        window = self._window_config
        bolt = ReduceByKeyAndWindowBolt(
            name, "reduce function", self._reduce_function, window.duration_secs, window.slide_secs
        )
        bldr.add_bolt(
            name,
            bolt,
            par=self.get_num_partitions(),
            inputs=self._inputs(Grouping.custom(KeyGrouping(name))),
            config={TOPOLOGY_TICK_TUPLE_FREQ_SECS: window.slide_secs},
        )
