"""The ``repartition`` stage (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heron_core.api import Grouping, Tuple
from heronpy.streamlet.impl._grouping import RepartitionGrouping
from heronpy.streamlet.impl._stage import StageBolt
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["RepartitionBolt", "RepartitionStreamlet"]


class RepartitionBolt(StageBolt):
    """Emits each element it receives; the grouping into it chose its partition."""

    processed = 0

    def process(self, tup: Tuple) -> None:
        self.emit_element(tup.values[0])
        self.processed += 1
        self.ack(tup)


class RepartitionStreamlet(Streamlet):
    """The Streamlet of a ``repartition`` stage: custom-grouped by the user's function, or
    shuffled without one."""

    _prefix = "repartition"

    def __init__(
        self, function: Callable[[Any, int], int | list[int]] | None, parent: Streamlet
    ) -> None:
        super().__init__((parent,))
        self._function = function

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        grouping = Grouping.SHUFFLE
        if self._function is not None:
            grouping = Grouping.custom(RepartitionGrouping(name, self._function))
        bldr.add_bolt(
            name,
            RepartitionBolt(name),
            par=self.get_num_partitions(),
            inputs=self._inputs(grouping),
        )
