"""Hypothesis against every daemon's frame decoding, in-process: whatever a peer sends, a
message that is not one of the protocol is dropped and logged, nothing escapes the reader (so
the daemon's loop keeps running), and a good message after the garbage is still handled (no
tuple already accepted is lost)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_support import MESSAGES, FakeSocket, loaded_stmgr, small_topology
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heron_core.config import config_from_proto
from heron_core.metricsmgr._manager import MetricsManager, MetricsManagerArgs
from heron_core.metricsmgr._shell import Shell
from heron_core.network import (
    ACKS,
    DATA,
    Dispatcher,
    FrameTooLargeError,
    ProtocolError,
    check_frames,
    data_frames,
    decode,
    encode,
)
from heron_core.proto import (
    common_pb2,
    metrics_pb2,
    packing_plan_pb2,
    stmgr_pb2,
    tmanager_pb2,
    tuple_pb2,
)
from heron_core.statemgr import LocalFileSystemStateManager
from heron_core.stmgr._manager import StreamManager
from heron_core.tmanager._metrics_cache import MetricsCache, planned_instances
from heron_core.tmanager._registration import StMgrRegistry
from heron_core.tmanager._stats_server import StatsServer
from heron_core.tmanager._stmgr_server import StMgrServer

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
GOOD_BATCH = tuple_pb2.TupleBatch(
    src_task=1, dest_task=2, stream="default", src_component="word", count=1, values=b"x"
).SerializeToString()


@FUZZ
@given(st.lists(st.binary(max_size=64), max_size=4))
@example([b"heron.stmgr.StrMgrHelloRequest", b"\xff"])
@example([b"heron.stmgr.StrMgrHelloRequest"])
def test_decode_raises_only_protocol_errors(frames: list[bytes]) -> None:
    with contextlib.suppress(ProtocolError):
        decode(frames)


@FUZZ
@given(MESSAGES)
def test_a_dispatcher_raises_only_protocol_errors(frames: list[bytes]) -> None:
    seen: list[object] = []
    dispatcher = Dispatcher("fuzz")
    dispatcher.register(stmgr_pb2.StrMgrHelloRequest, seen.append)
    try:
        dispatcher.dispatch(frames)
    except ProtocolError:
        assert not seen


def test_check_frames_refuses_a_frame_over_the_limit_naming_the_key() -> None:
    check_frames([b"a", b"b" * 8], 8, "ok")
    with pytest.raises(FrameTooLargeError, match=r"frame 2 is 9 bytes, over the 8-byte limit"):
        check_frames([b"a", b"b" * 9], 8, "a batch")


# --- stream manager: instance sockets, peer data port, tmanager link ---------------------------


@pytest.fixture(scope="module")
def stmgr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamManager]:
    with loaded_stmgr(tmp_path_factory.mktemp("stmgr")) as manager:
        yield manager


def _routed_to_task_2(manager: StreamManager) -> int:
    return manager._task_box[2].batches


@FUZZ
@given(messages=st.lists(MESSAGES, max_size=6), task=st.sampled_from([None, 1, 2]))
@example(messages=[[DATA, b"\x02\x00\x00\x00"]], task=None)  # a batch without its payload
@example(messages=[[DATA, b"\x02\x00", GOOD_BATCH]], task=1)  # a short task id
@example(messages=[[DATA, b"\x02\x00\x00\x00", GOOD_BATCH, b"extra"]], task=None)
@example(messages=[[ACKS, b"\x01\x00\x00\x00", b"\xff\xff"]], task=2)  # garbage acks
@example(messages=[[b"heron.stmgr.RegisterInstanceRequest", b"\x0a\xff"]], task=1)
def test_the_stream_manager_drops_garbage_and_still_routes_good_batches(
    stmgr: StreamManager, messages: list[list[bytes]], task: int | None
) -> None:
    """Regression: a data message of 4 frames was forwarded to the instance as it was."""
    before = _routed_to_task_2(stmgr)
    stmgr._read_burst(FakeSocket([*messages, data_frames(2, GOOD_BATCH)]), 64, task)  # type: ignore[arg-type]
    routed = _routed_to_task_2(stmgr) - before
    good = sum(
        1
        for m in messages
        if len(m) == 3 and m[0] == DATA and m[1] == b"\x02\x00\x00\x00"  # garbage that is valid
    )
    assert routed == good + 1


def test_a_batch_too_large_for_the_peer_is_refused_and_counted_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    limits = {"heron.network.max.frame.bytes": 2 << 20, "heron.instance.max.tuple.bytes": 1 << 20}
    with loaded_stmgr(tmp_path, limits) as manager:
        box = manager._task_box[3]  # stands for a peer's outbox
        manager._remote_box[9] = box
        before = box.batches
        big = data_frames(9, b"x" * ((2 << 20) + 1))
        with caplog.at_level(logging.WARNING):
            manager._read_burst(FakeSocket([big]), 64, 1)  # type: ignore[arg-type]
        assert box.batches == before
        assert manager._metrics.batches_lost == 1
        assert "a tuple batch for task 9: frame 3 is 2097153 bytes" in caplog.text
        assert "from task 1" in caplog.text


@FUZZ
@given(MESSAGES)
@example([b""])  # regression: one frame from the tmanager ended the stream manager
@example([b"heron.tmanager.NewPhysicalPlanMessage", b"\x0a\x05\xff\xff"])
def test_the_tmanager_link_drops_what_is_not_a_message(
    stmgr: StreamManager, frames: list[bytes]
) -> None:
    link = stmgr._tmanager
    link.socket = FakeSocket([frames])  # type: ignore[assignment]
    try:
        link.read()
    except Exception as exc:  # only a refused registration may end the daemon
        assert "refused the registration" in str(exc)
    finally:
        link.socket = None
        link.registered = False


# --- topology manager: stream manager port and stats port --------------------------------------


def _tmanager_servers() -> tuple[StMgrServer, StatsServer, FakeSocket, FakeSocket]:
    topology = small_topology()
    packing = packing_plan_pb2.PackingPlan(
        id="p",
        containers=[
            packing_plan_pb2.ContainerPlan(
                id=1,
                instances=[
                    packing_plan_pb2.InstancePlan(component_name=c, task_id=t, component_index=i)
                    for c, t, i in (("word", 1, 0), ("count", 2, 0), ("count", 3, 1))
                ],
            )
        ],
    )
    cache = MetricsCache.from_config(
        config_from_proto(topology.topology_config),
        topology_name="fz",
        components=planned_instances(topology, packing),
    )
    stmgr_socket, stats_socket = FakeSocket(), FakeSocket()
    server = StMgrServer(
        stmgr_socket,  # type: ignore[arg-type]
        StMgrRegistry(topology, packing),
        cache,
        lambda plan: None,
        lambda: 0.0,
    )
    stats = StatsServer(
        stats_socket,  # type: ignore[arg-type]
        cache,
        lambda state: common_pb2.Status(status=common_pb2.OK),
    )
    return server, stats, stmgr_socket, stats_socket


@FUZZ
@given(st.lists(MESSAGES, max_size=5))
@example([[b"heron.tmanager.MetricRequest", b"\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"]])
@example([[b"heron.tmanager.PublishMetrics", b"\x0a\x02\x0a\x00"]])
@example([[b"heron.tmanager.StMgrRegisterRequest", b"\x0a\x02\x0a\x00"]])
def test_the_tmanager_ports_answer_after_garbage(messages: list[list[bytes]]) -> None:
    server, stats, stmgr_socket, stats_socket = _tmanager_servers()
    peer = b"\x00peer"
    stmgr_socket.inbox.extend([[peer, *m] for m in messages])
    stats_socket.inbox.extend([[peer, *m] for m in messages])
    request = encode(tmanager_pb2.MetricsRequest())
    stats_socket.inbox.append([peer, *request])
    server.on_readable()
    stats.on_readable()
    answers = [decode(frames[1:]) for frames in stats_socket.sent if frames[0] == peer]
    assert isinstance(answers[-1], tmanager_pb2.MetricsResponse)


# --- metrics manager: metrics socket and shell port --------------------------------------------


@FUZZ
@given(st.lists(MESSAGES, max_size=5))
@example([[b"heron.metrics.ShellFileRequest", b"\x10\xff\xff\xff\xff\xff\xff\xff\xff\x7f"]])
@example([[b"heron.metrics.ShellFileRequest", b"\x0a\x03../"]])
def test_the_shell_answers_after_garbage(
    tmp_path_factory: pytest.TempPathFactory, messages: list[list[bytes]]
) -> None:
    root = tmp_path_factory.getbasetemp() / "shell"
    (root / "logs").mkdir(parents=True, exist_ok=True)
    (root / "logs" / "a.log").write_text("hello\n")
    sock = FakeSocket()
    shell = Shell(sock, root, 1)  # type: ignore[arg-type]
    peer = b"\x00peer"
    sock.inbox.extend([[peer, *m] for m in messages])
    sock.inbox.append([peer, *encode(metrics_pb2.ShellFileRequest(path="logs/a.log"))])
    shell.on_readable()
    answer = decode(sock.sent[-1][1:])
    assert isinstance(answer, metrics_pb2.ShellFileResponse) and answer.data == b"hello\n"


@FUZZ
@given(st.lists(MESSAGES, max_size=5))
def test_the_metrics_manager_drops_garbage_and_takes_good_messages(
    tmp_path_factory: pytest.TempPathFactory, messages: list[list[bytes]]
) -> None:
    root = tmp_path_factory.getbasetemp()
    state = LocalFileSystemStateManager({"heron.statemgr.root.path": str(root / "mm")}, "local")
    args = MetricsManagerArgs("fz", "fz-1", "local", 1, root, "ipc:///nonexistent/")
    manager = MetricsManager(args, state)
    try:
        for frames in messages:
            manager._dispatch(frames)
        good = sum(
            1
            for m in messages
            if len(m) == 2 and m[0] == b"heron.metrics.MetricPublisherPublishMessage"
        )
        before = manager._received
        manager._dispatch(encode(metrics_pb2.MetricPublisherPublishMessage()))
        assert manager._received == before + 1
        assert before <= good
    finally:
        manager._zmq.term()
