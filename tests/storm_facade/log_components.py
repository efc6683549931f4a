"""A Storm spout that prints and logs, and a Storm bolt that cannot open its data file, for
the LocalCluster console tests."""

from __future__ import annotations

import logging
from typing import Any

from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import OutputFieldsDeclarer
from storm_compat.topology.base import BaseRichBolt, BaseRichSpout
from storm_compat.tuple import Fields, Tuple, Values

LOG = logging.getLogger(__name__)


class ChattySpout(BaseRichSpout):
    """Prints and logs once in ``open``, then emits numbers."""

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        self.collector = collector
        self.n = 0
        print(f"opened task {context.getThisTaskId()}")
        LOG.info("the spout is ready")

    def nextTuple(self) -> None:
        self.n += 1
        self.collector.emit(Values(self.n))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("n"))


class MissingFileBolt(BaseRichBolt):
    """Opens ``lookup.csv`` (a relative path) in ``prepare``; there is none."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        with open("lookup.csv") as lookup:
            self.lookup = lookup.read()

    def execute(self, input: Tuple) -> None:
        """Never reached."""

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""
