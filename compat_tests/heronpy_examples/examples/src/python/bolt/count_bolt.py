"""CountBolt: counts words ("heron" counts ten), acks each, logs its map on every tick."""

from collections import Counter

from heronpy.api import global_metrics
from heronpy.api.bolt.bolt import Bolt


class CountBolt(Bolt):
    def initialize(self, config, context):
        self.counter = Counter()
        self.total = 0
        self.logger.info("CountBolt ticks every %s s", config.get("topology.tick.tuple.freq.secs"))

    def process(self, tup):
        word = tup.values[0]
        by = 10 if word == "heron" else 1
        self.counter[word] += by
        self.total += by
        global_metrics.safe_incr("count")
        self.ack(tup)

    def process_tick(self, tup):
        self.log("Got tick tuple!")
        self.log(f"Current map: {dict(self.counter)}")
