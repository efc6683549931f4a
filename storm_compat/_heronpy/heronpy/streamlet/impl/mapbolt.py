"""The ``map`` stage (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heron_core.api import Grouping, Tuple
from heronpy.streamlet.impl._stage import StageBolt
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["MapBolt", "MapStreamlet"]


class MapBolt(StageBolt):
    """Each element ``e`` becomes ``function(e)``."""

    processed = 0
    emitted = 0

    def process(self, tup: Tuple) -> None:
        self.emit_element(self.function(tup.values[0]))
        self.emitted += 1
        self.processed += 1
        self.ack(tup)


class MapStreamlet(Streamlet):
    """The Streamlet of a ``map`` stage (shuffle-grouped on its parent)."""

    _prefix = "map"

    def __init__(self, function: Callable[[Any], Any], parent: Streamlet) -> None:
        super().__init__((parent,))
        self._function = function

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        bolt = MapBolt(name, "map function", self._function)
        bldr.add_bolt(
            name, bolt, par=self.get_num_partitions(), inputs=self._inputs(Grouping.SHUFFLE)
        )
