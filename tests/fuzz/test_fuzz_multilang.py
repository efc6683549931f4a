"""Hypothesis against what a multilang subprocess writes on its stdout, in-process: the
decoders (JSON and msgpack) and what the hosts make of every decoded message. Text that is not
protocol is stray output (logged); a message that breaks the protocol (an emit with a
mistyped field, a spout's unknown command) fails the component with a `UserCodeError` quoting
the message; nothing else escapes."""

from __future__ import annotations

import json
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heron_core.errors import UserCodeError
from heron_core.multilang import ShellBoltHost, ShellSpoutHost
from heron_core.multilang._serializers import JsonSerializer, MsgpackSerializer, Stray

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
DEEP = "[" * 1500 + "]" * 1500

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6))
VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)
FIELDS = ["command", "id", "tuple", "stream", "task", "anchors", "need_task_ids", "msg",
          "level", "name", "params", "pid"]  # fmt: skip
COMMANDS = ["emit", "ack", "fail", "log", "error", "metrics", "sync", "next", "bogus", None, 3]
MESSAGES = st.builds(
    lambda command, fields: {"command": command, **fields},
    st.sampled_from(COMMANDS),
    st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=5),
)
"""Protocol-shaped messages with any fields of any type."""


@FUZZ
@given(st.lists(st.binary(max_size=80), max_size=5))
@example([(DEEP + "\nend\n").encode()])  # regression: a raw RecursionError
@example([b'{"command": "sync"}\nen', b"d\n\xff\xfe\nend\n"])
def test_the_json_decoder_gives_messages_and_stray_text_or_a_quoting_value_error(
    chunks: list[bytes],
) -> None:
    decoder = JsonSerializer()
    for chunk in chunks:
        try:
            items = decoder.decode(chunk)
        except ValueError as exc:
            assert "nests too deeply" in str(exc) and "'[[[" in str(exc)
            return
        assert all(isinstance(i, dict | Stray) for i in items)


@FUZZ
@given(st.lists(st.binary(max_size=80), max_size=5))
@example([b"\xc1"])  # a byte msgpack never uses
@example([b"\x91" * 2000])  # nested arrays
@example([b"\x81\x90\x00"])  # regression: a map keyed by a list raised a raw TypeError
def test_the_msgpack_decoder_gives_messages_or_a_value_error(chunks: list[bytes]) -> None:
    decoder = MsgpackSerializer()
    for chunk in chunks:
        try:
            items = decoder.decode(chunk)
        except ValueError:  # msgpack's own errors (the reader fails the component with it)
            return
        assert all(isinstance(i, dict | Stray) for i in items)


class _Process:
    """Stands in for the subprocess: records what the host writes back."""

    def __init__(self) -> None:
        self.written: list[Any] = []

    def write(self, message: object) -> None:
        self.written.append(message)


class _Context:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def report_error(self, error: str) -> None:
        self.errors.append(error)

    def register_metric(self, name: str, metric: object, interval: float) -> None:
        pass


class _Collector:
    def __init__(self) -> None:
        self.emitted: list[tuple[Any, ...]] = []

    def emit(self, *args: Any) -> list[int]:
        values, stream = args[0], args[1] if isinstance(args[1], str) else args[2]
        assert isinstance(values, list) and isinstance(stream, str)
        self.emitted.append(args)
        return [5]

    def ack(self, handle: object) -> None:
        pass

    def fail(self, handle: object) -> None:
        pass


def _wired(host: Any) -> Any:
    host._process = _Process()
    host._context = _Context()
    host._config = {}
    host._collector = _Collector()
    host.where = "topology 'fz', component 'shell', task 3"
    return host


@FUZZ
@given(MESSAGES)
@example({"command": "emit", "tuple": [1], "stream": 5})  # regression: a raw TypeError deeper
@example({"command": "emit", "tuple": [1], "anchors": 1.5})  # regression: a raw TypeError
@example({"command": "emit", "tuple": [1], "anchors": {"a": 1}})
def test_a_bolt_host_applies_a_message_or_fails_quoting_it(message: dict[str, Any]) -> None:
    host = _wired(ShellBoltHost(["true"]))
    host._inputs = {"1": object()}
    try:
        host._handle(message)
    except UserCodeError as exc:
        assert repr(message) in str(exc) and "component 'shell'" in str(exc)


@FUZZ
@given(MESSAGES)
@example({"command": "emit", "tuple": [1], "id": [1, 2]})  # regression: an unhashable id
@example({"command": "emit", "tuple": [1], "stream": ["s"]})
def test_a_spout_host_applies_a_message_or_fails_quoting_it(message: dict[str, Any]) -> None:
    host = _wired(ShellSpoutHost(["true"]))
    replies = [message, {"command": "sync"}]

    class _Reading(_Process):
        def read(self) -> dict[str, Any]:
            return replies.pop(0)

        def busy(self) -> Any:
            import contextlib

            return contextlib.nullcontext()

    host._process = _Reading()
    try:
        host.next_tuple()
    except UserCodeError as exc:
        assert repr(message) in str(exc)


@pytest.mark.parametrize("serializer", [JsonSerializer, MsgpackSerializer])
def test_a_message_survives_the_round_trip(serializer: type) -> None:
    codec = serializer()
    message = {"command": "emit", "tuple": [1, "a"], "stream": "s"}
    assert codec.decode(codec.encode(message)) == [message]
    assert json.loads(json.dumps(message)) == msgpack.unpackb(msgpack.packb(message))
