"""storm-starter's RandomSentenceSpout made reliable, and a bolt that takes its time: written
as Storm users write them (``Utils.sleep`` in ``nextTuple``, a message id per sentence, a
BaseBasicBolt that sleeps in ``execute``, a BaseRichBolt that acks).

    heron run sleepy_sentences.py --time 20   # SPOUT_SLEEP_MS, BOLT_SLEEP_MS: the sleeps
"""

import os
import random
import time

from record import record

from storm_compat.topology import TopologyBuilder
from storm_compat.topology.base import BaseBasicBolt, BaseRichBolt, BaseRichSpout
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
    def __init__(self, sleep_ms):
        self.sleep_ms = sleep_ms

    def open(self, conf, context, collector):
        self.collector = collector
        self.rand = random.Random()
        self.n = 0

    def nextTuple(self):
        Utils.sleep(self.sleep_ms)
        self.n += 1
        sentence = SENTENCES[self.rand.randrange(len(SENTENCES))]
        record("emit", self.n)
        self.collector.emit(Values(sentence, self.n), self.n)

    def ack(self, id):
        record("ack", id)

    def fail(self, id):
        record("fail", id)

    def declareOutputFields(self, declarer):
        declarer.declare(Fields("sentence", "n"))


class SlowBolt(BaseBasicBolt):
    def __init__(self, sleep_ms):
        self.sleep_ms = sleep_ms

    def execute(self, tuple, collector):
        time.sleep(self.sleep_ms / 1000.0)
        collector.emit(Values(tuple.getString(0).upper(), tuple.getIntegerByField("n")))

    def declareOutputFields(self, declarer):
        declarer.declare(Fields("sentence", "n"))


class LastBolt(BaseRichBolt):
    def prepare(self, conf, context, collector):
        self.collector = collector

    def execute(self, tuple):
        record("done", tuple.getIntegerByField("n"))
        self.collector.ack(tuple)

    def declareOutputFields(self, declarer):
        pass


builder = TopologyBuilder()
builder.setSpout("sentences", RandomSentenceSpout(int(os.environ.get("SPOUT_SLEEP_MS", "100"))))
builder.setBolt("slow", SlowBolt(int(os.environ.get("BOLT_SLEEP_MS", "0")))).shuffleGrouping(
    "sentences"
)
builder.setBolt("last", LastBolt()).shuffleGrouping("slow")
topology = builder.createTopology()
