"""Storm's multilang wire formats: JSON (``<json>\\nend\\n``) and msgpack (concatenated objects).

A serializer encodes messages to the subprocess and decodes, incrementally, what the
subprocess writes on its stdout. Unlike Storm, decoding is tolerant: text that is not a
protocol message (a stray ``print`` in user code) comes out as :class:`Stray` items, which the
host logs, instead of ending the component.
"""

from __future__ import annotations

import abc
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import msgpack  # type: ignore[import-untyped]

from heron_core.errors import ConfigurationError

__all__ = [
    "SERIALIZERS",
    "JsonSerializer",
    "MessageTooLarge",
    "MsgpackSerializer",
    "Serializer",
    "Stray",
    "json_encoder",
    "serializer",
    "whole_json_messages",
]

_END = b"end\n"
_SEPARATOR = b"\nend\n"
_OBJECT = (b"{",)
_OBJECT_OR_LIST = (b"{", b"[")
_OBJECT_TYPES = (dict,)
_OBJECT_OR_LIST_TYPES = (dict, list)
_NEWLINE = 0x0A
_MAX_RESYNC_ATTEMPTS = 1000
_OPENERS = re.compile(r"[{\[]")
_QUOTED = 200
_HEAD_BYTES = 4096
_STREAM = re.compile(rb'"stream"\s*:\s*"([^"\\]{0,200})"')


def json_encoder() -> Callable[[object], str]:
    """``json.JSONEncoder().encode`` (ASCII, default separators), with the C encoder built
    once instead of at every call (that build is about half the cost of encoding a small
    message). Circular references raise ValueError, as there, but are found by the recursion
    limit (no shared state: one encoder serves every thread).

    >>> json_encoder()({"command": "ack", "id": "7"})
    '{"command": "ack", "id": "7"}'
    """
    if c_make_encoder is None:  # a Python build without the C accelerator
        return json.JSONEncoder().encode
    chunks = c_make_encoder(
        None,
        json.JSONEncoder().default,
        encode_basestring_ascii,
        None,
        ": ",
        ", ",
        False,
        False,
        True,
    )
    join = "".join

    def encode(value: object) -> str:
        try:
            return join(chunks(value, 0))
        except RecursionError:
            raise ValueError("Circular reference detected (or a value nested too deeply)") from None

    return encode


_encode = json_encoder()


class MessageTooLarge(ValueError):
    """The subprocess wrote more than a message may take without ending it.

    Attributes:
        size: the bytes of the unfinished message held when it was refused.
        stream: the stream its first bytes name (JSON ``emit``), or None.
    """

    def __init__(self, size: int, stream: str | None) -> None:
        super().__init__(f"an unfinished message of {size} bytes")
        self.size = size
        self.stream = stream


@dataclass(frozen=True)
class Stray:
    """Output of the subprocess that is not a protocol message (logged by the host)."""

    text: str


class Serializer(abc.ABC):
    """One direction encodes, the other decodes; a new instance per subprocess.

    ``max_message_bytes`` (None: no bound) bounds what ``decode`` holds of one message: past
    it (give or take one read), ``decode`` raises `MessageTooLarge`.
    """

    name: str
    max_message_bytes: int | None = None

    @abc.abstractmethod
    def encode(self, message: object) -> bytes:
        """The bytes of one message (a dict, or a list of task ids).

        Raises:
            TypeError: the message holds a value the format cannot carry.
        """

    def encode_tuple(
        self, tuple_id: str, component: str | None, stream: str, task: int, values: Any
    ) -> bytes:
        """The bytes of the tuple message ``{"id", "comp", "stream", "task", "tuple"}``
        (what a bolt's subprocess reads as its input).

        Raises:
            TypeError, ValueError: ``values`` holds a value the format cannot carry.
        """
        return self.encode(
            {
                "id": tuple_id,
                "comp": component,
                "stream": stream,
                "task": task,
                "tuple": list(values),
            }
        )

    @abc.abstractmethod
    def decode(self, data: bytes) -> list[dict[str, Any] | Stray]:
        """Feed bytes read from the subprocess; the complete messages (dicts) and stray output
        they contain, in order. Incomplete input is kept for the next call."""


class JsonSerializer(Serializer):
    """Storm's default: UTF-8 JSON, each message followed by a line ``end``.

    >>> s = JsonSerializer()
    >>> s.encode({"command": "next", "id": ""})
    b'{"command": "next", "id": ""}\\nend\\n'
    >>> s.decode(b'hello\\n{"command": "sync"}\\nend\\n{"comm')
    [Stray(text='hello'), {'command': 'sync'}]
    >>> s.decode(b'and": "log", "msg": "hi"}\\nend\\n')
    [{'command': 'log', 'msg': 'hi'}]
    >>> s.encode_tuple("7", "split", "default", 2, ("a", 1))
    b'{"id": "7", "comp": "split", "stream": "default", "task": 2, "tuple": ["a", 1]}\\nend\\n'
    """

    name = "json"

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._middles: dict[tuple[str | None, str, int], str] = {}

    def encode(self, message: object) -> bytes:
        return _encode(message).encode() + b"\nend\n"

    def encode_tuple(
        self, tuple_id: str, component: str | None, stream: str, task: int, values: Any
    ) -> bytes:
        # what encode writes for the message, with the part between the id and the values
        # encoded once per (component, stream, task)
        where = (component, stream, task)
        middle = self._middles.get(where)
        if middle is None:
            middle = self._middles[where] = (
                f', "comp": {_encode(component)}, "stream": {_encode(stream)}, '
                f'"task": {_encode(task)}, "tuple": '
            )
        if not isinstance(values, list | tuple):
            values = list(values)
        text = '{"id": ' + _encode(tuple_id) + middle + _encode(values) + "}\nend\n"
        return text.encode()

    def decode(self, data: bytes) -> list[dict[str, Any] | Stray]:
        buffer = self._buffer
        buffer += data
        out: list[dict[str, Any] | Stray]
        out, taken = whole_json_messages(buffer)
        del buffer[:taken]
        start = scan = 0
        while True:
            at = buffer.find(_END, scan)
            if at < 0:
                break
            if at != start and buffer[at - 1] != _NEWLINE:  # "end\n" inside a line
                scan = at + 1
                continue
            body = bytes(buffer[start : at - 1 if at > start else at])
            start = scan = at + len(_END)
            if body.strip():
                out.extend(_parse_body(body.decode("utf-8", errors="replace")))
        del buffer[:start]
        limit = self.max_message_bytes
        if limit is not None and len(buffer) > limit:
            found = _STREAM.search(bytes(buffer[:_HEAD_BYTES]))
            stream = found.group(1).decode("utf-8", errors="replace") if found else None
            size = len(buffer)
            buffer.clear()
            raise MessageTooLarge(size, stream)
        return out


def whole_json_messages(data: bytes | bytearray, lists: bool = False) -> tuple[list[Any], int]:
    """The complete multilang JSON messages that ``data`` starts with, decoded by one C call,
    and how many bytes they take; ``([], 0)`` unless ``data`` starts with one.

    The common case of both directions: messages back to back, each ``<json>\\nend\\n``, each a
    JSON object (or, with ``lists``, an object or a list: the task ids a host sends). They
    are decoded as one JSON array (a JSON text holds no raw newline, so a separator
    ``\\nend\\n`` is never inside a string). Anything else (stray text, blank lines, a message
    of another kind, a bad one, an array whose items do not match the separators one for one)
    gives ``([], 0)``, for a reader that frames message by message. (The one difference from
    such a reader: junk that cuts a JSON value in two with an ``end`` line and, elsewhere,
    joins two values with a comma could pass as messages where the framing calls it stray
    text; only output that breaks the protocol twice over looks like that.)

    >>> whole_json_messages(b'{"command": "sync"}\\nend\\n{"comm')
    ([{'command': 'sync'}], 24)
    >>> whole_json_messages(b'[1, 2]\\nend\\n', lists=True)
    ([[1, 2]], 11)
    """
    last = data.rfind(_SEPARATOR)
    if last < 0 or data[:1] not in (_OBJECT_OR_LIST if lists else _OBJECT):
        return [], 0
    region = data[:last]
    try:
        items = json.loads(b"[" + region.replace(_SEPARATOR, b",") + b"]")
    except (ValueError, RecursionError):
        return [], 0
    kinds = _OBJECT_OR_LIST_TYPES if lists else _OBJECT_TYPES
    if len(items) != region.count(_SEPARATOR) + 1 or not all(type(item) in kinds for item in items):
        return [], 0
    return items, last + len(_SEPARATOR)


def _parse_body(body: str) -> list[dict[str, Any] | Stray]:
    """One ``end``-terminated body: a message, possibly after stray text.

    Raises:
        ValueError: the body nests too deeply to decode (quoting its start).
    """
    try:
        return [_message(json.loads(body), body)]
    except ValueError:
        pass
    except RecursionError:
        raise ValueError(f"a message nests too deeply to decode: {_quote(body)}") from None
    for attempt, match in enumerate(_OPENERS.finditer(body)):
        if attempt >= _MAX_RESYNC_ATTEMPTS:
            break
        text = body[match.start() :]
        try:
            value = json.loads(text)
        except ValueError:
            continue
        except RecursionError:
            raise ValueError(f"a message nests too deeply to decode: {_quote(body)}") from None
        stray = body[: match.start()].rstrip("\n")
        return [Stray(stray), _message(value, text)] if stray else [_message(value, text)]
    return [Stray(body)]


def _quote(text: str) -> str:
    """The start of ``text``, quoted, for an error message.

    >>> _quote("x" * 500)[-22:]
    "xx'...(500 characters)"
    """
    if len(text) <= _QUOTED:
        return repr(text)
    return f"{text[:_QUOTED]!r}...({len(text)} characters)"


def _message(value: object, text: str) -> dict[str, Any] | Stray:
    return value if isinstance(value, dict) else Stray(text)


class MsgpackSerializer(Serializer):
    """Concatenated msgpack objects, no delimiter (pystorm's ``msgpack`` serializer).

    Stray text cannot be told apart from msgpack reliably; what decodes to something other
    than a map (printed ASCII decodes to small integers) is reported as stray output.

    >>> s = MsgpackSerializer()
    >>> s.decode(s.encode({"command": "sync"}) + b"hi")
    [{'command': 'sync'}, Stray(text='hi')]
    """

    name = "msgpack"

    def __init__(self) -> None:
        self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        self._limit: int | None = None

    def encode(self, message: object) -> bytes:
        packed: bytes = msgpack.packb(message)
        return packed

    def decode(self, data: bytes) -> list[dict[str, Any] | Stray]:
        limit = self.max_message_bytes
        if limit is not None and self._limit != limit:
            # an unpacker's buffer bound is fixed at construction (nothing is buffered yet)
            self._limit = limit
            self._unpacker = msgpack.Unpacker(
                raw=False, strict_map_key=False, max_buffer_size=limit
            )
        try:
            self._unpacker.feed(data)
        except msgpack.BufferFull:
            raise MessageTooLarge(limit or 0, None) from None
        out: list[dict[str, Any] | Stray] = []
        junk = bytearray()
        for value in self._values():
            if isinstance(value, dict):
                if junk:
                    out.append(Stray(junk.decode("utf-8", errors="replace")))
                    junk.clear()
                out.append(value)
            elif isinstance(value, int) and 0 <= value < 128:  # a printed ASCII byte
                junk.append(value)
            else:
                out.append(Stray(repr(value)))
        if junk:
            out.append(Stray(junk.decode("utf-8", errors="replace")))
        return out

    def _values(self) -> Iterator[Any]:
        """The unpacker's complete values; a map keyed by a list or a map (which no Python
        dict can hold) raises ValueError, as the unpacker's own format errors do."""
        try:
            yield from self._unpacker
        except TypeError as exc:
            raise ValueError(f"wrote a msgpack map that cannot be decoded: {exc}") from None


SERIALIZERS: dict[str, type[Serializer]] = {"json": JsonSerializer, "msgpack": MsgpackSerializer}
"""The multilang serializers by name (``topology.multilang.serializer``, ``ShellSpec``)."""


def serializer(name: str) -> Serializer:
    """A fresh serializer called ``name``.

    Raises:
        ConfigurationError: an unknown name (the message lists the known ones).

    >>> serializer("json").name
    'json'
    """
    cls = SERIALIZERS.get(name)
    if cls is None:
        raise ConfigurationError(
            f"unknown multilang serializer {name!r}; known: {', '.join(SERIALIZERS)}"
        )
    return cls()
