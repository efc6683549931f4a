"""HalfAckBolt: fails every second tuple it gets and acks the others."""

from heronpy.api.bolt.bolt import Bolt


class HalfAckBolt(Bolt):
    def initialize(self, config, context):
        self.total = 0

    def process(self, tup):
        self.total += 1
        if self.total % 2 == 0:
            self.logger.debug("Failing a tuple: %s", tup)
            self.fail(tup)
        else:
            self.logger.debug("Acking a tuple: %s", tup)
            self.ack(tup)

    def process_tick(self, tup):
        self.log("Got tick tuple!")
        self.log(f"Total received: {self.total}")
