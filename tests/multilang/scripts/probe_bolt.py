# A storm.py-style bolt (manual acks) that does what the first value of each tuple says.
import json
import os
import sys
import time

import storm

CONF = {}
CONTEXT = {}


class ProbeBolt(storm.Bolt):
    def initialize(self, conf, context):
        CONF.update(conf)
        CONTEXT.update(context)

    def process(self, tup):
        if tup.stream == "__tick":
            storm.log(f"tick {tup.values!r}")
            storm.ack(tup)
            return
        action, args = tup.values[0], tup.values[1:]
        if action == "emit":
            ids = storm.emit(args, anchors=[tup])
            storm.log(f"task ids {json.dumps(ids)}")
        elif action == "emit_stream":
            storm.emit(args[1:], stream=args[0], anchors=[tup])
        elif action == "unanchored":
            storm.emit(args)
        elif action == "direct":
            storm.emitDirect(args[0], args[1:], stream="direct", anchors=[tup])
        elif action == "no_ids":
            storm.sendMsgToParent(
                {"command": "emit", "tuple": args, "anchors": tup.id, "need_task_ids": False}
            )
        elif action == "log":
            storm.log(args[0], args[1])
        elif action == "error":
            storm.reportError(args[0])
        elif action == "metrics":
            storm.rpcMetrics(args[0], args[1])
        elif action == "print":
            print("stray line one")
            print("stray {brace")
            sys.stdout.write("glued ")
            sys.stdout.flush()
            storm.emit(args, anchors=[tup])
        elif action == "ack_twice":
            storm.ack(tup)
        elif action == "fail":
            storm.fail(tup)
            return
        elif action == "anchor_unknown":
            storm.sendMsgToParent({"command": "emit", "tuple": args, "anchors": ["nope"]})
            storm.readTaskIds()
        elif action == "unknown_command":
            storm.sendMsgToParent({"command": "bogus"})
        elif action == "context":
            storm.emit([json.dumps(CONTEXT), json.dumps(CONF)], anchors=[tup])
        elif action == "env":
            storm.emit([os.getcwd(), os.environ.get(args[0])], anchors=[tup])
        elif action == "exit":
            sys.exit(int(args[0]))
        elif action == "hang":
            time.sleep(3600)
        elif action == "no_ack":
            return
        storm.ack(tup)


ProbeBolt().run()
