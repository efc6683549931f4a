# A storm.py-style reliable spout: emits each sentence of conf "sentences" once, with its index
# as message id, replays a sentence when it fails, and logs every ack.
import storm


class SentenceSpout(storm.Spout):
    def initialize(self, conf, context):
        self.sentences = conf["sentences"]
        self.next = 0

    def nextTuple(self):
        if self.next < len(self.sentences):
            storm.emit([self.sentences[self.next]], id=self.next)
            self.next += 1

    def ack(self, id):
        storm.log(f"acked sentence {id}")

    def fail(self, id):
        storm.log(f"replaying sentence {id}")
        storm.emit([self.sentences[id]], id=id)


SentenceSpout().run()
