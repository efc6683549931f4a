"""The multilang hosts driven in-process against real subprocesses: storm.py-style scripts
(written for these tests) and pystorm components."""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from multilang_support import (
    SCRIPTS,
    BoltRecorder,
    FakeContext,
    IdleFailures,
    SpoutRecorder,
    script,
)

from heron_core.errors import UserCodeError
from heron_core.multilang import ShellBoltHost, ShellSpoutHost
from heron_core.testing.processes import wait_until

pytestmark = pytest.mark.processes

CONFIG = {"topology.subprocess.timeout.secs": 10, "probe.key": [1, "two"], "odd": object()}


@pytest.fixture
def idle() -> IdleFailures:
    return IdleFailures()


@pytest.fixture
def bolt(idle: IdleFailures) -> Iterator[tuple[ShellBoltHost[Any], BoltRecorder]]:
    host: ShellBoltHost[Any] = ShellBoltHost(script("probe_bolt.py"), on_idle_failure=idle)
    recorder = BoltRecorder()
    host.start(CONFIG, FakeContext(), recorder)
    yield host, recorder
    host.close()


def run(host: ShellBoltHost[Any], handle: Any, *values: Any) -> None:
    host.execute(handle, "words", "default", 1, list(values))


def wait_for(condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout}s"
        time.sleep(0.05)


def messages(caplog: pytest.LogCaptureFixture, level: int = logging.DEBUG) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= level]


def test_handshake_gives_storms_context_conf_and_pid_dir(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder],
) -> None:
    host, recorder = bolt
    assert host.process is not None and host.process.pid_dir is not None
    # storm.py sends its pid, then creates the pid file (as Storm's does): wait for it.
    pid_file = Path(host.process.pid_dir) / str(host.pid)
    wait_until(pid_file.is_file, f"the pid file {pid_file}", timeout=30)
    run(host, "h", "context")
    context, conf = (json.loads(v) for v in recorder.emits[0][0])
    assert context == {
        "task->component": {"1": "words", "2": "words", "3": "probe", "5": "sink", "6": "sink"},
        "taskid": 3,
        "componentid": "probe",
        "streams": ["default", "direct"],
        "stream->outputfields": {"default": ["a", "b"], "direct": []},
        "stream->target->grouping": {
            "default": {"sink": {"type": "FIELDS", "fields": []}},
            "direct": {},
        },
        "source->stream->grouping": {"words": {"default": {"type": "FIELDS", "fields": ["word"]}}},
        "source->stream->fields": {"words": {"default": ["word"]}},
    }
    assert conf["probe.key"] == [1, "two"] and conf["topology.name"] == "probe-topology"
    assert "odd" not in conf  # not JSON-representable


def test_emits_map_anchors_streams_direct_tasks_and_task_ids(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder], caplog: pytest.LogCaptureFixture
) -> None:
    host, recorder = bolt
    caplog.set_level(logging.INFO)
    run(host, "t1", "emit", 1, 2)
    run(host, "t2", "no_ids", 3)
    run(host, "t3", "emit_stream", "direct", 4)
    run(host, "t4", "unanchored", 5)
    run(host, "t5", "direct", 6, "x")
    assert recorder.emits == [
        ([1, 2], "default", ["t1"], None, True),  # no need_task_ids key: Storm's default, true
        ([3], "default", ["t2"], None, False),
        ([4], "direct", ["t3"], None, True),
        ([5], "default", [], None, True),
        (["x"], "direct", ["t5"], 6, False),  # direct emits never get task ids back
    ]
    assert "ShellLog pid" in "".join(messages(caplog)) and "task ids [5, 6]" in "".join(
        messages(caplog)
    )
    assert recorder.acked == ["t1", "t2", "t3", "t4", "t5"]


def test_acks_and_fails_reach_the_collector_once_and_repeats_are_warnings(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder], caplog: pytest.LogCaptureFixture
) -> None:
    host, recorder = bolt
    run(host, "a", "ack_twice")
    run(host, "f", "fail")
    run(host, "u", "anchor_unknown", 9)
    run(host, "c", "unknown_command")
    assert recorder.acked == ["a", "u", "c"] and recorder.failed == ["f"]
    assert recorder.emits == [([9], "default", [], None, True)]
    warnings = "\n".join(messages(caplog, logging.WARNING))
    assert "sent ack for an id that is unknown or already acked/failed; ignored" in warnings
    assert "anchored a tuple to an id that is unknown" in warnings
    assert "sent a message with an unknown command 'bogus'; ignored" in warnings


def test_log_error_and_metrics_commands(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder], caplog: pytest.LogCaptureFixture
) -> None:
    host, _ = bolt
    run(host, 1, "log", "careful", 3)
    run(host, 2, "error", "it broke")
    run(host, 3, "metrics", "words", 2)
    run(host, 4, "metrics", "words", 5)
    shell = [r for r in caplog.records if r.name == "heron.multilang"]
    assert [(r.levelno, r.getMessage().endswith("careful")) for r in shell] == [
        (logging.WARNING, True)
    ]
    assert any("reported error: it broke" in m for m in messages(caplog, logging.ERROR))
    context = host._context
    assert isinstance(context, FakeContext)
    assert context.errors == ["it broke"]  # on to the task's exception log
    metric = context.metrics["words"]
    assert context.buckets == {"words": 1}  # published at every export (the default 1 s)
    assert (metric.metric_type, metric.get_value_and_reset()) == ("SUM", 7)


def test_stray_stdout_is_logged_and_not_fatal(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder], caplog: pytest.LogCaptureFixture
) -> None:
    host, recorder = bolt
    caplog.set_level(logging.INFO)
    run(host, "p", "print", 7)
    run(host, "q", "emit", 8)
    assert [e[0] for e in recorder.emits] == [[7], [8]]
    logged = "\n".join(messages(caplog))
    for line in ("stray line one", "stray {brace", "glued"):
        assert f": {line}" in logged
    assert "not multilang protocol" in logged


def test_tick_tuples_reach_the_subprocess_and_their_acks_stay_in_the_host(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder], caplog: pytest.LogCaptureFixture
) -> None:
    host, recorder = bolt
    caplog.set_level(logging.INFO)
    host.execute("tick", "__system", "__tick", -1, [5])
    assert any(m.endswith("tick [5]") for m in messages(caplog))
    assert recorder.acked == [] and recorder.failed == []


def test_values_the_serializer_cannot_carry_fail_the_input(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder],
) -> None:
    host, recorder = bolt
    run(host, "bad", "emit", b"bytes")
    run(host, "good", "emit", 1)
    assert recorder.failed == ["bad"] and recorder.acked == ["good"]


def test_subprocess_exit_fails_the_call_and_every_later_one(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder],
) -> None:
    host, _ = bolt
    with pytest.raises(UserCodeError, match=r"component 'probe', task 3: .*exited with status 3"):
        run(host, "x", "exit", 3)
    with pytest.raises(UserCodeError, match="exited with status 3"):
        run(host, "y", "emit", 1)


def test_silent_subprocess_times_out(idle: IdleFailures) -> None:
    host: ShellBoltHost[Any] = ShellBoltHost(script("probe_bolt.py"), on_idle_failure=idle)
    host.start({"topology.subprocess.timeout.secs": 1}, FakeContext(), BoltRecorder())
    try:
        with pytest.raises(UserCodeError, match="sent nothing for 1s"):
            run(host, "x", "hang")
    finally:
        host.close()
    assert idle.errors == []  # the caller was busy: the error came from the call


def test_death_while_idle_goes_to_the_idle_handler(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder], idle: IdleFailures
) -> None:
    host, _ = bolt
    assert host.pid is not None
    os.kill(host.pid, signal.SIGKILL)
    wait_for(lambda: idle.errors, "the idle failure")
    assert "exited with status -9" in str(idle.errors[0])
    with pytest.raises(UserCodeError, match="status -9"):
        run(host, "x", "emit", 1)


def test_silence_while_idle_is_caught_by_heartbeats(idle: IdleFailures) -> None:
    host: ShellBoltHost[Any] = ShellBoltHost(script("probe_bolt.py"), on_idle_failure=idle)
    host.start({"topology.subprocess.timeout.secs": 1}, FakeContext(), BoltRecorder())
    try:
        run(host, "x", "emit", 1)  # heartbeats flow while idle and are answered
        assert host.pid is not None
        os.kill(host.pid, signal.SIGSTOP)
        wait_for(lambda: idle.errors, "the heartbeat timeout")
        assert "heartbeats included" in str(idle.errors[0])
    finally:
        host.close()


def test_spout_commands_each_end_at_sync(
    idle: IdleFailures, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    host = ShellSpoutHost(script("probe_spout.py"), on_idle_failure=idle)
    recorder = SpoutRecorder()
    host.start({"probe.count": 2, "probe.print": True}, FakeContext("n", False), recorder)
    try:
        for _ in range(3):
            host.next_tuple()
        host.ack(0)
        host.fail(1)
        host.deactivate()
        host.activate()
    finally:
        host.close()
    assert recorder.emits == [
        (["n", 0], 0, "default", None, True),
        (["n", 1], 1, "default", None, True),
    ]
    shell = [m.split(": ")[-1] for m in messages(caplog) if "ShellLog" in m]
    assert shell == [
        "emitted 0 to [5]",
        "emitted 1 to [5]",
        "acked 0",
        "failed 1",
        "deactivated",
        "activated",
    ]
    assert sum("stray spout output" in m for m in messages(caplog)) == 3


def test_a_spout_is_read_on_the_callers_thread_and_its_death_between_calls_is_seen(
    idle: IdleFailures,
) -> None:
    """A spout's output is read only while a call awaits its answer, as Storm's ShellSpout
    reads it; an exit between calls still goes to the idle handler at once."""
    host = ShellSpoutHost(script("probe_spout.py"), on_idle_failure=idle)
    host.start({"probe.count": 1}, FakeContext("n", False), SpoutRecorder())
    try:
        host.next_tuple()
        names = {thread.name for thread in threading.enumerate()}
        assert f"multilang-reader-{host.process and host.process.pid}" not in names
        assert host.pid is not None
        os.kill(host.pid, signal.SIGKILL)
        wait_for(lambda: idle.errors, "the idle failure")
        assert "exited with status -9" in str(idle.errors[0])
        with pytest.raises(UserCodeError, match="status -9"):
            host.next_tuple()
    finally:
        host.close()


def test_a_spout_silent_during_a_call_times_out(idle: IdleFailures) -> None:
    host = ShellSpoutHost(script("probe_spout.py"), on_idle_failure=idle)
    host.start({"topology.subprocess.timeout.secs": 1}, FakeContext("n", False), SpoutRecorder())
    try:
        assert host.pid is not None
        os.kill(host.pid, signal.SIGSTOP)
        with pytest.raises(UserCodeError, match="sent nothing for 1s while an answer"):
            host.next_tuple()
    finally:
        host.close()
    assert idle.errors == []  # the caller was busy: the error came from the call


def test_spout_commands_other_than_emit_log_error_metrics_sync_are_fatal(
    idle: IdleFailures,
) -> None:
    host = ShellSpoutHost(script("probe_spout.py"), on_idle_failure=idle)
    host.start({"probe.bad": True}, FakeContext("n", False), SpoutRecorder())
    try:
        with pytest.raises(UserCodeError, match="a spout may send emit, log, error"):
            host.next_tuple()
    finally:
        host.close()


def test_pystorm_bolt_over_msgpack(idle: IdleFailures) -> None:
    host: ShellBoltHost[Any] = ShellBoltHost(
        script("pystorm_components.py", "EchoBolt", "msgpack"), "msgpack", on_idle_failure=idle
    )
    recorder = BoltRecorder()
    host.start({}, FakeContext(), recorder)
    try:
        for n in range(3):
            host.execute(f"t{n}", "numbers", "default", 1, [n])
    finally:
        host.close()
    # pystorm auto-anchors, auto-acks and sends need_task_ids false
    assert recorder.emits == [([n, n * n], "default", [f"t{n}"], None, False) for n in range(3)]
    assert recorder.acked == ["t0", "t1", "t2"]


def test_each_input_is_settled_when_execute_returns_even_after_pystorm_errors(
    idle: IdleFailures,
) -> None:
    # pystorm's raise_exception sends a sync that answers no heartbeat; counted, it made later
    # calls return before their input's ack had been read (the last acks then waited for the
    # next input, or the message timeout).
    host: ShellBoltHost[Any] = ShellBoltHost(
        script("pystorm_components.py", "OddFailBolt"), on_idle_failure=idle
    )
    recorder = BoltRecorder()
    host.start({}, FakeContext(), recorder)
    try:
        for n in range(8):
            host.execute(f"t{n}", "numbers", "default", 1, [n])
            settled = recorder.acked if n % 2 == 0 else recorder.failed
            assert settled[-1:] == [f"t{n}"], (n, recorder.acked, recorder.failed)
    finally:
        host.close()
    assert recorder.acked == [f"t{n}" for n in range(0, 8, 2)]
    assert recorder.failed == [f"t{n}" for n in range(1, 8, 2)]


def test_environment_and_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, idle: IdleFailures
) -> None:
    (tmp_path / "code").mkdir()  # a folder of the user's code, not the code directory
    monkeypatch.chdir(tmp_path)  # an instance's cwd: the topology's code directory
    config = {"topology.environment": {"PROBE_A": 1, "PROBE_B": "topology"}}
    for cwd, expected in ((None, tmp_path), (SCRIPTS, SCRIPTS)):
        host: ShellBoltHost[Any] = ShellBoltHost(
            script("probe_bolt.py"), cwd=cwd, env={"PROBE_B": "host"}, on_idle_failure=idle
        )
        recorder = BoltRecorder()
        host.start(config, FakeContext(), recorder)
        try:
            run(host, 1, "env", "PROBE_A")
            run(host, 2, "env", "PROBE_B")
        finally:
            host.close()
        assert [e[0] for e in recorder.emits] == [[str(expected), "1"], [str(expected), "host"]]


def test_close_stops_the_subprocess_and_later_calls_fail(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder], idle: IdleFailures
) -> None:
    host, _ = bolt
    assert host.process is not None and host.process.pid_dir is not None
    pid_dir = Path(host.process.pid_dir)
    host.close()
    assert not pid_dir.exists()
    with pytest.raises(UserCodeError, match="was closed"):
        run(host, "x", "emit", 1)
    assert idle.errors == []


def test_the_subprocess_leads_a_process_group_in_the_instances_session(
    bolt: tuple[ShellBoltHost[Any], BoltRecorder],
) -> None:
    """A terminal's Ctrl-C reaches the instance, which stops the subprocess, and not the
    subprocess itself; yet it stays in the instance's session: a session of its own is an
    autogroup of its own for Linux's scheduler, under which a loaded 2-core machine left such a
    subprocess runnable but not run for over 30 s (it was then failed for silence)."""
    host, _ = bolt
    assert host.process is not None
    pid = host.process.pid
    assert pid is not None
    assert os.getpgid(pid) == pid
    assert os.getsid(pid) == os.getsid(0)


def test_a_command_that_cannot_start_is_named(idle: IdleFailures, tmp_path: Path) -> None:
    host: ShellBoltHost[Any] = ShellBoltHost(
        ["/no/such/interpreter", "bolt.py"], cwd=tmp_path, on_idle_failure=idle
    )
    with pytest.raises(
        UserCodeError, match=r"cannot start multilang subprocess '/no/such/interpreter bolt\.py'"
    ):
        host.start({}, FakeContext(), BoltRecorder())


@pytest.mark.parametrize("max_pending", [1, 10, 100])
def test_a_batch_is_pipelined_within_max_pending_and_handled_when_the_call_returns(
    idle: IdleFailures, max_pending: int
) -> None:
    host: ShellBoltHost[Any] = ShellBoltHost(script("lagging_bolt.py"), on_idle_failure=idle)
    recorder = BoltRecorder()
    host.start({**CONFIG, "topology.shellbolt.max.pending": max_pending}, FakeContext(), recorder)
    try:
        served = []
        due = [False]

        def serve() -> None:
            served.append(len(recorder.acked))
            due[0] = False

        def inputs() -> Iterator[tuple[Any, str, str, int, list[Any]]]:
            for i in range(1000):
                if i % 250 == 0:
                    due[0] = True  # the instance's flush flag, raised now and then
                yield (f"h{i}", "words", "default", 1, [i])

        host.execute_batch(inputs(), due, serve)
        # every input handled, in order, before the call returned
        assert recorder.acked == [f"h{i}" for i in range(1000)]
        words = [e for e in recorder.emits if e[1] == "default"]
        assert [e[0] for e in words] == [[i] for i in range(1000)]
        assert all(e[2] == [f"h{i}"] for i, e in enumerate(words))
        # never more than max_pending inputs in flight, seen from the subprocess
        outstanding = [e[0][1] for e in recorder.emits if e[1] == "stats"]
        assert 1 <= max(outstanding) <= max_pending
        print(f"max_pending {max_pending}: at most {max(outstanding)} inputs in flight")
        assert served  # serve() ran between chunks when the flag was up
        host.execute("tick", "__system", "__tick", None, [1])  # one more call still works
    finally:
        host.close()
    assert idle.errors == []


def test_a_chunk_whose_every_input_the_serializer_refuses_does_not_end_the_batch(
    idle: IdleFailures,
) -> None:
    host: ShellBoltHost[Any] = ShellBoltHost(script("lagging_bolt.py"), on_idle_failure=idle)
    recorder = BoltRecorder()
    # max pending 2: chunks of one input, so the first chunk holds only the refused input
    host.start({**CONFIG, "topology.shellbolt.max.pending": 2}, FakeContext(), recorder)
    try:
        inputs = [("bad", "words", "default", 1, [object()])]
        inputs += [(f"h{i}", "words", "default", 1, [i]) for i in range(5)]
        host.execute_batch(inputs)
        assert recorder.failed == ["bad"]
        assert recorder.acked == [f"h{i}" for i in range(5)]
    finally:
        host.close()
    assert idle.errors == []
