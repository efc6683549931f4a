# Storm's flux-examples randomsentence.js, in Python on Storm's storm.py: a reliable spout
# that waits 100 ms per nextTuple, emits a random sentence with an id, and logs its fails.
import os
import random
import time

import storm

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


def record(event, n):  # what the idiom test observes (not part of the idiom)
    path = os.path.join(os.environ["IDIOM_OUT"], f"{event}-{os.getpid()}.txt")
    with open(path, "a") as out:
        out.write(f"{event} {n} {time.time()}\n")


class RandomSentenceSpout(storm.Spout):
    def initialize(self, conf, context):
        self.n = 0
        self.pending = {}

    def nextTuple(self):
        time.sleep(0.1)
        self.n += 1
        sentence = random.choice(SENTENCES)
        self.pending[self.n] = sentence
        record("emit", self.n)
        storm.emit([sentence], id=self.n)

    def ack(self, id):
        record("ack", id)
        del self.pending[id]

    def fail(self, id):
        record("fail", id)
        storm.log(f"emitting {id} on fail")
        storm.emit([self.pending[id]], id=id)


RandomSentenceSpout().run()
