"""Message framing shared by every daemon (zmq multipart messages carrying protobufs).

A control message is two frames: the protobuf's full type name and its serialized bytes; the
receiver dispatches on the type name to the one handler registered for that type. Tuple data is
three frames, ``[DATA, dest_task (4 bytes), TupleBatch bytes]``, so a stream manager routes a batch
by reading four bytes and forwards the payload frame without parsing it. Acking traffic is three
frames too, ``[ACKS, spout_task, AckBatch bytes]``, routed to the stream manager of the spout task.
The ipc sockets of a container's stream manager are named by `task_endpoint` and
`metrics_endpoint` (in an owner-only directory); every TCP socket is secured by a `Transport`
with the topology's CURVE key pair (`TopologyKeys`).
"""

from heron_core.network._endpoints import free_port, metrics_endpoint, task_endpoint
from heron_core.network._framing import (
    ACKS,
    DATA,
    Dispatcher,
    ProtocolError,
    ack_frames,
    data_frames,
    decode,
    encode,
    unpack_task,
)
from heron_core.network._security import (
    CURVE_KEY,
    KEYS_DIR,
    TopologyKeys,
    Transport,
    curve_enabled,
)

__all__ = [
    "ACKS",
    "CURVE_KEY",
    "DATA",
    "KEYS_DIR",
    "Dispatcher",
    "ProtocolError",
    "TopologyKeys",
    "Transport",
    "ack_frames",
    "curve_enabled",
    "data_frames",
    "decode",
    "encode",
    "free_port",
    "metrics_endpoint",
    "task_endpoint",
    "unpack_task",
]
