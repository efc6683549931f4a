"""``heron tracker``'s command line: its help, and a port in use as a one-line error."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from tracker_support import HERON

from heron_core.testing.processes import run_command


def test_help_explains_every_flag() -> None:
    result = run_command([HERON, "tracker", "--help"], timeout=60)
    assert result.returncode == 0
    for flag in (
        "--port",
        "--address",
        "--allowed-host NAME[:PORT]",
        "--config-path",
        "--heron-home",
    ):
        assert flag in result.stdout
    assert "/topologies/{metrics," in result.stdout and "SIGTERM" in result.stdout


@pytest.mark.processes
def test_a_port_in_use_is_one_error_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run_command(
            [HERON, "tracker", "--port", str(port), "--heron-home", str(tmp_path)], timeout=60
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"heron: error: the tracker's address 127.0.0.1:{port} is in use"
    )
    assert "Traceback" not in result.stderr


def test_a_bad_allowed_host_is_one_error_line(tmp_path: Path) -> None:
    result = run_command(
        [HERON, "tracker", "--port", "0", "--allowed-host", "a b", "--heron-home", str(tmp_path)],
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("heron: error: --allowed-host 'a b' is not a host name or address")
    )
