"""Running ``heron ui`` as a real process from a test (imported by test modules, as
``tracker_support`` is for the tracker)."""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from heron_core.testing.processes import PipeLines, wait_until

HERON = str(Path(sys.executable).with_name("heron"))
_LISTENING = r"Heron UI listening on (http://\S+?)/? \(tracker .*\)"


class UIProcess:
    """``heron ui --port 0`` over ``tracker_url`` with the clusters of ``config_dir`` and heron
    home ``home`` (plus ``extra`` flags) in a child process; `url` once it printed its
    address, `audit_path` the audit log it announced."""

    def __init__(
        self, tracker_url: str, config_dir: Path, home: Path, extra: Sequence[str] = ()
    ) -> None:
        self.argv = [
            HERON,
            "ui",
            "--port",
            "0",
            "--tracker-url",
            tracker_url,
            "--config-path",
            str(config_dir),
            "--heron-home",
            str(home),
            *extra,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.out = PipeLines(self.proc.stdout)
        self.err = PipeLines(self.proc.stderr)
        wait_until(
            lambda: self.out.match(r"Heron UI audit log: .*") or self.proc.poll() is not None,
            "the UI to print its address and audit log",
            timeout=60,
        )
        assert self.proc.poll() is None, f"the UI exited:\n{self.logs()}"
        found = re.fullmatch(_LISTENING, self.out.match(_LISTENING)[0])
        assert found is not None
        self.url = found.group(1)
        self.audit_path = Path(self.out.match(r"Heron UI audit log: (.*)")[0].split(": ", 1)[1])
        self.http = httpx.Client(base_url=self.url, timeout=60)

    def logs(self) -> str:
        """What the UI wrote so far."""
        return "\n".join(["--- stdout ---", *self.out.lines, "--- stderr ---", *self.err.lines])

    def kill(self) -> None:
        """SIGTERM, then SIGKILL by pid after 15 s; its pipes closed."""
        self.http.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        self.out.join(10)
        self.err.join(10)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@contextlib.contextmanager
def running_ui(
    tracker_url: str,
    config_dir: Path,
    home: Path,
    failed: Callable[[], bool],
    extra: Sequence[str] = (),
) -> Iterator[UIProcess]:
    """A UI for the length of the block, stopped by pid whatever happens; its output is
    printed when ``failed()``."""
    ui = UIProcess(tracker_url, config_dir, home, extra)
    try:
        yield ui
    finally:
        ui.kill()
        if failed():
            print(ui.logs())


def page_config(page: str) -> dict[str, Any]:
    """The ``data-config`` of a UI page (its token is in ``["csrf"]``)."""
    found = re.search(r'<body data-config="([^"]*)">', page)
    assert found, page
    config: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return config
