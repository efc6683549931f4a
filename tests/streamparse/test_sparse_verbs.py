"""``heron sparse`` verbs without processes: errors, log following, the public names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import storm_compat.streamparse
import storm_compat.thrift
from heron_core.cli.main import main
from storm_compat.streamparse.cli import sparse
from storm_compat.streamparse.cli._tail import follow_logs


def minimal_project(root: Path) -> Path:
    (root / "topologies").mkdir(parents=True)
    (root / "topologies" / "wordcount.py").write_text("")
    config = {"topology_specs": "topologies/", "virtualenv_specs": "v/", "envs": {"prod": {}}}
    (root / "config.json").write_text(json.dumps(config))
    return root / "config.json"


def test_errors_are_one_line_naming_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["sparse", "run", "--config", str(tmp_path / "config.json")])
    assert exited.value.code == 2
    assert "heron: error: no streamparse project" in capsys.readouterr().err
    config = minimal_project(tmp_path / "p")
    home = ["--heron-home", str(tmp_path / "home")]
    for verb in ("kill", "tail"):
        with pytest.raises(SystemExit) as exited:
            main(["sparse", verb, "--config", str(config), *home])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert "virtualenv_specs is ignored" in err
        assert "no topology 'wordcount' on cluster 'local'; topologies there: none" in err
    with pytest.raises(SystemExit) as exited:
        main(["sparse", "list", "-e", "beta", "--config", str(config), *home])
    assert "no environment 'beta' (environments: prod)" in capsys.readouterr().err


def test_follow_prints_new_lines_of_old_and_new_logs(tmp_path: Path) -> None:
    first = tmp_path / "container_1_b_1.log"
    first.write_text("old line\n")
    (tmp_path / "tmanager.log").write_text("")
    printed: list[str] = []

    def append(path: Path, text: str) -> None:
        with path.open("a") as log:
            log.write(text)

    def second() -> None:
        append(first, "tial\n")
        append(tmp_path / "container_1_b_2.log", "x\n")
        append(tmp_path / "tmanager.log", "not an instance\n")

    steps = iter([lambda: append(first, "new line\npar"), second])

    def stop() -> bool:
        step = next(steps, None)
        if step is None:
            return True
        step()
        return False

    follow_logs(tmp_path, "container_*.log", printed.append, stop=stop, poll=0)
    assert printed == [
        "container_1_b_1: new line",
        "container_1_b_1: partial",
        "container_1_b_2: x",
    ]


def test_the_public_names_are_pinned() -> None:
    assert storm_compat.thrift.__all__ == [
        "SERIALIZER_KEY",
        "ObjectMapper",
        "ShellCommand",
        "ShellMapper",
        "multilang_spec",
        "plan_to_topology",
        "read_topology",
        "storm_thrift",
        "topology_to_plan",
        "write_topology",
    ]
    assert storm_compat.streamparse.__all__ == [
        "CONFIG_FILE",
        "MULTILANG_KEY",
        "RUN_MODULE",
        "PystormBoltAdapter",
        "PystormSpoutAdapter",
        "SparseProject",
        "load_project_topology",
        "load_sparse_topology",
        "sparse_options",
        "storm_context",
        "streamparse_object",
        "streamparse_shell",
        "topology_class_plan",
    ]
    for module in (storm_compat.thrift, storm_compat.streamparse):
        for name in module.__all__:
            assert getattr(module, name) is not None
    assert sorted(sparse.commands) == ["kill", "list", "run", "submit", "tail"]
