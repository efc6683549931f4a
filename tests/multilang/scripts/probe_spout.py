# A storm.py-style reliable spout: emits ("n", i) with id i up to conf "probe.count"; logs its
# acks, fails, activate and deactivate; "probe.print" makes it print stray text on stdout,
# "probe.bad" send a command spouts may not send.

import storm


class ProbeSpout(storm.Spout):
    def initialize(self, conf, context):
        self.count = conf.get("probe.count", 3)
        self.stray = conf.get("probe.print", False)
        self.bad = conf.get("probe.bad", False)
        self.next = 0

    def nextTuple(self):
        if self.stray:
            print("stray spout output")
        if self.bad:
            storm.sendMsgToParent({"command": "ack", "id": 0})
        if self.next < self.count:
            ids = storm.emit(["n", self.next], id=self.next)
            storm.log(f"emitted {self.next} to {ids!r}")
            self.next += 1

    def ack(self, id):
        storm.log(f"acked {id!r}")

    def fail(self, id):
        storm.log(f"failed {id!r}")

    def activate(self):
        storm.log("activated")

    def deactivate(self):
        storm.log("deactivated")


ProbeSpout().run()
