"""``heron ui`` as a command: its flags, its errors, and a clean stop on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from heron_core.testing.processes import PipeLines, run_command

HERON = [sys.executable, "-c", "from heron_core.cli.main import main; main()"]

pytestmark = pytest.mark.processes


def test_help_explains_every_flag() -> None:
    done = run_command([*HERON, "ui", "--help"], timeout=60)
    assert done.returncode == 0
    for flag in (
        "--tracker-url",
        "--port",
        "--address",
        "--base-url",
        "--allowed-host NAME[:PORT]",
    ):
        assert flag in done.stdout
    # the actions' cluster config, named and defaulted as the other verbs' flags
    for flag in ("--config-path DIRECTORY", "--heron-home DIRECTORY", "$HERON_CONFIG_PATH"):
        assert flag in done.stdout
    assert "Activate, Deactivate, Restart and Kill" in done.stdout
    assert "8889" in done.stdout and "127.0.0.1" in done.stdout
    assert "--audit-log FILE" in done.stdout and "/logs/ui-audit.log" in done.stdout


def test_a_bad_allowed_host_or_audit_log_is_a_clear_error(tmp_path: Path) -> None:
    base = [*HERON, "ui", "--port", "0", "--tracker-url", "http://127.0.0.1:1"]
    bad = run_command([*base, "--allowed-host", "evil.example/x"], timeout=60)
    assert bad.returncode == 2
    assert "--allowed-host 'evil.example/x' is not a host name or address" in bad.stderr
    (tmp_path / "file").write_text("")
    inside_a_file = tmp_path / "file" / "audit.log"
    unwritable = run_command([*base, "--audit-log", str(inside_a_file)], timeout=60)
    assert unwritable.returncode == 2
    assert f"the UI's audit log {inside_a_file} cannot be opened" in unwritable.stderr
    assert "Traceback" not in bad.stderr + unwritable.stderr


def test_tracker_url_is_required_and_must_be_http() -> None:
    missing = run_command([*HERON, "ui"], timeout=60)
    assert missing.returncode == 2 and "--tracker-url" in missing.stderr
    bad = run_command([*HERON, "ui", "--port", "0", "--tracker-url", "localhost:8888"], timeout=60)
    assert bad.returncode == 2
    assert "--tracker-url must be an http:// or https:// URL, got 'localhost:8888'" in bad.stderr


def test_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_command(
            [*HERON, "ui", "--port", str(port), "--tracker-url", "http://127.0.0.1:1"],
            timeout=60,
        )
    assert done.returncode == 2
    assert f"the UI cannot listen on 127.0.0.1:{port}" in done.stderr


def _free_port() -> int:
    """A port nobody listens on now (so the UI's tracker calls are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_tracker_is_a_readable_error_and_sigterm_stops_cleanly(
    tmp_path: Path,
) -> None:
    tracker = f"http://127.0.0.1:{_free_port()}"
    argv = [*HERON, "ui", "--port", "0", "--base-url", "/heron/", "--tracker-url", tracker]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HERON_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    out = PipeLines(proc.stdout)
    try:
        deadline = time.monotonic() + 60
        pattern = r"Heron UI listening on (http://127\.0\.0\.1:\d+/heron/) \(tracker .*\)"
        while not out.match(pattern):
            assert proc.poll() is None and time.monotonic() < deadline, "\n".join(out.lines)
            time.sleep(0.05)
        url = out.match(pattern)[0].split()[4]
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200 and "/heron/static/ui.js" in page.text
        assert httpx.get(url + "static/ui.css", timeout=30).status_code == 200
        answer = httpx.get(url + "api/topologies", timeout=30)
        assert answer.status_code == 502
        assert answer.json()["error"].startswith(f"cannot reach the tracker at {tracker}")
        audit = tmp_path / "logs" / "ui-audit.log"  # the default: in $HERON_HOME
        assert out.match(rf"Heron UI audit log: {audit}") and audit.exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        out.join(5)
        if proc.stdout is not None:
            proc.stdout.close()
