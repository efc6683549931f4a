"""The container shell served by the metrics manager: log chunks, listings, pids, and the
paths it refuses (everything but the regular files of ``logs/``, in every spelling; the attack
through the tracker is in tests/security/test_file_routes.py)."""

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
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "big.log").write_bytes(b"x" * (MAX_CHUNK + 10))
    answer = ask(metrics_pb2.ShellFileRequest(path="logs/big.log", length=10 * MAX_CHUNK))
    assert answer.length == MAX_CHUNK and answer.size == MAX_CHUNK + 10


RULE = (
    "only the container's logs are served: a file 'logs/<name>', or the listing of 'logs' or of '.'"
)

SPELLINGS = [
    "keys/topology.key_secret",
    "./keys/topology.key_secret",
    "logs/../keys/topology.key_secret",
    "./logs/../keys/topology.key_secret",
    "logs/./../keys/topology.key_secret",
    "logs//../keys/topology.key_secret",
    "/keys/topology.key_secret",
    "Keys/topology.key_secret",
    "LOGS/../keys/topology.key_secret",
    "logs\\..\\keys\\topology.key_secret",
    "logs/..\\keys\\topology.key_secret",
    "logs/x\x00/../../keys/topology.key_secret",
    "keys/topology.key_secret\x00.log",
    "keys/",
    "keys/.",
    "..",
    "../",
    ".",
    "",
    "logs",
    "logs/",
    "logs/.",
    "logs/..",
    "./logs/a.log",
    "logs/a.log/",
    "LOGS/a.log",
    "code/wc.py",
]


@pytest.mark.parametrize("path", SPELLINGS)
def test_only_logs_are_served_in_any_spelling(tmp_path: Path, ask: Ask, path: str) -> None:
    """The key file exists and is readable: only the rule keeps it in."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log").write_text("served")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "topology.key_secret").write_text("SECRET")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "wc.py").write_text("SECRET")
    answer = ask(metrics_pb2.ShellFileRequest(path=path))
    assert answer.status.status == common_pb2.NOTOK
    assert answer.status.message == f"path {path!r} is not served: {RULE}"
    assert answer.data == b""


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda w: (w / "logs" / "key.log").symlink_to(w / "keys" / "topology.key_secret"),
         "'logs/key.log' in container 1: it is a symbolic link"),
        (lambda w: (w / "logs" / "key.log").symlink_to("../keys/topology.key_secret"),
         "'logs/key.log' in container 1: it is a symbolic link"),
        (lambda w: os.link(w / "keys" / "topology.key_secret", w / "logs" / "key.log"),
         "'logs/key.log' in container 1: it has another hard link"),
        (lambda w: (w / "logs" / "key.log").mkdir(),
         "'logs/key.log' in container 1: it is a directory"),
        (lambda w: os.mkfifo(w / "logs" / "key.log"),
         "'logs/key.log' in container 1: it is not a regular file"),
    ],
)  # fmt: skip
def test_a_log_that_is_not_a_plain_file_is_refused(
    tmp_path: Path, ask: Ask, make: Callable[[Path], None], error: str
) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "topology.key_secret").write_text("SECRET")
    make(tmp_path)
    answer = ask(metrics_pb2.ShellFileRequest(path="logs/key.log"))
    assert answer.status.status == common_pb2.NOTOK
    assert answer.status.message == f"refused {error}; {RULE}"
    assert answer.data == b""
    # and the listing does not show it
    assert [f.name for f in ask(metrics_pb2.ShellListRequest(path="logs")).files] == []


def test_a_linked_logs_directory_is_refused(tmp_path: Path, ask: Ask) -> None:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "topology.key_secret").write_text("SECRET")
    (tmp_path / "logs").symlink_to("keys")
    answer = ask(metrics_pb2.ShellFileRequest(path="logs/topology.key_secret"))
    assert answer.status.status == common_pb2.NOTOK and answer.data == b""
    assert answer.status.message == (
        "refused 'logs/topology.key_secret' in container 1: the container's 'logs' is a link "
        f"or not a directory; {RULE}"
    )
    for listed in ("logs", "."):
        refused = ask(metrics_pb2.ShellListRequest(path=listed))
        assert refused.status.status == common_pb2.NOTOK and not refused.files
        assert "the container's 'logs' is a link" in refused.status.message


def test_a_missing_log_names_the_file(tmp_path: Path, ask: Ask) -> None:
    (tmp_path / "logs").mkdir()
    answer = ask(metrics_pb2.ShellFileRequest(path="logs/missing.log"))
    assert answer.status.status == common_pb2.NOTOK
    assert answer.status.message == (
        "cannot read 'logs/missing.log' in container 1: No such file or directory"
    )


def test_listings_show_only_what_is_served(tmp_path: Path, ask: Ask) -> None:
    for directory in ("logs", "keys", "code", "logs/sub"):
        (tmp_path / directory).mkdir()
    (tmp_path / "logs" / "a.log").write_text("abc")
    (tmp_path / "logs" / "executor-1.status.json").write_text("{}")
    (tmp_path / "logs" / "key.log").symlink_to("../keys/topology.key_secret")
    (tmp_path / "keys" / "topology.key_secret").write_text("SECRET")
    answer = ask(metrics_pb2.ShellListRequest(path="logs"))
    assert answer.status.status == common_pb2.OK
    assert [(f.name, f.is_dir, f.size) for f in answer.files] == [
        ("a.log", False, 3),
        ("executor-1.status.json", False, 2),
    ]
    for root in (".", ""):
        listed = ask(metrics_pb2.ShellListRequest(path=root))
        assert [(f.name, f.is_dir) for f in listed.files] == [("logs", True)]
    for path in ("keys", "./keys", "logs/sub", "logs/", "..", "/", "code", "LOGS"):
        refused = ask(metrics_pb2.ShellListRequest(path=path))
        assert refused.status.status == common_pb2.NOTOK and not refused.files
        assert refused.status.message == f"path {path!r} is not served: {RULE}"


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
