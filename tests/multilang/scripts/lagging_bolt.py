# A raw-protocol bolt that answers heartbeats only once no more input is waiting: it reads all
# that its host writes before waiting for a sync, so it sees how many tuples the host keeps in
# flight (a host that waited for each tuple's answer would keep one).
# Each tuple is emitted back anchored and acked; whenever the number of tuples it has read
# beyond those covered by the syncs it sent reaches a new high, it emits ["outstanding", n] on
# the stream "stats".
import json
import os
import select
import sys

stdin = sys.stdin


def read():
    lines = []
    while True:
        line = stdin.readline()
        if not line:
            sys.exit(0)
        if line == "end\n":
            return json.loads("".join(lines))
        lines.append(line)


def send(message):
    sys.stdout.write(json.dumps(message) + "\nend\n")


handshake = read()
open(os.path.join(handshake["pidDir"], str(os.getpid())), "w").close()
send({"pid": os.getpid()})
sys.stdout.flush()

read_since_sync = 0  # tuples read that no sync sent covers yet
waiting = 0  # heartbeats read and not answered yet
high = 0
while True:
    message = read()
    if message.get("stream") == "__heartbeat":
        waiting += 1
        if not select.select([stdin], [], [], 0)[0]:  # nothing more waiting: answer them all
            for _ in range(waiting):
                send({"command": "sync"})
            read_since_sync = waiting = 0
            sys.stdout.flush()
        continue
    read_since_sync += 1
    if read_since_sync > high:
        high = read_since_sync
        send(
            {
                "command": "emit",
                "stream": "stats",
                "tuple": ["outstanding", high],
                "need_task_ids": False,
            }
        )
    send(
        {
            "command": "emit",
            "tuple": message["tuple"],
            "anchors": [message["id"]],
            "need_task_ids": False,
        }
    )
    send({"command": "ack", "id": message["id"]})
