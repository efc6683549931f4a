"""``heron run`` shows what the components write and how they crash, and keeps the logs."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from home_support import (  # noqa: F401 - heron_home_fixture is a fixture
    heron_home_fixture,
    processes_under,
    wait_until,
)

from heron_core.cli import _run as run_cli
from heron_core.cli.main import cli
from heron_core.testing.processes import PipeLines

HERON = str(Path(sys.executable).with_name("heron"))
TIMEOUT = 240

CHATTY = textwrap.dedent(
    '''
    """A spout that prints and logs, and a bolt that cannot find its data file."""

    import logging

    from heron_core.api import Bolt, Grouping, Spout, Topology

    log = logging.getLogger("chatty")


    class WordSpout(Spout):
        outputs = ["word"]

        def initialize(self, config, context):
            print("hello from", context.get_component_id())
            log.info("spout ready")
            self.n = 0

        def next_tuple(self):
            self.n += 1
            self.emit([f"w{self.n % 7}"])


    class CountBolt(Bolt):
        def initialize(self, config, context):
            self.words = open("words.txt").read().split()

        def process(self, tup):
            self.ack(tup)


    class Chatty(Topology):
        config = {
            "heron.executor.restart.backoff.initial.secs": 0.2,
            "heron.executor.restart.backoff.max.secs": 1.0,
        }
        word_spout = WordSpout.spec(par=1)
        count_bolt = CountBolt.spec(par=2, inputs={word_spout: Grouping.SHUFFLE})
    '''
)


@pytest.mark.processes
def test_run_shows_prints_logs_and_crashes_then_keeps_the_logs(
    heron_home: Path, tmp_path: Path
) -> None:
    topology = tmp_path / "topo" / "chatty.py"
    topology.parent.mkdir()
    topology.write_text(CHATTY)
    with subprocess.Popen(
        [HERON, "run", str(topology), "--heron-home", str(heron_home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        out, err = PipeLines(proc.stdout), PipeLines(proc.stderr)
        try:
            for what, pattern in [
                ("a print", r"word_spout:\d+ \| hello from word_spout"),
                ("a user logger's line", r"word_spout:\d+ \| spout ready"),
                (
                    "the exception",
                    r"count_bolt:\d+ \| FileNotFoundError: \[Errno 2\] No such file or "
                    r"directory: 'words.txt'",
                ),
                (
                    "a second crash (after a restart)",
                    r"count_bolt:\d+ \| exited with exit status 1 \(crash 2\); the executor "
                    r"restarts it",
                ),
            ]:
                wait_until(lambda p=pattern: out.match(p), what, timeout=TIMEOUT)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=TIMEOUT) == 0, "\n".join(err.join(TIMEOUT))
        finally:
            proc.kill()
            lines = out.join(TIMEOUT)
            err.join(TIMEOUT)
    text = "\n".join(lines)
    assert out.match(r"count_bolt:\d+ \| ERROR .*: user code raised; .*"), text
    assert out.match(r"count_bolt:\d+ \|   File .*chatty\.py\", line \d+, in initialize"), text
    assert "started (pid-local task" not in text and "registered with" not in text  # chatter
    assert "stopped by SIGINT" in text
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["component", "kind"])
    assert lines[header].split()[7] == "restarts"
    rows = {line.split()[0]: line.split() for line in lines[header + 2 : header + 4]}
    assert int(rows["count_bolt"][7]) >= 1 and rows["word_spout"][7] == "0"
    assert lines[-1].startswith("logs: ")
    logs = Path(lines[-1].removeprefix("logs: "))
    assert logs.parent == heron_home / "logs" and logs.name.startswith("Chatty-")
    assert "FileNotFoundError" in "".join(
        p.read_text() for p in logs.glob("container_*_count_bolt_*.log")
    )
    assert (logs / "executor-1.status.json").exists()
    assert not (heron_home / "topologies" / "local" / "Chatty").exists()
    assert processes_under(heron_home) == []


def test_quiet_and_keep_dir_are_passed_on_and_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}
    monkeypatch.setattr(run_cli, "run", lambda *args, **kwargs: seen.update(kwargs))
    runner = CliRunner()
    assert runner.invoke(cli, ["run", "t.py", "--quiet"]).exit_code == 0
    assert seen["show_logs"] is False
    assert runner.invoke(cli, ["run", "t.py"]).exit_code == 0
    assert seen["show_logs"] is True
    help_text = " ".join(runner.invoke(cli, ["run", "--help"]).output.split())
    assert "-q, --quiet Do not show the components' log lines." in help_text
    assert "'<component>:<task> | <line>'" in help_text
    assert "<heron home>/logs/<topology>-<date>-<time>" in help_text
