"""Storm's starter ExclamationTopology, on the Storm facade.

Words from ``TestWordSpout`` get "!!!" appended twice, by two exclamation bolts in a row.

    python topologies/exclamation.py            # 10 s on a LocalCluster
    python topologies/exclamation.py NAME       # StormSubmitter: submit as NAME (cluster "local")
    heron submit local topologies/exclamation.py --name NAME   # the module attribute `topology`
"""

from __future__ import annotations

import sys
import time
from typing import Any

from storm_compat import Config, LocalCluster, StormSubmitter, StormTopology
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing import TestWordSpout
from storm_compat.topology import OutputFieldsDeclarer, TopologyBuilder
from storm_compat.topology.base import BaseRichBolt
from storm_compat.tuple import Fields, Tuple, Values


class ExclamationBolt(BaseRichBolt):
    """Emits its input word with "!!!" appended, anchored to the input, then acks it."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        self.collector.emit(input, Values(input.getString(0) + "!!!"))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word"))


def build_topology(words: int = 10, exclaim1: int = 3, exclaim2: int = 2) -> StormTopology:
    """word -> exclaim1 -> exclaim2, with the given parallelism hints (the starter's by
    default)."""
    builder = TopologyBuilder()
    builder.setSpout("word", TestWordSpout(), words)
    builder.setBolt("exclaim1", ExclamationBolt(), exclaim1).shuffleGrouping("word")
    builder.setBolt("exclaim2", ExclamationBolt(), exclaim2).shuffleGrouping("exclaim1")
    return builder.createTopology()


topology = build_topology()


def main(args: list[str]) -> None:
    conf = Config()
    conf.setDebug(True)
    if args:
        conf.setNumWorkers(3)
        StormSubmitter.submitTopology(args[0], conf, topology)
        return
    with LocalCluster() as cluster:
        cluster.submitTopology("test", conf, topology)
        time.sleep(10)
        cluster.killTopology("test")


if __name__ == "__main__":
    main(sys.argv[1:])
