"""The scheduler service's request files (``W/scheduler-requests/``, owner-only): whatever a file
holds, reading it gives a request or None (the service answers "not a request"), never an
exception in the service; an unreadable answer is a failed answer, not a crash of the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from heron_core.scheduler._requests import (
    REQUESTS_DIR,
    RestartRequest,
    UpdateRequest,
    pending_requests,
    read_answer,
    write_request,
)

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_DOCUMENTS = (
    st.binary(max_size=200)
    | _JSON.map(lambda v: json.dumps(v).encode())
    | st.fixed_dictionaries({"update": _JSON}).map(lambda v: json.dumps(v).encode())
    | st.fixed_dictionaries(
        {
            "update": st.fixed_dictionaries(
                {"topology": st.text(max_size=12), "packing_plan": st.text(max_size=12)}
            )
        }
    ).map(lambda v: json.dumps(v).encode())
)


@settings(max_examples=200, deadline=None)
@given(_DOCUMENTS)
@example(b"[" * 100_000)  # nested past the parser's depth
@example(b"\xff\xfe")  # not UTF-8
@example(b'{"restart": true}')
@example(b'{"update": {"topology": "!!", "packing_plan": ""}}')
@example(b'{"update": {"topology": "////", "packing_plan": ""}}')  # base64 of a corrupt protobuf
@example(b'{"update": {"topology": "", "packing_plan": "////"}}')
def test_a_request_file_reads_as_a_request_or_none(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    work = tmp_path_factory.mktemp("w")
    directory = work / REQUESTS_DIR
    directory.mkdir()
    (directory / "x.request.json").write_bytes(content)
    [(path, request)] = pending_requests(work)
    assert path.name == "x.request.json"
    assert request is None or isinstance(request, RestartRequest | UpdateRequest)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200) | _JSON.map(lambda v: json.dumps(v).encode()))
@example(b"[" * 100_000)
@example(b"[1, 2]")
def test_an_answer_file_reads_as_an_answer(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    work: Path = tmp_path_factory.mktemp("w")
    request = write_request(work, RestartRequest(1))
    request.with_name(request.name.replace(".request.", ".answer.")).write_bytes(content)
    answer = read_answer(request)
    assert answer is not None and isinstance(answer.message, str)
    assert not request.exists()
