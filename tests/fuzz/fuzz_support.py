"""What the fuzz tests share: Hypothesis strategies for hostile frames, fake zmq sockets that
hand a daemon's reader a scripted list of messages, and a stream manager loaded in-process
from a local state manager (its sockets bound, its loop never run)."""

from __future__ import annotations

import contextlib
import random
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import zmq
from hypothesis import strategies as st

from heron_core.config import build_config
from heron_core.network import ACKS, DATA
from heron_core.network._framing import _TYPES
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.statemgr import LocalFileSystemStateManager
from heron_core.stmgr._manager import StMgrArgs, StreamManager
from heron_core.testing.topologies import word_count_proto

TYPE_NAMES = sorted(_TYPES)
"""The full name of every message type a daemon may be sent (the first frame)."""


def _frame() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=64),
        st.sampled_from([DATA, ACKS, b"", b"\xff" * 8, *TYPE_NAMES]),
        st.integers(-(2**31), 2**31 - 1).map(lambda n: n.to_bytes(4, "little", signed=True)),
    )


def _typed_garbage() -> st.SearchStrategy[list[bytes]]:
    """A known type name with a payload that may not be a message of that type."""
    return st.tuples(st.sampled_from(TYPE_NAMES), st.binary(max_size=128)).map(list)


def _routed_garbage() -> st.SearchStrategy[list[bytes]]:
    """A data or ack message (kind, 4-byte task) with a garbage payload or wrong frame count."""
    return st.tuples(
        st.sampled_from([DATA, ACKS]),
        st.integers(-3, 12).map(lambda n: n.to_bytes(4, "little", signed=True)),
        st.lists(st.binary(max_size=96), max_size=3),
    ).map(lambda t: [t[0], t[1], *t[2]])


MESSAGES: st.SearchStrategy[list[bytes]] = st.one_of(
    st.lists(_frame(), min_size=1, max_size=5), _typed_garbage(), _routed_garbage()
)
"""Multipart messages as a hostile or broken peer sends them."""


class FakeSocket:
    """Stands in for a zmq socket: ``recv_multipart`` hands out ``inbox`` in order and then
    raises `zmq.Again`; ``send_multipart`` records what was sent."""

    def __init__(self, inbox: Iterable[Sequence[bytes]] = ()) -> None:
        self.inbox: deque[list[bytes]] = deque(list(m) for m in inbox)
        self.sent: list[list[bytes]] = []

    def recv_multipart(self, flags: int = 0) -> list[bytes]:
        if not self.inbox:
            raise zmq.Again()
        return self.inbox.popleft()

    def send_multipart(self, frames: Sequence[Any], flags: int = 0) -> None:
        self.sent.append([bytes(f) for f in frames])


def small_topology(config: dict[str, Any] | None = None) -> topology_pb2.Topology:
    """Spout "word" (task 1) feeding bolt "count" (tasks 2, 3), all in container 1."""
    return word_count_proto(
        "fz",
        "fz-1",
        config=build_config(
            topology_config={"heron.network.curve.enabled": False, **(config or {})}
        ),
    )


def one_container() -> packing_plan_pb2.PackingPlan:
    """The three tasks of `small_topology` in container 1."""
    instances = [
        packing_plan_pb2.InstancePlan(component_name=c, task_id=t, component_index=i)
        for c, t, i in (("word", 1, 0), ("count", 2, 0), ("count", 3, 1))
    ]
    return packing_plan_pb2.PackingPlan(
        id="fz-plan", containers=[packing_plan_pb2.ContainerPlan(id=1, instances=instances)]
    )


@contextlib.contextmanager
def loaded_stmgr(root: Path, config: dict[str, Any] | None = None) -> Iterator[StreamManager]:
    """A stream manager of `small_topology`, loaded and bound under ``root`` (ipc sockets and
    a TCP data port), its loop not started; every socket is closed afterwards."""
    state = LocalFileSystemStateManager({"heron.statemgr.root.path": str(root / "state")}, "local")
    state.start()
    state.set_topology("fz", small_topology(config))
    state.set_packing_plan("fz", one_container())
    endpoints = root / "ipc"
    endpoints.mkdir(mode=0o700, exist_ok=True)
    args = StMgrArgs("fz", "fz-1", "local", 1, root, f"ipc://{endpoints}/")
    manager = StreamManager(args, state)
    try:
        manager._load()
        manager._bind()
        yield manager
    finally:
        for close in reversed(manager._closers):
            close()
        state.close()


# --- a hostile peer on a real port ------------------------------------------------------------

_GREETING = b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0") + b"\0" * 32


def _ready(socket_type: bytes) -> bytes:
    body = b"\x05READY" + b"\x0bSocket-Type" + len(socket_type).to_bytes(4, "big") + socket_type
    return b"\x04" + bytes([len(body)]) + body


def huge_frame_header(
    host: str, port: int, socket_type: bytes, size: int, noticed: Callable[[int], None]
) -> int:
    """Open a plain ZMTP 3.0 connection (NULL mechanism) to ``host:port`` as a
    ``socket_type`` peer, wait for the server's handshake and for ``noticed(local port)`` to
    return (the daemon logged the connection), then announce one frame of ``size`` bytes (and
    send none of it); the local port it connected from."""
    with socket.create_connection((host, port), timeout=10) as raw:
        local_port: int = raw.getsockname()[1]
        raw.sendall(_GREETING + _ready(socket_type))
        received = b""
        while len(received) < len(_GREETING) + 2:  # the server's greeting and READY header
            chunk = raw.recv(4096)
            if not chunk:
                break
            received += chunk
        noticed(local_port)
        raw.sendall(b"\x02" + size.to_bytes(8, "big"))
        with contextlib.suppress(OSError):
            raw.recv(64)  # the server closes the connection
        return local_port


def random_bytes(host: str, port: int, connections: int, seed: int) -> None:
    """``connections`` TCP connections to ``host:port``, each sending 4 KiB of random bytes."""
    rng = random.Random(seed)
    for _ in range(connections):
        with (
            contextlib.suppress(OSError),
            socket.create_connection((host, port), timeout=5) as raw,
        ):
            raw.sendall(rng.randbytes(4096))


GARBAGE_MESSAGES: list[list[bytes]] = [
    [b""],
    [b"\x00" * 3],
    [DATA, b"\x01\x00", b"x"],  # a short task id
    [DATA, b"\xff\xff\xff\x7f", b"x"],  # a task nobody runs
    [DATA, b"\x02\x00\x00\x00"],  # no payload
    [ACKS, b"\x01\x00\x00\x00", b"\xff\xff\xff"],  # acks that do not parse
    [b"heron.stmgr.StartBackPressureMessage", b"\xff\xff"],  # a known type, bad payload
    [b"heron.tmanager.StMgrRegisterRequest", b"\x0a\xff\x01"],
    [b"heron.metrics.ShellFileRequest", b"\x12\xff"],
    [b"no.such.Type", b""],
    [b"heron.tmanager.MetricsRequest", b"", b"extra"],
]
"""Messages no daemon may act on (none is a valid control message: with CURVE off a valid
forged one would be obeyed, which is what CURVE is for)."""


def send_garbage(context: zmq.Context[zmq.Socket[bytes]], host: str, port: int, kind: int) -> None:
    """Send `GARBAGE_MESSAGES` to ``host:port`` over a plain zmq socket of type ``kind``
    (PUSH for a PULL port, DEALER for a ROUTER port); waits up to 5 s for delivery."""
    sock = context.socket(kind)
    sock.setsockopt(zmq.LINGER, 5000)
    sock.setsockopt(zmq.SNDTIMEO, 5000)
    try:
        sock.connect(f"tcp://{host}:{port}")
        for frames in GARBAGE_MESSAGES:
            with contextlib.suppress(zmq.Again):
                sock.send_multipart(frames)
    finally:
        sock.close()
