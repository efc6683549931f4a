"""The ``union`` stage (heronpy's module path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from heron_core.api import Grouping, Tuple
from heronpy.streamlet.impl._stage import StageBolt
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["UnionBolt", "UnionStreamlet"]


class UnionBolt(StageBolt):
    """Emits every element of both parents."""

    processed = 0

    def process(self, tup: Tuple) -> None:
        self.emit_element(tup.values[0])
        self.processed += 1
        self.ack(tup)


class UnionStreamlet(Streamlet):
    """The Streamlet of a ``union`` stage (both parents shuffle-grouped; built once both are)."""

    _prefix = "union"

    def __init__(self, left: Streamlet, right: Streamlet) -> None:
        super().__init__((left, right))

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        bldr.add_bolt(
            name,
            UnionBolt(name),
            par=self.get_num_partitions(),
            inputs=self._inputs(Grouping.SHUFFLE),
        )
