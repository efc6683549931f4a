"""storm-starter's WordCountTopology: a spout sleeping 100 ms per nextTuple (made reliable),
Storm's own splitsentence.py as a ShellBolt (with Storm's storm.py beside it, as in
storm-starter's multilang/resources), and a counting BaseBasicBolt.

    heron run word_count_shell.py --time 20
"""

import random

from record import record

from storm_compat.multilang import ShellBolt
from storm_compat.topology import IRichBolt, TopologyBuilder
from storm_compat.topology.base import BaseBasicBolt, BaseRichSpout
from storm_compat.tuple import Fields, Values
from storm_compat.utils import Utils

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class RandomSentenceSpout(BaseRichSpout):
    def open(self, conf, context, collector):
        self.collector = collector
        self.rand = random.Random()
        self.n = 0

    def nextTuple(self):
        Utils.sleep(100)
        self.n += 1
        record("emit", self.n)
        self.collector.emit(Values(SENTENCES[self.rand.randrange(len(SENTENCES))]), self.n)

    def ack(self, id):
        record("ack", id)

    def fail(self, id):
        record("fail", id)

    def declareOutputFields(self, declarer):
        declarer.declare(Fields("word"))


class SplitSentence(ShellBolt, IRichBolt):
    def __init__(self):
        super().__init__("python3", "splitsentence.py")

    def declareOutputFields(self, declarer):
        declarer.declare(Fields("word"))

    def getComponentConfiguration(self):
        return None


class WordCount(BaseBasicBolt):
    def prepare(self, conf, context):
        self.counts = {}

    def execute(self, tuple, collector):
        word = tuple.getString(0)
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        collector.emit(Values(word, count))

    def declareOutputFields(self, declarer):
        declarer.declare(Fields("word", "count"))


builder = TopologyBuilder()
builder.setSpout("spout", RandomSentenceSpout(), 1)
builder.setBolt("split", SplitSentence(), 2).shuffleGrouping("spout")
builder.setBolt("count", WordCount(), 2).fieldsGrouping("split", Fields("word"))
topology = builder.createTopology()
