"""A shell component emitting a tuple past ``heron.instance.max.tuple.bytes``: the same error
as a Python component's (the instance's router refuses it, naming component, stream, size and
key); a message too big to hold any tuple under the limit fails the component when the reader
has held that much, naming the key and the stream, before it is read whole."""

from __future__ import annotations

import random
import sys
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from instance_support import physical_plan
from multilang_support import SCRIPTS, FakeContext, IdleFailures

from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder
from heron_core.errors import UserCodeError
from heron_core.instance._acking import AckSender, InFlight
from heron_core.instance._anchoring import EdgeIds
from heron_core.instance._router import MAX_TUPLE_KEY, Router
from heron_core.instance._spout import SpoutCollector
from heron_core.multilang import ShellSpoutHost
from heron_core.multilang._process import max_message_bytes
from heron_core.multilang._serializers import MessageTooLarge, serializer

LIMIT = 4096

SPOUT = """\
import storm


class Big(storm.Spout):
    def initialize(self, conf, context):
        self.size = conf["probe.size"]

    def nextTuple(self):
        storm.emit(["s" * self.size], stream="blobs")


Big().run()
"""


class Src(Spout):
    outputs = [Stream(["blob"], name="blobs")]


class Sink(Bolt):
    def process(self, tup: Any) -> None:
        pass


class Wire:
    def __init__(self) -> None:
        self.sizes: list[int] = []

    def send_data(self, task: int, batch: bytes) -> None:
        self.sizes.append(len(batch))

    def send(self, frames: Any) -> None:
        pass


def collector() -> tuple[SpoutCollector, Wire]:
    b = TopologyBuilder("shell-limits")
    src = b.add_spout("big", Src, par=1)
    b.add_bolt("sink", Sink, par=1, inputs={src["blobs"]: Grouping.SHUFFLE})
    wire = Wire()
    router = Router(
        physical_plan(b.build()), "big", 1, 1, wire, 1, lambda *a: None, max_tuple_bytes=LIMIT
    )
    spout = SpoutCollector(
        router,
        AckSender(wire),  # type: ignore[arg-type]
        InFlight(lambda: 0.0),
        deque(),
        EdgeIds(random.Random(1).getrandbits),
    )
    return spout, wire


def run_spout(tmp_path: Path, size: int, serializer: str) -> tuple[ShellSpoutHost, Wire]:
    (tmp_path / "big_spout.py").write_text(SPOUT)
    host = ShellSpoutHost(
        [sys.executable, "big_spout.py"],
        serializer,
        cwd=tmp_path,
        env={"PYTHONPATH": str(SCRIPTS)},
        on_idle_failure=IdleFailures(),
    )
    spout, wire = collector()
    host.start({"probe.size": size, MAX_TUPLE_KEY: LIMIT}, FakeContext("big"), spout)
    return host, wire


def test_a_shell_spout_s_oversized_tuple_gets_the_router_s_error(tmp_path: Path) -> None:
    host, wire = run_spout(tmp_path, 6000, "json")
    try:
        with pytest.raises(UserCodeError) as info:
            host.next_tuple()
    finally:
        host.close()
    message = str(info.value)
    assert "topology 'shell-limits', component 'big', task 1" in message
    assert "a tuple emitted on stream 'blobs' is 60" in message
    assert f"over the {LIMIT}-byte limit of {MAX_TUPLE_KEY}; it was not sent" in message
    assert wire.sizes == []


def test_a_message_too_big_for_any_tuple_under_the_limit_fails_the_component_unread(
    tmp_path: Path,
) -> None:
    bound = max_message_bytes(LIMIT)
    host, wire = run_spout(tmp_path, bound + (1 << 20), "json")
    try:
        with pytest.raises(UserCodeError) as info:
            host.next_tuple()
    finally:
        host.close()
    message = str(info.value)
    assert "component 'big', task 3: multilang subprocess" in message  # FakeContext's task
    assert f"more than any tuple under {MAX_TUPLE_KEY} ({LIMIT} bytes) takes" in message
    assert "(an emit on stream 'blobs')" in message
    assert wire.sizes == []


@pytest.mark.parametrize("name", ["json", "msgpack"])
def test_each_serializer_holds_no_more_than_its_bound_of_one_message(name: str) -> None:
    codec = serializer(name)
    codec.max_message_bytes = 1 << 16
    small = codec.encode({"command": "emit", "stream": "s", "tuple": ["x" * 1000]})
    assert codec.decode(small) == [{"command": "emit", "stream": "s", "tuple": ["x" * 1000]}]
    big = codec.encode({"command": "emit", "stream": "s", "tuple": ["x" * (1 << 17)]})
    with pytest.raises(MessageTooLarge) as info:
        for start in range(0, len(big), 1 << 14):  # as the reader gets it, in chunks
            codec.decode(big[start : start + (1 << 14)])
    assert info.value.size <= (1 << 16) + (1 << 14)
    assert info.value.stream == ("s" if name == "json" else None)
