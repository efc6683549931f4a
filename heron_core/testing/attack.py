"""A hostile local process against a running topology's TCP ports, for the transport tests.

`daemon_ports` lists every TCP port the topology's daemons advertise (the tmanager's stream
manager and stats ports, every stream manager's data port, every metrics manager's shell port)
from the state manager, so the same
attack runs against any cluster. `attack` sends each of them what an attacker without the
topology's key would: crafted messages whose unpickling would create ``marker`` (a tuple batch
with a pickled payload, addressed to every task), a forged request to pause the topology, a
forged start-back-pressure message, a forged stream manager registration and a request for
the topology's secret key file from a container's shell; over zmq with
no CURVE at all, over zmq with a CURVE key pair of its own (knowing the server's public key),
and as raw bytes on a plain TCP connection. If any of it were read, ``marker`` would exist,
the topology would be paused or throttled, or the counts would change.

>>> pickle.loads(evil_pickle(Path("/nonexistent/x")))
Traceback (most recent call last):
...
FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/x'
"""

from __future__ import annotations

import contextlib
import os
import pickle
import socket
from dataclasses import dataclass
from pathlib import Path

import zmq

from heron_core.network import TopologyKeys, data_frames, encode
from heron_core.proto import (
    metrics_pb2,
    physical_plan_pb2,
    stmgr_pb2,
    tmanager_pb2,
    topology_pb2,
    tuple_pb2,
)
from heron_core.statemgr import StateManager

__all__ = ["Target", "attack", "daemon_ports", "evil_pickle"]

_SEND_TIMEOUT_MS = 2000
_LINGER_MS = 3000


@dataclass(frozen=True)
class Target:
    """One TCP port a daemon listens on: ``what`` names it (``"stmgr-1 data port"``)."""

    what: str
    host: str
    port: int


def daemon_ports(state: StateManager, topology_name: str) -> list[Target]:
    """Every TCP port the topology's daemons advertise in ``state`` (its tmanager location
    and physical plan must exist)."""
    location = state.get_tmanager_location(topology_name)
    plan = state.get_physical_plan(topology_name)
    if location is None or plan is None:
        raise LookupError(f"topology {topology_name!r} has no tmanager location or no plan yet")
    targets = [
        Target("tmanager stream manager port", location.host, location.server_port),
        Target("tmanager stats port", location.host, location.stats_port),
    ]
    targets += [Target(f"{s.id} data port", s.host_name, s.data_port) for s in plan.stmgrs]
    targets += [
        Target(f"metricsmgr-{s.container_id} shell port", s.host_name, s.shell_port)
        for s in plan.stmgrs
        if s.shell_port
    ]
    return targets


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (self.marker,))


def evil_pickle(marker: Path) -> bytes:
    """A pickle whose loading creates the directory ``marker``."""
    return pickle.dumps([[_Evil(marker)]])


def _messages(marker: Path, tasks: list[int], topology_name: str) -> list[list[bytes]]:
    evil = evil_pickle(marker)
    frames = []
    for task in tasks:
        batch = tuple_pb2.TupleBatch(
            src_task=1,
            dest_task=task,
            stream="default",
            src_component="attacker",
            count=1,
            serializer=tuple_pb2.PICKLE,
            values=evil,
        )
        frames.append(data_frames(task, batch.SerializeToString()))
    frames.append(encode(tmanager_pb2.TopologyStateRequest(state=topology_pb2.PAUSED)))
    frames.append(
        encode(stmgr_pb2.StartBackPressureMessage(topology_name=topology_name, stmgr="stmgr-1"))
    )
    stmgr = physical_plan_pb2.StMgr(id="stmgr-1", host_name="192.0.2.99", data_port=9)
    frames.append(encode(tmanager_pb2.StMgrRegisterRequest(stmgr=stmgr)))
    frames.append(encode(metrics_pb2.ShellFileRequest(path="keys/topology.key_secret")))
    return frames


def attack(
    targets: list[Target],
    marker: Path,
    tasks: list[int],
    topology_name: str,
    server_public_key: bytes | None = None,
    plain_tcp: bool = True,
) -> None:
    """Send every crafted message to every target in every way described above; returns
    once each connection has been tried (zmq sockets: once their messages were delivered or
    3 s have passed).

    Args:
        targets: from `daemon_ports`.
        marker: the path the crafted pickle would create.
        tasks: the task ids to address tuple batches to.
        topology_name: for the forged control messages.
        server_public_key: the topology's public key, for the attacker with a key pair of
            its own (None: skip that attacker).
        plain_tcp: also send the messages' bytes on a plain TCP connection.
    """
    messages = _messages(marker, tasks, topology_name)
    raw = b"".join(part for frames in messages for part in frames)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    sockets: list[zmq.Socket[bytes]] = []
    try:
        stranger = TopologyKeys(*zmq.curve_keypair())
        for target in targets:
            endpoint = f"tcp://{target.host}:{target.port}"
            for kind in (zmq.DEALER, zmq.PUSH):
                for keyed in (False, True):
                    if keyed and server_public_key is None:
                        continue
                    sock = context.socket(kind)
                    sock.setsockopt(zmq.SNDTIMEO, _SEND_TIMEOUT_MS)
                    sock.setsockopt(zmq.LINGER, _LINGER_MS)  # time to deliver, if let in
                    if keyed:
                        assert server_public_key is not None
                        sock.curve_serverkey = server_public_key
                        sock.curve_publickey = stranger.public
                        sock.curve_secretkey = stranger.secret
                    sock.connect(endpoint)
                    sockets.append(sock)
                    for frames in messages:
                        with contextlib.suppress(zmq.Again):  # never connected: fine
                            sock.send_multipart(frames)
            if not plain_tcp:
                continue
            with (
                contextlib.suppress(OSError),
                socket.create_connection((target.host, target.port), timeout=5) as plain,
            ):
                plain.sendall(raw)
                with contextlib.suppress(OSError):
                    plain.recv(64)
    finally:
        for sock in sockets:
            sock.close()
        context.term()
