"""The ``filter`` stage (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heron_core.api import Grouping, Tuple
from heronpy.streamlet.impl._stage import StageBolt
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["FilterBolt", "FilterStreamlet"]


class FilterBolt(StageBolt):
    """Emits the elements ``e`` for which ``function(e)`` is true."""

    processed = 0
    emitted = 0

    def process(self, tup: Tuple) -> None:
        value = tup.values[0]
        if self.function(value):
            self.emit_element(value)
            self.emitted += 1
        self.processed += 1
        self.ack(tup)


class FilterStreamlet(Streamlet):
    """The Streamlet of a ``filter`` stage (shuffle-grouped on its parent)."""

    _prefix = "filter"

    def __init__(self, function: Callable[[Any], Any], parent: Streamlet) -> None:
        super().__init__((parent,))
        self._function = function

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        bolt = FilterBolt(name, "filter function", self._function)
        bldr.add_bolt(
            name, bolt, par=self.get_num_partitions(), inputs=self._inputs(Grouping.SHUFFLE)
        )
