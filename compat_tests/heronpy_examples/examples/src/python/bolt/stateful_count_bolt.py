"""StatefulCountBolt: counts words; before each checkpoint it writes its counts into its state
and logs the snapshot; it logs the state it starts from."""

from collections import Counter

from heronpy.api import global_metrics
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.state.stateful_component import StatefulComponent


class StatefulCountBolt(Bolt, StatefulComponent):
    def init_state(self, stateful_state):
        self.recovered_state = stateful_state
        self.logger.info(f"Checkpoint Snapshot recovered : {self.recovered_state}")

    def pre_save(self, checkpoint_id):
        for word, count in list(self.counter.items()):
            self.recovered_state.put(word, count)
        self.logger.info(f"Checkpoint Snapshot {checkpoint_id} : {self.recovered_state}")

    def initialize(self, config, context):
        self.logger.info("In prepare() of StatefulCountBolt")
        self.counter = Counter()
        self.total = 0

    def process(self, tup):
        word = tup.values[0]
        self.counter[word] += 1
        self.total += 1
        global_metrics.safe_incr("count")
        self.ack(tup)

    def process_tick(self, tup):
        pass
