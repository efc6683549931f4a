"""A multilang library written for these tests in the style of Apache Storm's ``storm.py``.

It speaks the protocol exactly as Storm's module does: JSON messages ended by a line ``end``
on stdin/stdout, the pid file in the handshake, ``emit`` always reading the task ids back
(``need_task_ids`` never sent), ``emitDirect`` not reading them, ``BasicBolt`` anchoring
every emit to the current tuple and acking it after ``process`` (``reportError`` and ``fail``
when it raises), heartbeats answered with ``sync``, and a ``sync`` after every spout command.
"""

import json
import os
import sys
import traceback
from collections import deque

MODE = None
ANCHOR_TUPLE = None
pending_commands = deque()
pending_taskids = deque()


def readMsg():
    lines = []
    while True:
        line = sys.stdin.readline()
        if not line:
            raise EOFError("read EOF from stdin")
        if line[:-1] == "end":
            break
        lines.append(line)
    return json.loads("".join(lines))


def readTaskIds():
    if pending_taskids:
        return pending_taskids.popleft()
    msg = readMsg()
    while not isinstance(msg, list):
        pending_commands.append(msg)
        msg = readMsg()
    return msg


def readCommand():
    if pending_commands:
        return pending_commands.popleft()
    msg = readMsg()
    while isinstance(msg, list):
        pending_taskids.append(msg)
        msg = readMsg()
    return msg


def readTuple():
    cmd = readCommand()
    return Tuple(cmd["id"], cmd["comp"], cmd["stream"], cmd["task"], cmd["tuple"])


def sendMsgToParent(msg):
    print(json.dumps(msg))
    print("end")
    sys.stdout.flush()


def sync():
    sendMsgToParent({"command": "sync"})


def sendpid(piddir):
    pid = os.getpid()
    sendMsgToParent({"pid": pid})
    open(os.path.join(piddir, str(pid)), "w").close()


def emit(*args, **kwargs):
    _emit(*args, **kwargs)
    return readTaskIds()


def emitDirect(task, *args, **kwargs):
    kwargs["directTask"] = task
    _emit(*args, **kwargs)


def _emit(*args, **kwargs):
    if MODE is Bolt:
        emitBolt(*args, **kwargs)
    elif MODE is Spout:
        emitSpout(*args, **kwargs)


def emitBolt(tup, stream=None, anchors=(), directTask=None):
    if ANCHOR_TUPLE is not None:
        anchors = [ANCHOR_TUPLE]
    m = {"command": "emit"}
    if stream is not None:
        m["stream"] = stream
    m["anchors"] = [a.id for a in anchors]
    if directTask is not None:
        m["task"] = directTask
    m["tuple"] = tup
    sendMsgToParent(m)


def emitSpout(tup, stream=None, id=None, directTask=None):
    m = {"command": "emit"}
    if id is not None:
        m["id"] = id
    if stream is not None:
        m["stream"] = stream
    if directTask is not None:
        m["task"] = directTask
    m["tuple"] = tup
    sendMsgToParent(m)


def ack(tup):
    sendMsgToParent({"command": "ack", "id": tup.id})


def fail(tup):
    sendMsgToParent({"command": "fail", "id": tup.id})


def reportError(msg):
    sendMsgToParent({"command": "error", "msg": msg})


def log(msg, level=2):
    sendMsgToParent({"command": "log", "msg": msg, "level": level})


def logTrace(msg):
    log(msg, 0)


def logDebug(msg):
    log(msg, 1)


def logInfo(msg):
    log(msg, 2)


def logWarn(msg):
    log(msg, 3)


def logError(msg):
    log(msg, 4)


def rpcMetrics(name, params):
    sendMsgToParent({"command": "metrics", "name": name, "params": params})


def initComponent():
    setupInfo = readMsg()
    sendpid(setupInfo["pidDir"])
    return [setupInfo["conf"], setupInfo["context"]]


class Tuple:
    def __init__(self, id, component, stream, task, values):
        self.id = id
        self.component = component
        self.stream = stream
        self.task = task
        self.values = values

    def __repr__(self):
        fields = (self.id, self.component, self.stream, self.task, self.values)
        return "<Tuple id={!r} component={!r} stream={!r} task={!r} values={!r}>".format(*fields)

    def is_heartbeat_tuple(self):
        return self.task == -1 and self.stream == "__heartbeat"


class Bolt:
    def initialize(self, stormconf, context):
        pass

    def process(self, tuple):
        pass

    def run(self):
        global MODE
        MODE = Bolt
        conf, context = initComponent()
        try:
            self.initialize(conf, context)
            while True:
                tup = readTuple()
                if tup.is_heartbeat_tuple():
                    sync()
                else:
                    self.process(tup)
        except Exception:
            reportError(traceback.format_exc())


class BasicBolt:
    def initialize(self, stormconf, context):
        pass

    def process(self, tuple):
        pass

    def run(self):
        global MODE, ANCHOR_TUPLE
        MODE = Bolt
        conf, context = initComponent()
        try:
            self.initialize(conf, context)
            while True:
                tup = readTuple()
                if tup.is_heartbeat_tuple():
                    sync()
                else:
                    ANCHOR_TUPLE = tup
                    try:
                        self.process(tup)
                        ack(tup)
                    except Exception:
                        reportError(traceback.format_exc())
                        fail(tup)
        except Exception:
            reportError(traceback.format_exc())


class Spout:
    def initialize(self, conf, context):
        pass

    def ack(self, id):
        pass

    def fail(self, id):
        pass

    def activate(self):
        pass

    def deactivate(self):
        pass

    def nextTuple(self):
        pass

    def run(self):
        global MODE
        MODE = Spout
        conf, context = initComponent()
        try:
            self.initialize(conf, context)
            while True:
                msg = readCommand()
                command = msg["command"]
                if command == "next":
                    self.nextTuple()
                elif command == "ack":
                    self.ack(msg["id"])
                elif command == "fail":
                    self.fail(msg["id"])
                elif command == "activate":
                    self.activate()
                elif command == "deactivate":
                    self.deactivate()
                sync()
        except Exception:
            reportError(traceback.format_exc())
