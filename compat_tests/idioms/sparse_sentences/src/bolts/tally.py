from collections import Counter

from record import record
from streamparse import Bolt


class TallyBolt(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        self.counter = Counter()

    def process(self, tup):
        word, n = tup.values
        self.counter[word] += 1
        record("done", n)
        print(f"tallied {word!r} from sentence {n}: {self.counter[word]}", flush=True)
