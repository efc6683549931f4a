"""StreamAggregateBolt: counts the tuples of each input stream, logs them on every tick."""

from collections import Counter

from heronpy.api.bolt.bolt import Bolt


class StreamAggregateBolt(Bolt):
    def initialize(self, config, context):
        self.stream_counter = Counter()

    def process(self, tup):
        self.stream_counter[tup.stream] += 1

    def process_tick(self, tup):
        self.log("Got tick tuple!")
        self.log(f"Current stream counter: {dict(self.stream_counter)}")
