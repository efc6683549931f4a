"""The container shell served by the metrics manager: file chunks, listings, pids, and the
paths it refuses."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from google.protobuf.message import Message

from heron_core.executor import StatusFile, status_path
from heron_core.metricsmgr._shell import MAX_CHUNK, Shell
from heron_core.network import decode, encode
from heron_core.proto import common_pb2, metrics_pb2

Ask = Callable[[Message], Any]


@pytest.fixture
def ask(tmp_path: Path) -> Iterator[Ask]:
    context = zmq.Context()
    server = context.socket(zmq.ROUTER)
    port = server.bind_to_random_port("tcp://127.0.0.1")
    client = context.socket(zmq.DEALER)
    client.connect(f"tcp://127.0.0.1:{port}")
    shell = Shell(server, tmp_path, container=1)

    def request(message: Message) -> Any:
        client.send_multipart(encode(message))
        assert server.poll(10_000), "the request did not arrive"
        shell.on_readable()
        assert client.poll(10_000), "no answer"
        return decode(client.recv_multipart())

    yield request
    client.close(linger=0)
    server.close(linger=0)
    context.term()


def test_a_file_is_read_by_chunks_and_from_its_end(tmp_path: Path, ask: Ask) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "container_1_word_1.log").write_bytes(b"0123456789")
    answer = ask(
        metrics_pb2.ShellFileRequest(path="logs/container_1_word_1.log", offset=2, length=3)
    )
    assert answer.status.status == common_pb2.OK
    assert (answer.data, answer.offset, answer.length, answer.size) == (b"234", 2, 3, 10)
    tail = ask(
        metrics_pb2.ShellFileRequest(path="logs/container_1_word_1.log", offset=-1, length=4)
    )
    assert (tail.data, tail.offset) == (b"6789", 6)
    everything = ask(metrics_pb2.ShellFileRequest(path="logs/container_1_word_1.log"))
    assert everything.data == b"0123456789"


def test_a_chunk_is_at_most_one_mib(tmp_path: Path, ask: Ask) -> None:
    (tmp_path / "big").write_bytes(b"x" * (MAX_CHUNK + 10))
    answer = ask(metrics_pb2.ShellFileRequest(path="big", length=10 * MAX_CHUNK))
    assert answer.length == MAX_CHUNK and answer.size == MAX_CHUNK + 10


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("/etc/passwd", "must be relative to the working directory"),
        ("logs/../../x", "without '..'"),
        ("escape/passwd", "leaves the working directory"),
        ("missing.log", "cannot read 'missing.log' in container 1"),
        ("logs", "'logs' is a directory in container 1"),
    ],
)
def test_a_path_outside_or_missing_is_refused(tmp_path: Path, ask, path: str, error: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "logs").mkdir()
    (tmp_path / "escape").symlink_to("/etc")
    answer = ask(metrics_pb2.ShellFileRequest(path=path))
    assert answer.status.status == common_pb2.NOTOK
    assert error in answer.status.message
    assert answer.data == b""


def test_a_directory_is_listed(tmp_path: Path, ask: Ask) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log").write_text("abc")
    (tmp_path / "logs" / "sub").mkdir()
    answer = ask(metrics_pb2.ShellListRequest(path="logs"))
    assert (answer.files[0].name, answer.files[0].is_dir, answer.files[0].size) == (
        "a.log",
        False,
        3,
    )
    assert [f.name for f in answer.files] == ["a.log", "sub"]
    refused = ask(metrics_pb2.ShellListRequest(path="../"))
    assert refused.status.status == common_pb2.NOTOK


def test_the_pid_of_a_process_comes_from_the_executor_status(tmp_path: Path, ask: Ask) -> None:
    status = StatusFile(status_path(tmp_path, 1))
    status.started("container_1_word_1", os.getpid())
    status.flush()
    answer = ask(metrics_pb2.ShellPidRequest(instance_id="container_1_word_1"))
    assert (answer.status.status, answer.pid) == (common_pb2.OK, os.getpid())
    unknown = ask(metrics_pb2.ShellPidRequest(instance_id="container_1_nope_9"))
    assert unknown.status.status == common_pb2.NOTOK
    assert "runs no process 'container_1_nope_9' (it runs: container_1_word_1)" in (
        unknown.status.message
    )
