"""Running ``heron tracker`` as a real process from a test (imported by the test modules: a
second ``conftest.py`` would clash with the other folders' by module name)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from heron_core.testing.processes import PipeLines, isolated_home, wait_until

HERON = str(Path(sys.executable).with_name("heron"))
HERE = Path(__file__).resolve().parent


class TrackerProcess:
    """``heron tracker --port 0`` in a child process; `url` once it printed its address."""

    def __init__(self, config_dir: Path, home: Path) -> None:
        self.argv = [
            HERON,
            "tracker",
            "--port",
            "0",
            "--config-path",
            str(config_dir),
            "--heron-home",
            str(home),
        ]
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.out = PipeLines(self.proc.stdout)
        self.err = PipeLines(self.proc.stderr)
        wait_until(
            lambda: self.out.match(r"heron tracker: serving http://\S+") or self.proc.poll(),
            "the tracker to print its address",
            timeout=60,
        )
        assert self.proc.poll() is None, f"the tracker exited:\n{self.logs()}"
        line = self.out.match(r"heron tracker: serving http://\S+")[0]
        self.url = line.rpartition(" ")[2]
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def get(self, route: str, /, **params: Any) -> httpx.Response:
        """GET ``route`` with ``params`` (a list value repeats the parameter)."""
        return self.http.get(route, params=params or None)  # {} would drop a query in route

    def json(self, route: str, /, **params: Any) -> Any:
        """GET ``route``; its JSON, asserting a 200."""
        response = self.get(route, **params)
        assert response.status_code == 200, (route, params, response.status_code, response.text)
        return response.json()

    def logs(self) -> str:
        """What the tracker wrote so far."""
        return "\n".join(["--- stdout ---", *self.out.lines, "--- stderr ---", *self.err.lines])

    def stop(self) -> int:
        """SIGTERM; its exit status (it must exit within 60 s)."""
        self.http.close()
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)

    def kill(self) -> None:
        """SIGKILL it by pid if it is still running."""
        self.http.close()
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(30)
        self.out.join(10)
        self.err.join(10)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture(name="home")
def home_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; on failure every log under it is printed; no process may outlive it."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home


@contextlib.contextmanager
def running_tracker(config_dir: Path, home: Path, failed: Any) -> Iterator[TrackerProcess]:
    """A tracker for the length of the block, killed by pid whatever happens; its output is
    printed when ``failed()``."""
    tracker = TrackerProcess(config_dir, home)
    try:
        yield tracker
    finally:
        tracker.kill()
        if failed():
            print(tracker.logs())
