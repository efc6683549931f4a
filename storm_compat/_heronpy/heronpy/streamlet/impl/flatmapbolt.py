"""The ``flatmap`` stage (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from heron_core.api import Grouping, Tuple
from heronpy.streamlet.impl._stage import StageBolt
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["FlatMapBolt", "FlatMapStreamlet"]


class FlatMapBolt(StageBolt):
    """Each element ``e`` becomes the items of ``function(e)``; a result that is not iterable is
    emitted as one element (as heronpy does)."""

    processed = 0
    emitted = 0

    def process(self, tup: Tuple) -> None:
        result = self.function(tup.values[0])
        if isinstance(result, Iterable):
            for value in result:
                self.emit_element(value)
                self.emitted += 1
        else:
            self.emit_element(result)
            self.emitted += 1
        self.processed += 1
        self.ack(tup)


class FlatMapStreamlet(Streamlet):
    """The Streamlet of a ``flatmap`` stage (shuffle-grouped on its parent)."""

    _prefix = "flatmap"

    def __init__(self, function: Callable[[Any], Any], parent: Streamlet) -> None:
        super().__init__((parent,))
        self._function = function

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        bolt = FlatMapBolt(name, "flat_map function", self._function)
        bldr.add_bolt(
            name, bolt, par=self.get_num_partitions(), inputs=self._inputs(Grouping.SHUFFLE)
        )
