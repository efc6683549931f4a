"""The windowed bolt of the Storm windowing conformance test (``test_storm_windowing.py``).

Instance processes import this module from the topology's code directory (a copy of
``compat_tests/``), so it imports nothing but the facade.
"""

from __future__ import annotations

import logging
from typing import Any

from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import OutputFieldsDeclarer
from storm_compat.topology.base import BaseWindowedBolt
from storm_compat.tuple import Fields, Values
from storm_compat.windowing import TupleWindow

log = logging.getLogger(__name__)


class WindowSummer(BaseWindowedBolt):
    """Emits, for each window, the sum of field ``n``, the ``n`` of its tuples, of its new
    tuples and of its expired ones, and its start and end timestamps (anchored to the
    window, by the executor)."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, inputWindow: TupleWindow) -> None:
        window = [t.getIntegerByField("n") for t in inputWindow.get()]
        new = [t.getIntegerByField("n") for t in inputWindow.getNew()]
        expired = [t.getIntegerByField("n") for t in inputWindow.getExpired()]
        log.info("window %s (new %s, expired %s)", window, new, expired)
        start, end = inputWindow.getStartTimestamp(), inputWindow.getEndTimestamp()
        self.collector.emit(Values(sum(window), window, new, expired, start, end))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sum", "window", "new", "expired", "start", "end"))
