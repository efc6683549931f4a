import time
from itertools import cycle

from record import record
from streamparse import Spout


class SentenceSpout(Spout):
    outputs = ["sentence", "n"]

    def initialize(self, stormconf, context):
        # a resource shipped with the topology, opened by a relative path as on Storm
        with open("data/sentences.txt") as lines:
            self.sentences = cycle([line.strip() for line in lines if line.strip()])
        self.n = 0

    def next_tuple(self):
        time.sleep(0.1)
        self.n += 1
        record("emit", self.n)
        self.emit([next(self.sentences), self.n], tup_id=self.n)

    def ack(self, tup_id):
        record("ack", tup_id)

    def fail(self, tup_id):
        record("fail", tup_id)
        self.logger.warning("sentence %s failed", tup_id)
