"""StatefulWordSpout: emits six words over and over; before each checkpoint it writes how many
times it emitted each word into its state (Heron's example keeps that for debugging)."""

from collections import Counter
from itertools import cycle

from heronpy.api.spout.spout import Spout
from heronpy.api.state.stateful_component import StatefulComponent


class StatefulWordSpout(Spout, StatefulComponent):
    outputs = ["word"]

    def init_state(self, stateful_state):
        self.recovered_state = stateful_state
        self.logger.info(f"Checkpoint Snapshot recovered : {self.recovered_state}")

    def pre_save(self, checkpoint_id):
        for word, count in list(self.counter.items()):
            self.recovered_state.put(word, count)
        self.logger.info(f"Checkpoint Snapshot {checkpoint_id} : {self.recovered_state}")

    def initialize(self, config, context):
        self.logger.info("In initialize() of StatefulWordSpout")
        self.words = cycle(["hello", "bye", "good", "bad", "heron", "storm"])
        self.counter = Counter()
        self.emit_count = 0

    def next_tuple(self):
        word = next(self.words)
        self.emit([word], tup_id="message id")
        self.counter[word] += 1
        self.emit_count += 1
        if self.emit_count % 100000 == 0:
            self.logger.info(f"Emitted {self.emit_count}")
