"""The heron command in this process: version, help texts, and one-line errors with exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest

from heron_core.cli import cli, main


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    code = info.value.code
    return code if isinstance(code, int) else 1


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["--version"]) == 0
    assert capsys.readouterr().out == "heron 0.1.0\n"


def test_every_verb_and_option_has_help() -> None:
    assert sorted(cli.commands) == [
        "activate",
        "deactivate",
        "kill",
        "list",
        "restart",
        "run",
        "submit",
        "tracker",
        "ui",
        "update",
    ]
    for command in cli.commands.values():
        assert command.help
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{command.name} {param.opts} has no help"


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The error line, checked to be the last line of stderr (after any progress lines)."""
    err = capsys.readouterr().err
    assert err.endswith("\n") and "Traceback" not in err, err
    last = err.splitlines()[-1]
    assert last.startswith("heron: error: "), err
    assert err.count("heron: error: ") == 1, err
    return last


def test_kill_of_an_unknown_topology(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["kill", "local", "nope"]) == 2
    assert "no topology 'nope' on cluster 'local'; topologies there: none" in _one_error_line(
        capsys
    )


def test_run_of_a_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["run", "no/such/topology.py", "--time", "1"]) == 2
    assert "'no/such/topology.py'" in _one_error_line(capsys)


def test_a_bad_config_property(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topology = tmp_path / "t_cli_bad_prop.py"
    topology.write_text(
        "from heron_core.api import Topology, shell_component\n"
        "class Lines(Topology):\n"
        "    lines = shell_component(['python3', 'l.py'], ['line']).spout_spec()\n"
    )
    monkeypatch.delitem(sys.modules, topology.stem, raising=False)  # forgotten afterwards
    monkeypatch.setattr(sys, "path", list(sys.path))
    argv = ["submit", "local", str(topology), "--config-property", "topology.stmgrs=lots"]
    assert _exit_code(argv) == 2
    assert "'topology.stmgrs'" in _one_error_line(capsys)


def test_an_unknown_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["list", "mars"]) == 2
    assert "unknown cluster 'mars'" in _one_error_line(capsys)


def test_list_of_an_empty_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["list", "local"]) == 0
    assert capsys.readouterr().out == "no topologies on cluster 'local'\n"


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["run"]) == 2
    assert _exit_code(["run", "x.py", "--time", "-1"]) == 2
    assert "Usage:" in capsys.readouterr().err


def test_a_registered_verb_that_cannot_be_loaded_says_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib
    import importlib.metadata
    from importlib.metadata import EntryPoint

    cli_main = importlib.import_module("heron_core.cli.main")  # the package's `main` shadows it
    broken = EntryPoint("sparse", "no_such_module_here:sparse", cli_main.COMMANDS_GROUP)
    # the CLI reads the entry points when it looks for a verb it does not have built in
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [broken])
    assert _exit_code(["sparse", "run"]) == 2
    err = capsys.readouterr().err
    assert "'heron sparse' is registered (no_such_module_here:sparse) but cannot be loaded" in err
    assert "No module named 'no_such_module_here'" in err and "No such command" not in err
    assert _exit_code(["--help"]) == 0
    assert "sparse" not in capsys.readouterr().out  # --help lists only what works
