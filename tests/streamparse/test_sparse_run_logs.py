"""``heron sparse run`` shows the components' log lines and honours config.json's "log"."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sparse_support import quickstart

from heron_core.testing.processes import (
    PipeLines,
    isolated_home,
    processes_mentioning,
    wait_until,
)

pytestmark = pytest.mark.processes

HERON = str(Path(sys.executable).with_name("heron"))
TIMEOUT = 240


def set_log(project: Path, log: dict[str, object]) -> None:
    config_file = project / "config.json"
    config = json.loads(config_file.read_text())
    config["envs"]["prod"]["log"] = log
    config_file.write_text(json.dumps(config))


@pytest.mark.parametrize("multilang", [False, True], ids=["in-process", "multilang"])
def test_sparse_run_shows_the_bolts_log_lines(
    request: pytest.FixtureRequest, tmp_path: Path, multilang: bool
) -> None:
    project = quickstart(tmp_path)
    if multilang:
        counted = (
            r"count_bolt:\d+ \| .* - pystorm\.component\.count_bolt - counted \[[\d,]+\] words.*"
        )
    else:  # config.json's relative log path: from the project, where pystorm writes too
        set_log(project, {"path": "logs", "max_bytes": 100000, "backup_count": 2})
        (project / "logs").mkdir()
        counted = r"count_bolt:\d+ \| counted \[[\d,]+\] words \[pid=\d+\]"
    failures = request.session.testsfailed
    with (
        isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home,
        subprocess.Popen(
            [HERON, "sparse", "run", "--heron-home", str(home), *(["--multilang"] * multilang)],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc,
    ):
        out, err = PipeLines(proc.stdout), PipeLines(proc.stderr)
        try:
            wait_until(lambda: out.match(counted), "the bolt's log lines", timeout=TIMEOUT)
            if not multilang:
                logs = project / "logs"
                wait_until(
                    lambda: any(
                        "counted [" in p.read_text() for p in logs.glob("pystorm_*count_bolt*")
                    ),
                    "pystorm's own log file",
                    timeout=TIMEOUT,
                )
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=TIMEOUT) == 0, "\n".join(err.join(TIMEOUT))
        finally:
            proc.kill()
            lines, errors = out.join(TIMEOUT), err.join(TIMEOUT)
        assert processes_mentioning(home) == []
    assert "stopped by SIGINT" in "\n".join(lines)
    assert lines[-1].startswith(f"logs: {home / 'logs' / 'wordcount-'}")
    if not multilang:
        assert f"Routing Python logging to {project / 'logs'} (and to the console)." in errors


def test_a_log_path_that_does_not_exist_is_an_error_before_anything_starts(
    tmp_path: Path,
) -> None:
    project = quickstart(tmp_path)
    set_log(project, {"path": "missing/logs", "level": "info"})
    done = subprocess.run(
        [HERON, "sparse", "run", "--heron-home", str(tmp_path / "home")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2, done.stderr
    message = " ".join(done.stderr.split())
    assert f"the log path {project / 'missing' / 'logs'} (config.json's" in message
    assert "does not exist. pystorm does not create it" in message
    assert f"mkdir -p {project / 'missing' / 'logs'}" in message
    assert not (tmp_path / "home" / "topologies").exists()
