"""The benchmark's word count on the Storm facade, written as a Storm user writes it (shipped to
the instances as topology code): a ``BaseRichSpout`` over the seeded corpus, and the split and
count ``BaseBasicBolt`` s of Storm's starter topology (topologies/storm_word_count.py)."""

from __future__ import annotations

from typing import Any

from bench_components import record_start
from storm_word_count import SplitSentence, WordCount
from word_count import sentences

from heron_core.plan import LogicalPlan
from storm_compat import Config
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import TopologyContext
from storm_compat.topology import OutputFieldsDeclarer, TopologyBuilder
from storm_compat.topology.base import BaseRichSpout
from storm_compat.tuple import Fields, Values


class CorpusSpout(BaseRichSpout):
    """Emits its share of ``sentences(total, 42)`` once; with ``reliable``, each sentence has
    its index as message id. Calls `record_start` with ``directory``."""

    def __init__(self, total: int, reliable: bool, directory: str) -> None:
        self.total = total
        self.reliable = reliable
        self.directory = directory

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        tasks = context.getComponentTasks(context.getThisComponentId())
        self.task = context.getThisTaskId()
        self.mine = sentences(self.total, 42)[tasks.index(self.task) :: len(tasks)]
        self.collector = collector
        self.position = 0

    def nextTuple(self) -> None:
        i = self.position
        if i >= len(self.mine):
            return
        self.position += 1
        if not i:
            record_start(self.directory, self.task)
        if self.reliable:
            self.collector.emit(Values(self.mine[i]), i)
        else:
            self.collector.emit(Values(self.mine[i]))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sentence"))


def storm_plan(
    total: int, acking: bool, containers: int, max_pending: int, directory: str
) -> LogicalPlan:
    """The plan of sentence -> split -> count (fields grouping) for ``total`` sentences, with
    Storm's config for acking (ackers 0 when off) and workers."""
    builder = TopologyBuilder()
    builder.setSpout("sentence", CorpusSpout(total, acking, directory))
    builder.setBolt("split", SplitSentence()).shuffleGrouping("sentence")
    builder.setBolt("count", WordCount()).fieldsGrouping("split", Fields("word"))
    conf = Config()
    conf.setNumWorkers(containers)
    if acking:
        conf.setMaxSpoutPending(max_pending)
    else:
        conf.setNumAckers(0)
    return builder.createTopology().to_logical_plan("storm-bench", conf)
