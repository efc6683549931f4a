"""Message framing shared by every daemon (zmq multipart messages carrying protobufs).

A control message is two frames: the protobuf's full type name and its serialized bytes; the
receiver dispatches on the type name to the one handler registered for that type. Tuple data is
three frames, ``[DATA, dest_task (4 bytes), TupleBatch bytes]``, so a stream manager routes a batch
by reading four bytes and forwards the payload frame without parsing it. Acking traffic is three
frames too, ``[ACKS, spout_task, AckBatch bytes]``, routed to the stream manager of the spout task.
The ipc sockets of a container's stream manager are named by `task_endpoint` and
`metrics_endpoint` (in an owner-only directory); every TCP socket is secured by a `Transport`
with the topology's CURVE key pair (`TopologyKeys`) and reads and writes no frame over
``heron.network.max.frame.bytes`` (`check_frames`; a peer announcing a bigger one is dropped by
zmq before the buffer is allocated, and the daemon logs the connection's end with the peer).
"""

from typing import TYPE_CHECKING, Any

from heron_core.network._endpoints import free_port, metrics_endpoint, reserve_port, task_endpoint
from heron_core.network._framing import (
    ACKS,
    DATA,
    DEFAULT_MAX_FRAME_BYTES,
    MAX_FRAME_KEY,
    Dispatcher,
    FrameTooLargeError,
    ProtocolError,
    ack_frames,
    check_frames,
    data_frames,
    decode,
    encode,
    max_frame_bytes,
    unpack_task,
)

__all__ = [
    "ACKS",
    "CURVE_KEY",
    "DATA",
    "DEFAULT_MAX_FRAME_BYTES",
    "KEYS_DIR",
    "MAX_FRAME_KEY",
    "Dispatcher",
    "FrameTooLargeError",
    "ProtocolError",
    "TopologyKeys",
    "Transport",
    "ack_frames",
    "check_frames",
    "curve_enabled",
    "data_frames",
    "decode",
    "encode",
    "free_port",
    "max_frame_bytes",
    "metrics_endpoint",
    "reserve_port",
    "task_endpoint",
    "unpack_task",
]

if TYPE_CHECKING:
    from heron_core.network._security import (
        CURVE_KEY,
        KEYS_DIR,
        TopologyKeys,
        Transport,
        curve_enabled,
    )

_SECURITY = frozenset({"CURVE_KEY", "KEYS_DIR", "TopologyKeys", "Transport", "curve_enabled"})


def __getattr__(name: str) -> Any:
    """The CURVE names, imported on first use: an instance process (ipc only) never needs
    them, nor the pyzmq authenticator and asyncio they import (about a tenth of a process's
    start-up)."""
    if name in _SECURITY:
        from heron_core.network import _security

        return getattr(_security, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
