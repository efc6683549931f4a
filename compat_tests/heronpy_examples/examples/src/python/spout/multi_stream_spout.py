"""MultiStreamSpout: words on the default stream, and now and then a message on "error"."""

from itertools import cycle

from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Stream


class MultiStreamSpout(Spout):
    outputs = ["word", Stream(fields=["error_msg"], name="error")]

    def initialize(self, config, context):
        self.words = cycle(["hello", "bye", "good", "bad", "heron", "storm"])
        self.emitted = 0

    def next_tuple(self):
        self.emit([next(self.words)])
        self.emitted += 1
        if self.emitted % 1000 == 0:
            self.emit([f"error after {self.emitted} words"], stream="error")
