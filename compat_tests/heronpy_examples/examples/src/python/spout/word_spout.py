"""WordSpout: the same six words over and over, each emitted with a message id."""

from itertools import cycle

from heronpy.api.spout.spout import Spout


class WordSpout(Spout):
    outputs = ["word"]

    def initialize(self, config, context):
        self.logger.info("WordSpout initialize, task %d", context.get_task_id())
        self.words = cycle(["hello", "bye", "good", "bad", "heron", "storm"])
        self.emitted = 0
        self.acked = 0
        self.failed = 0

    def next_tuple(self):
        self.emit([next(self.words)], tup_id="message id")
        self.emitted += 1
        if self.emitted % 10000 == 0:
            self.logger.info("Emitted %d", self.emitted)

    def ack(self, tup_id):
        self.acked += 1
        if self.acked % 10000 == 0:
            self.logger.info("Acked %d tuples, tup_id: %s", self.acked, tup_id)

    def fail(self, tup_id):
        self.failed += 1
        if self.failed % 10000 == 0:
            self.logger.info("Failed %d tuples, tup_id: %s", self.failed, tup_id)
