# pystorm components run as multilang subprocesses: argv[1] names the class, argv[2] the
# serializer (default json).
import sys

import pystorm


class NumberSpout(pystorm.Spout):
    """Unreliable: emits (i,) for i < conf "numbers", then nothing."""

    def initialize(self, storm_conf, context):
        self.limit = storm_conf["numbers"]
        self.i = 0

    def next_tuple(self):
        if self.i < self.limit:
            self.emit([self.i])
            self.i += 1


class SentenceSpout(pystorm.ReliableSpout):
    """Emits each sentence of conf "sentences" with its index as tup_id; ReliableSpout replays
    failed ones."""

    def initialize(self, storm_conf, context):
        self.sentences = storm_conf["sentences"]
        self.i = 0

    def next_tuple(self):
        if self.i < len(self.sentences):
            self.emit([self.i, self.sentences[self.i]], tup_id=self.i)
            self.i += 1

    def ack(self, tup_id):
        super().ack(tup_id)
        self.log(f"acked sentence {tup_id}")


class FlakySplitBolt(pystorm.Bolt):
    """Fails the first delivery of every sentence (without emitting), splits the second; prints
    to stdout each time, as careless user code does."""

    auto_ack = False

    def initialize(self, storm_conf, context):
        self.seen = set()

    def process(self, tup):
        index, sentence = tup.values
        print("processing sentence", index)
        if index not in self.seen:
            self.seen.add(index)
            self.log(f"failing sentence {index} once")
            self.fail(tup)
            return
        for word in sentence.split():
            self.emit([word])
        self.ack(tup)


class CountBolt(pystorm.BatchingBolt):
    """Counts words per batch (one batch per word), flushed by tick tuples."""

    def group_key(self, tup):
        return tup.values[0]

    def process_batch(self, key, tups):
        self.emit([key, len(tups)])


class EchoBolt(pystorm.Bolt):
    """Auto-anchored, auto-acked: emits (i, i * i)."""

    def process(self, tup):
        self.emit([tup.values[0], tup.values[0] ** 2])


class OddFailBolt(pystorm.Bolt):
    """Raises on odd numbers without exiting (pystorm then reports the error, sends an extra
    sync and auto-fails the input); emits and auto-acks even ones."""

    exit_on_exception = False

    def process(self, tup):
        if tup.values[0] % 2:
            raise ValueError(f"odd {tup.values[0]}")
        self.emit([tup.values[0], 0])


if __name__ == "__main__":
    serializer = sys.argv[2] if len(sys.argv) > 2 else "json"
    globals()[sys.argv[1]](serializer=serializer).run()
