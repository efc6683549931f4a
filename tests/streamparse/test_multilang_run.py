"""``python -m storm_compat.streamparse.run``: the multilang subprocess of a streamparse
component writes what streamparse's own ``streamparse_run`` writes, byte for byte (pids and
log times aside), never waits for input with output of its own held back, and writes what
another thread sends without waiting for input."""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest

from storm_compat.streamparse import RUN_MODULE

COMPONENTS = '''
import atexit
import decimal
import os
import threading
import time

from pystorm import Bolt


class Echo(Bolt):
    """Emits each input's values back, plus a Decimal and a line break for the odd ones."""

    def initialize(self, storm_conf, context):
        atexit.register(lambda: open("atexit-ran", "w").close())

    def process(self, tup):
        word = tup.values[0]
        if word == "slow":
            # emits, then computes until the test creates "release" (up to a minute)
            self.emit(["before a long computation"])
            deadline = time.monotonic() + 60
            while not os.path.exists("release") and time.monotonic() < deadline:
                time.sleep(0.01)
        elif word == "late":
            # another thread emits once this input is processed and acked
            threading.Timer(0.2, self.emit, (["from a thread"],), {"anchors": []}).start()
        elif int(tup.id) % 2:
            self.emit([word, decimal.Decimal("1.10"), "a\\nb", "\\u00e9"])
        else:
            self.emit([word])
        self.log("seen " + word)
'''

_PID = re.compile(rb'"pid": \d+')
_LOG_TIME = re.compile(rb'"msg": "\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - ')


def _handshake(pid_dir: Path) -> str:
    context = {
        "taskid": 3,
        "componentid": "echo",
        "task->component": {"3": "echo"},
        "source->stream->fields": {"words": {"default": ["word"]}},
    }
    message = {"conf": {"topology.name": "t"}, "context": context, "pidDir": str(pid_dir)}
    return json.dumps(message) + "\nend\n"


def _tuple(number: int, word: str) -> str:
    message = {"id": str(number), "comp": "words", "stream": "default", "task": 2}
    return json.dumps({**message, "tuple": [word]}) + "\nend\n"


@pytest.fixture
def code(tmp_path: Path) -> Path:
    directory = tmp_path / "code"
    directory.mkdir()
    (directory / "echo_components.py").write_text(COMPONENTS)
    (tmp_path / "pids").mkdir()
    return directory


@pytest.fixture
def launched(code: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


def _run(code: Path, argv: list[str], stdin: bytes) -> bytes:
    done = subprocess.run(
        [sys.executable, *argv], cwd=code, input=stdin, capture_output=True, timeout=120
    )
    assert done.returncode == 2, done.stderr.decode()  # pystorm: "Storm went away"
    return _LOG_TIME.sub(b'"msg": "', _PID.sub(b'"pid": 0', done.stdout))


def test_writes_what_streamparse_run_writes(code: Path) -> None:
    words = [f"w{n}" for n in range(300)]
    body = "".join(_tuple(n, w) for n, w in enumerate(words))
    # a blank line and a message over two lines, as Storm may send them
    body += "\n" + _tuple(300, "two lines").replace('"task": 2,', '"task": 2,\n')
    stdin = (_handshake(code.parent / "pids") + body).encode()
    ours = _run(code, ["-m", RUN_MODULE, "echo_components.Echo"], stdin)
    # the process ends as streamparse_run's does: sys.exit, so the user's atexit handlers run
    (code / "atexit-ran").unlink()
    theirs = _run(code, ["-m", "streamparse.run", "echo_components.Echo"], stdin)
    assert (code / "atexit-ran").exists()
    assert ours == theirs
    assert ours.count(b'"command": "emit"') == 301
    assert b'1.10, "a\\nb", "\\u00e9"' in ours  # Decimal through pystorm's own encoding


def _read_until(
    process: subprocess.Popen[bytes], wanted: bytes, seen: bytearray, deadline_s: float = 60.0
) -> None:
    assert process.stdout is not None
    fd = process.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + deadline_s
        while wanted not in seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{wanted!r} never came; the subprocess wrote {bytes(seen)!r}"
            if selector.select(left):
                data = os.read(fd, 1 << 16)
                assert data, f"the subprocess ended; it wrote {bytes(seen)!r}"
                seen += data


def test_nothing_is_held_while_waiting_for_input(
    code: Path, launched: list[subprocess.Popen[bytes]]
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", RUN_MODULE, "echo_components.Echo"],
        cwd=code,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    launched.append(process)
    assert process.stdin is not None
    seen = bytearray()
    process.stdin.write((_handshake(code.parent / "pids") + _tuple(0, "hello")).encode())
    process.stdin.flush()
    # the emit and the ack come while the subprocess waits for the next input (stdin open)
    _read_until(process, b'{"command": "ack", "id": "0"}', seen)
    assert b'"tuple": ["hello"]' in seen
    # what another thread emits comes while the main thread waits for input
    process.stdin.write(_tuple(2, "late").encode())
    process.stdin.flush()
    _read_until(process, b'"tuple": ["from a thread"]', seen)
    # an emit is not kept while the component computes for long (it comes after LINGER_S)
    process.stdin.write(_tuple(4, "slow").encode())
    process.stdin.flush()
    _read_until(process, b'"tuple": ["before a long computation"]', seen)
    assert b'"id": "4"}' not in seen  # not acked: process() still runs
    (code / "release").touch()
    _read_until(process, b'{"command": "ack", "id": "4"}', seen)


def test_msgpack_is_pystorms_own(code: Path) -> None:
    # -s msgpack: pystorm's msgpack serializer over the process's own stdin and stdout
    context = json.loads(_handshake(code.parent / "pids").split("\n")[0])
    messages = [context] + [
        {"id": str(n), "comp": "words", "stream": "default", "task": 2, "tuple": [f"w{n}"]}
        for n in range(0, 40, 2)
    ]
    stdin = b"".join(msgpack.packb(m) for m in messages)

    def answers(argv: list[str]) -> list[object]:
        done = subprocess.run(
            [sys.executable, *argv], cwd=code, input=stdin, capture_output=True, timeout=120
        )
        assert done.returncode == 2, done.stderr.decode()
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        unpacker.feed(done.stdout)
        return [m for m in unpacker if m.get("command") != "log" and "pid" not in m]

    ours = answers(["-m", RUN_MODULE, "-s", "msgpack", "echo_components.Echo"])
    assert ours == answers(["-m", "streamparse.run", "-s", "msgpack", "echo_components.Echo"])
    assert [m["tuple"] for m in ours if m["command"] == "emit"] == [
        [f"w{n}"] for n in range(0, 40, 2)
    ]
