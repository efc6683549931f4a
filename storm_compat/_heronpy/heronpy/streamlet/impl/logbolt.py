"""The ``log`` stage (heronpy's module path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from heron_core.api import Grouping, Tuple
from heronpy.streamlet.impl._stage import StageBolt
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["LogBolt", "LogStreamlet"]


class LogBolt(StageBolt):
    """Logs each element's ``str`` at INFO on its logger (``heron.user.LogBolt``)."""

    processed = 0

    def process(self, tup: Tuple) -> None:
        self.logger.info("%s", tup.values[0])
        self.processed += 1
        self.ack(tup)


class LogStreamlet(Streamlet):
    """The ``log`` sink."""

    _prefix = "log"

    def __init__(self, parent: Streamlet) -> None:
        super().__init__((parent,))

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        bldr.add_bolt(
            name,
            LogBolt(name),
            par=self.get_num_partitions(),
            inputs=self._inputs(Grouping.SHUFFLE),
        )
