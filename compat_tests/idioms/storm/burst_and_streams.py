"""A spout that polls an empty queue for seconds, then gets a burst; a bolt that takes 10 ms
per tuple; and streams nobody subscribes to, emitted on loosely: written as Storm users write
them.

    heron run burst_and_streams.py   (Ctrl-C once the burst is through, about 6 s after start)
"""

import time

from record import record

from storm_compat.topology import TopologyBuilder
from storm_compat.topology.base import BaseBasicBolt, BaseRichBolt, BaseRichSpout
from storm_compat.tuple import Fields, Values
from storm_compat.utils import Utils

QUIET_S = 3.0
BURST = 200


class QueueSpout(BaseRichSpout):
    """Polls a queue that stays empty for QUIET_S seconds, then holds BURST messages."""

    def open(self, conf, context, collector):
        self.collector = collector
        self.opened = time.time()
        self.sent = False

    def nextTuple(self):
        if self.sent or time.time() - self.opened < QUIET_S:
            Utils.sleep(50)  # nothing in the queue: back off, as queue spouts do
            return
        for n in range(1, BURST + 1):
            record("emit", n)
            self.collector.emit(Values(f"message {n}", n), n)
            # a debug stream nobody subscribes to, with fewer values than it declares:
            # Storm builds no tuple for it, so this is no error there
            self.collector.emit("debug", Values(f"sent {n}"))
        self.sent = True

    def ack(self, id):
        record("ack", id)

    def fail(self, id):
        record("fail", id)

    def declareOutputFields(self, declarer):
        declarer.declare(Fields("message", "n"))
        declarer.declareStream("debug", Fields("what", "detail"))


class SlowBolt(BaseBasicBolt):
    def execute(self, tuple, collector):
        time.sleep(0.01)  # a call to a slow service
        n = tuple.getIntegerByField("n")
        record("slow", n)
        collector.emit(Values(tuple.getString(0), n))
        collector.emit("audit", Values(n))  # nobody subscribes to "audit" either

    def declareOutputFields(self, declarer):
        declarer.declare(Fields("message", "n"))
        declarer.declareStream("audit", Fields("n"))


class LastBolt(BaseRichBolt):
    def prepare(self, conf, context, collector):
        self.collector = collector

    def execute(self, tuple):
        record("done", tuple.getIntegerByField("n"))
        self.collector.ack(tuple)

    def declareOutputFields(self, declarer):
        pass


builder = TopologyBuilder()
builder.setSpout("queue", QueueSpout())
builder.setBolt("slow", SlowBolt()).shuffleGrouping("queue")
builder.setBolt("last", LastBolt()).shuffleGrouping("slow")
topology = builder.createTopology()
