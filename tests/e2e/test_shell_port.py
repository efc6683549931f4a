"""The container shell's port belongs to the container for its whole life: its executor holds
the listening socket and the metrics manager serves on it, so no other process can take the
port between choosing and binding it, and a restarted metrics manager serves the same port the
physical plan advertises."""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import psutil
import pytest
from e2e_fixtures import code_fixture, home_fixture  # noqa: F401 - fixtures

from heron_core.api import Grouping, TopologyBuilder
from heron_core.client import ShellClient
from heron_core.proto import metrics_pb2
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import FixedSpout, RecordingBolt

pytestmark = pytest.mark.processes


def _pid(run: TopologyRun, module: str) -> int | None:
    """The pid of container 1's live ``module`` process, or None."""
    for process in run.processes():
        try:
            argv = process.cmdline()
        except psutil.Error:
            continue
        if module in argv and argv[argv.index("--container") + 1] == "1":
            return process.pid
    return None


def test_the_shell_port_survives_a_metrics_manager_restart(
    home: Path, code: Path, tmp_path: Path
) -> None:
    b = TopologyBuilder("shellport")
    spout = b.add_spout("s", FixedSpout(["n"], [[1]]), par=1)
    b.add_bolt("sink", RecordingBolt(tmp_path / "out"), par=1, inputs={spout: Grouping.SHUFFLE})
    with TopologyRun(b.build(), heron_home=home, code_root=code) as run:
        shell = ShellClient(run.state, "shellport", timeout=5.0)
        try:

            def listing() -> metrics_pb2.ShellListResponse | None:
                answer = shell.ask(1, metrics_pb2.ShellListRequest(path="logs"))
                return answer if isinstance(answer, metrics_pb2.ShellListResponse) else None

            run.wait_until(listing, "the shell's first listing")
            endpoint = shell.endpoint(1)
            assert endpoint is not None
            port = int(endpoint.rsplit(":", 1)[1])
            executor, first = _pid(run, "heron_core.executor"), _pid(run, "heron_core.metricsmgr")
            assert executor is not None and first is not None
            # With the executor stopped, nothing restarts the killed metrics manager: the port
            # is still taken, by the executor's socket alone.
            psutil.Process(executor).suspend()
            try:
                victim = psutil.Process(first)
                victim.kill()
                run.wait_until(lambda: victim.status() == psutil.STATUS_ZOMBIE, "the kill")
                with socket.socket() as squatter, pytest.raises(OSError) as taken:
                    # as a server binds (the shell's closed connections wait in TIME_WAIT)
                    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    squatter.bind(("127.0.0.1", port))
                assert taken.value.errno == errno.EADDRINUSE
            finally:
                psutil.Process(executor).resume()
            run.wait_until(
                lambda: (
                    _pid(run, "heron_core.metricsmgr") not in (None, first)
                    and listing() is not None
                ),
                "a listing from the restarted metrics manager",
            )
            assert shell.endpoint(1) == endpoint  # the plan's port is still the one served
        finally:
            shell.close()
