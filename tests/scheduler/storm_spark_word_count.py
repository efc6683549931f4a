"""The bounded, reliable word count of ``spark_word_count.py`` written on the Storm facade
(``TopologyBuilder``, ``BaseRichSpout``, ``BaseBasicBolt``), for ``StormSubmitter`` on the spark
cluster. Shipped with ``spark_word_count.py`` beside it (the corpus and the log format).

Run as a script, it is a user's ``main``: ``python storm_spark_word_count.py NAME CONF_JSON``
submits the topology as NAME with a ``Config`` holding two workers and the entries of
CONF_JSON (the cluster and its settings, the output directory ``sparktest.out``).
"""

from __future__ import annotations

import json
import sys
from collections import deque
from pathlib import Path
from typing import IO, Any

from spark_word_count import corpus

from storm_compat import Config, StormSubmitter, StormTopology
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import TopologyContext
from storm_compat.topology import BasicOutputCollector, OutputFieldsDeclarer, TopologyBuilder
from storm_compat.topology.base import BaseBasicBolt, BaseRichSpout
from storm_compat.tuple import Fields, Tuple, Values
from storm_compat.utils import Utils


def _open_log(conf: dict[str, Any], prefix: str, task: int) -> IO[str]:
    directory = Path(str(conf["sparktest.out"]))
    directory.mkdir(parents=True, exist_ok=True)
    return (directory / f"{prefix}-{task}.jsonl").open("a", buffering=1)


class SentenceSpout(BaseRichSpout):
    """Emits sentence ``i`` of the corpus with message id ``i``, replays what fails and logs
    every ack and fail; sleeps a millisecond once everything is emitted, as Storm spouts do."""

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        self.collector = collector
        self.sentences = corpus(int(conf.get("sparktest.sentences", 200)))
        tasks = context.getComponentTasks(context.getThisComponentId())
        self.next = tasks.index(context.getThisTaskId())
        self.step = len(tasks)
        self.replay: deque[int] = deque()
        self.log = _open_log(conf, "spout", context.getThisTaskId())

    def nextTuple(self) -> None:
        if self.replay:
            sid = self.replay.popleft()
        elif self.next < len(self.sentences):
            sid = self.next
            self.next += self.step
        else:
            Utils.sleep(1)
            return
        self.collector.emit(Values(sid, self.sentences[sid]), sid)

    def ack(self, msgId: Any) -> None:
        self.log.write(json.dumps({"ack": msgId}) + "\n")

    def fail(self, msgId: Any) -> None:
        self.replay.append(msgId)
        self.log.write(json.dumps({"fail": msgId}) + "\n")

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sid", "sentence"))


class SplitSentence(BaseBasicBolt):
    """Emits ``(sid, position, word)`` for every word (anchored; acked after execute)."""

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        sid = input.getInteger(0)
        for position, word in enumerate(input.getString(1).split()):
            collector.emit(Values(sid, position, word))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("sid", "position", "word"))


class WordCount(BaseBasicBolt):
    """Counts words, logs every word it counts and emits ``(word, count)``."""

    def prepare(self, topoConf: dict[str, Any], context: TopologyContext) -> None:
        self.counts: dict[str, int] = {}
        self.log = _open_log(topoConf, "count", context.getThisTaskId())

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        sid, position, word = input.getInteger(0), input.getInteger(1), input.getString(2)
        self.log.write(json.dumps({"sid": sid, "position": position, "word": word}) + "\n")
        self.counts[word] = self.counts.get(word, 0) + 1
        collector.emit(Values(word, self.counts[word]))

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "count"))


def build_topology() -> StormTopology:
    """sentences -> split (shuffle) -> count (fields on the word)."""
    builder = TopologyBuilder()
    builder.setSpout("sentences", SentenceSpout(), 1)
    builder.setBolt("split", SplitSentence(), 2).shuffleGrouping("sentences")
    builder.setBolt("count", WordCount(), 2).fieldsGrouping("split", Fields("word"))
    return builder.createTopology()


def main(argv: list[str]) -> None:
    name, extra = argv
    conf = Config()
    conf.setNumWorkers(2)
    conf.setMaxSpoutPending(50)
    conf.setMessageTimeoutSecs(120)
    conf.update(json.loads(extra))
    StormSubmitter.submitTopology(name, conf, build_topology())


if __name__ == "__main__":
    main(sys.argv[1:])
