"""The multilang wire formats: framing, incremental decoding, stray output."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.errors import ConfigurationError
from heron_core.multilang import (
    JsonSerializer,
    MsgpackSerializer,
    Stray,
    _serializers,
    json_encoder,
    serializer,
)

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=20)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
_messages = st.lists(
    st.fixed_dictionaries({"command": st.sampled_from(["emit", "ack", "sync", "log"])}).flatmap(
        lambda base: st.dictionaries(st.text(max_size=8), _values, max_size=3).map(
            lambda extra: {**extra, **base}
        )
    ),
    max_size=6,
)


def _decode_in_chunks(codec: Any, data: bytes, cuts: list[int]) -> list[Any]:
    out: list[Any] = []
    start = 0
    for cut in [*sorted({c % (len(data) + 1) for c in cuts}), len(data)]:
        out.extend(codec.decode(data[start:cut]))
        start = cut
    return out


@given(_messages, st.lists(st.integers(min_value=0), max_size=8))
def test_json_messages_survive_any_chunking(
    messages: list[dict[str, Any]], cuts: list[int]
) -> None:
    data = b"".join(JsonSerializer().encode(m) for m in messages)
    assert _decode_in_chunks(JsonSerializer(), data, cuts) == messages


@given(_messages, st.lists(st.integers(min_value=0), max_size=8))
def test_msgpack_messages_survive_any_chunking(
    messages: list[dict[str, Any]], cuts: list[int]
) -> None:
    data = b"".join(MsgpackSerializer().encode(m) for m in messages)
    assert _decode_in_chunks(MsgpackSerializer(), data, cuts) == messages


@given(
    _messages,
    # a line of blanks only is JSON whitespace before the message, not stray text
    st.lists(
        st.text(alphabet="abc xyz:;.!?}]", min_size=1, max_size=12).filter(str.strip),
        max_size=3,
    ),
)
def test_json_stray_lines_are_reported_and_messages_kept(
    messages: list[dict[str, Any]], strays: list[str]
) -> None:
    """Printed lines (here without '{' or '[') before each message come out as Stray."""
    codec = JsonSerializer()
    noise = "".join(line + "\n" for line in strays).encode()
    decoded = codec.decode(b"".join(noise + codec.encode(m) for m in messages))
    assert [d for d in decoded if not isinstance(d, Stray)] == messages
    expected = ["\n".join(strays)] * len(messages) if strays else []
    assert [d.text for d in decoded if isinstance(d, Stray)] == expected


def test_json_multiline_bodies_and_text_glued_to_a_message() -> None:
    codec = JsonSerializer()
    pretty = b'{\n  "command": "emit",\n  "tuple": [1]\n}\nend\n'
    glued = b'progress: 50%{"command": "sync"}\nend\n'
    assert codec.decode(pretty + glued) == [
        {"command": "emit", "tuple": [1]},
        Stray("progress: 50%"),
        {"command": "sync"},
    ]


def test_json_non_object_bodies_and_empty_bodies() -> None:
    codec = JsonSerializer()
    assert codec.decode(b"42\nend\nend\n\n\nend\n") == [Stray("42")]
    assert codec.decode(b"friend\nend\n") == [Stray("friend")]


def test_msgpack_printed_text_is_stray() -> None:
    codec = MsgpackSerializer()
    data = b"hello\n" + codec.encode({"command": "sync"}) + codec.encode([1, 2])
    assert codec.decode(data) == [Stray("hello\n"), {"command": "sync"}, Stray("[1, 2]")]


def test_encoding_what_the_format_cannot_carry_raises() -> None:
    with pytest.raises(TypeError):
        JsonSerializer().encode({"tuple": [b"bytes"]})
    with pytest.raises(TypeError):
        MsgpackSerializer().encode({"tuple": [object()]})


def test_unknown_serializer_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="'thrift'; known: json, msgpack"):
        serializer("thrift")


@given(
    st.text(max_size=8),
    st.none() | st.text(max_size=8),
    st.text(max_size=8),
    st.integers(-1, 2**31),
    st.lists(_values, max_size=4),
    st.booleans(),
)
def test_a_tuple_message_is_its_dict_encoded(
    tuple_id: str, component: str | None, stream: str, task: int, values: list[Any], as_tuple: bool
) -> None:
    # encode_tuple (the bolt host's input path) writes what encode writes for the same dict
    message = {"id": tuple_id, "comp": component, "stream": stream, "task": task, "tuple": values}
    for codec in (JsonSerializer(), MsgpackSerializer()):
        for _ in range(2):  # the second time from the JSON serializer's cache
            encoded = codec.encode_tuple(
                tuple_id, component, stream, task, tuple(values) if as_tuple else values
            )
            assert encoded == codec.encode(message)


_bodies = st.lists(
    st.one_of(
        _messages.map(lambda ms: b"".join(JsonSerializer().encode(m) for m in ms)),
        # printed lines, non-object bodies, blank lines, empty bodies, JSON over two lines
        st.text(alphabet='abc {}[]",:0\n', max_size=12).map(str.encode),
        st.sampled_from([b"42\nend\n", b"end\n", b"\n", b"[1, 2]\nend\n", b'{"a":\n1}\nend\n']),
    ),
    max_size=6,
)


@given(_bodies, st.lists(st.integers(min_value=0), max_size=4))
def test_json_decoding_whole_chunks_at_once_changes_nothing(
    parts: list[bytes], cuts: list[int]
) -> None:
    """A run of whole messages is decoded by one C call (`whole_json_messages`); the result is
    what the message-by-message framing gives, for any mix of messages and other output."""
    data = b"".join(parts)
    fast = _decode_in_chunks(JsonSerializer(), data, cuts)
    with mock.patch.object(_serializers, "whole_json_messages", lambda data: ([], 0)):
        framed = _decode_in_chunks(JsonSerializer(), data, cuts)
    assert fast == framed


def test_the_shared_encoder_writes_what_json_writes() -> None:
    value = {"t": ["é", 1.5, None, True, float("nan"), {"k": [1, "\n"]}], "id": "7"}
    assert json_encoder()(value) == json.JSONEncoder().encode(value)
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular"):
        json_encoder()(looped)
    with pytest.raises(TypeError):
        json_encoder()({"b": b"bytes"})
