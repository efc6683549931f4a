"""``heron kill`` and ``heron list`` take ``--config-property`` like ``heron submit`` (the spark
cluster's ZooKeeper connection string comes that way), with the same one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from heron_core.cli import main
from heron_core.proto import topology_pb2
from heron_core.statemgr import create_state_manager


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    code = info.value.code
    return code if isinstance(code, int) else 1


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))


def test_list_and_kill_reach_the_state_the_properties_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "elsewhere"
    with create_state_manager({"heron.statemgr.root.path": str(state)}, "local") as sm:
        sm.set_topology("wc", topology_pb2.Topology(id="wc-1", name="wc"))
    prop = ["--config-property", f"heron.statemgr.root.path={state}"]
    assert _exit_code(["list", "local"]) == 0
    assert capsys.readouterr().out == "no topologies on cluster 'local'\n"
    assert _exit_code(["list", "local", *prop]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("wc ")
    assert _exit_code(["kill", "local", "wc", *prop]) == 0
    assert capsys.readouterr().out == "killed topology 'wc' on 'local'\n"
    assert _exit_code(["list", "local", *prop]) == 0
    assert capsys.readouterr().out == "no topologies on cluster 'local'\n"


@pytest.mark.zookeeper
def test_list_of_the_spark_cluster_on_a_given_zookeeper(
    capsys: pytest.CaptureFixture[str], zk_config: dict[str, Any]
) -> None:
    props = [
        f"heron.statemgr.connection.string={zk_config['heron.statemgr.connection.string']}",
        f"heron.statemgr.root.path={zk_config['heron.statemgr.root.path']}",
    ]
    argv = ["list", "spark"]
    for prop in props:
        argv += ["--config-property", prop]
    assert _exit_code(argv) == 0
    assert capsys.readouterr().out == "no topologies on cluster 'spark'\n"


def test_a_bad_property_of_kill_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["kill", "local", "wc", "--config-property", "heron.nope=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("heron: error: ") == 1 and "'heron.nope'" in err
