"""ConsumeBolt: counts what it gets, logs the total on every tick."""

from heronpy.api.bolt.bolt import Bolt


class ConsumeBolt(Bolt):
    def initialize(self, config, context):
        self.logger.info("ConsumeBolt initialize, task %d", context.get_task_id())
        self.total = 0

    def process(self, tup):
        self.total += 1

    def process_tick(self, tup):
        self.log("Got tick tuple!")
        self.log(f"Total received data tuple: {self.total}")
