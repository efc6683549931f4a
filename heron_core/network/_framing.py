from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message

from heron_core.config import REGISTRY, setting
from heron_core.errors import HeronError
from heron_core.proto import (
    ckptmgr_pb2,
    metrics_pb2,
    stmgr_pb2,
    tmanager_pb2,
    tuple_pb2,
)

MAX_FRAME_KEY = "heron.network.max.frame.bytes"
"""The config key bounding every frame a daemon's TCP socket reads or writes."""
DEFAULT_MAX_FRAME_BYTES: int = REGISTRY[MAX_FRAME_KEY].default
"""Its default (the registry's)."""

DATA = b"heron.tuple.TupleBatch"
ACKS = b"heron.tuple.AckBatch"
_TASK = struct.Struct("<i")

M = TypeVar("M", bound=Message)

_TYPES: dict[bytes, type[Message]] = {}
for _module in (stmgr_pb2, tmanager_pb2, tuple_pb2, metrics_pb2, ckptmgr_pb2):
    for _desc in _module.DESCRIPTOR.message_types_by_name.values():
        _TYPES[_desc.full_name.encode()] = getattr(_module, _desc.name)


class ProtocolError(HeronError):
    """A peer sent frames that are not a message of this protocol."""


class FrameTooLargeError(ProtocolError):
    """A frame is bigger than ``heron.network.max.frame.bytes`` allows: it is not sent."""


def check_frames(frames: Sequence[bytes], limit: int, what: str) -> None:
    """Refuse to send ``frames`` (described by ``what``) if one is over ``limit`` bytes: the
    receiving daemon would drop the whole connection, and what else was queued on it.

    Raises:
        FrameTooLargeError: naming ``what``, the frame's size, the limit and the key.

    >>> check_frames([b"t", b"x" * 10], 8, "a tuple batch of component 'split'")
    Traceback (most recent call last):
    ...
    heron_core.network._framing.FrameTooLargeError: a tuple batch of component 'split': frame 2 \
is 10 bytes, over the 8-byte limit (heron.network.max.frame.bytes); it is not sent
    """
    for index, part in enumerate(frames):
        if len(part) > limit:
            raise FrameTooLargeError(
                f"{what}: frame {index + 1} is {len(part)} bytes, over the {limit}-byte limit "
                f"({MAX_FRAME_KEY}); it is not sent"
            )


def max_frame_bytes(config: Mapping[str, Any]) -> int:
    """The frame size limit of the topology whose config is ``config``.

    >>> max_frame_bytes({}), max_frame_bytes({MAX_FRAME_KEY: 4 << 20})
    (104857600, 4194304)
    """
    return int(setting(config, MAX_FRAME_KEY))


def encode(message: Message) -> list[bytes]:
    """Frames for one control message.

    >>> from heron_core.proto import stmgr_pb2
    >>> frames = encode(stmgr_pb2.StrMgrHelloRequest(stmgr="stmgr-1"))
    >>> decode(frames).stmgr
    'stmgr-1'
    """
    return [message.DESCRIPTOR.full_name.encode(), message.SerializeToString()]


def decode(frames: Sequence[bytes]) -> Message:
    """Parse the frames of one control message (the inverse of :func:`encode`)."""
    if len(frames) != 2:
        raise ProtocolError(f"expected 2 frames (type, payload), got {len(frames)}")
    cls = _TYPES.get(bytes(frames[0]))
    if cls is None:
        raise ProtocolError(f"unknown message type {bytes(frames[0])[:80]!r}")
    try:
        return cls.FromString(bytes(frames[1]))
    except DecodeError as exc:
        raise ProtocolError(f"cannot parse {cls.DESCRIPTOR.full_name}: {exc}") from exc


def data_frames(dest_task: int, batch: bytes) -> list[bytes]:
    """Frames for one serialized ``TupleBatch`` bound for ``dest_task``."""
    return [DATA, _TASK.pack(dest_task), batch]


def ack_frames(spout_task: int, batch: bytes) -> list[bytes]:
    """Frames for one serialized ``AckBatch`` about the trees of ``spout_task``."""
    return [ACKS, _TASK.pack(spout_task), batch]


def unpack_task(frame: bytes | memoryview) -> int:
    """The destination task id of a data message's second frame."""
    return int(_TASK.unpack(frame)[0])


class Dispatcher:
    """One handler per message type.

    >>> from heron_core.proto import stmgr_pb2
    >>> seen = []
    >>> d = Dispatcher("test")
    >>> d.register(stmgr_pb2.StrMgrHelloRequest, lambda msg, *ctx: seen.append(msg.stmgr))
    >>> d.dispatch(encode(stmgr_pb2.StrMgrHelloRequest(stmgr="stmgr-2")))
    >>> seen
    ['stmgr-2']
    """

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._handlers: dict[bytes, Callable[..., Any]] = {}

    def register(self, cls: type[M], handler: Callable[..., Any]) -> None:
        """Route messages of type ``cls`` to ``handler(message, *context)``."""
        name = cls.DESCRIPTOR.full_name.encode()
        if name in self._handlers:
            raise ValueError(f"{self._owner}: a handler for {cls.DESCRIPTOR.full_name} exists")
        self._handlers[name] = handler

    def dispatch(self, frames: Sequence[bytes], *context: Any) -> Any:
        """Decode ``frames`` and call the handler of its type with ``context`` appended."""
        message = decode(frames)
        handler = self._handlers.get(message.DESCRIPTOR.full_name.encode())
        if handler is None:
            raise ProtocolError(f"{self._owner} has no handler for {message.DESCRIPTOR.full_name}")
        return handler(message, *context)
