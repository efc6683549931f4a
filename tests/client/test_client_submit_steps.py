"""The steps of submit, kill and list that need no process: config layering, packing,
installing and uninstalling state, listing, metrics aggregation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from heron_core.ckptmgr import create_state_store
from heron_core.client import (
    HERON_HOME_ENV,
    LoadedTopology,
    RateMeter,
    client_config,
    component_stats,
    install,
    kill,
    list_topologies,
    prepare,
    uninstall,
)
from heron_core.config import config_from_proto
from heron_core.errors import ConfigurationError, SchedulerError, StateManagerError
from heron_core.plan import ComponentDef, GroupingKind, InputDef, LogicalPlan, ShellSpec, StreamDef
from heron_core.proto import metrics_pb2, scheduler_pb2
from heron_core.statemgr import StateManager, create_state_manager


def _loaded(code_root: Path | None, **config: object) -> LoadedTopology:
    words = ComponentDef(
        "words", True, ShellSpec(("python3", "w.py")), outputs=(StreamDef("default", ("w",)),)
    )
    count = ComponentDef(
        "count",
        False,
        ShellSpec(("python3", "c.py")),
        parallelism=3,
        inputs=(InputDef("words", "default", GroupingKind.SHUFFLE),),
    )
    plan = LogicalPlan("wc", "wc-42", (words, count), tuple(config.items()))
    plan.validate()
    return LoadedTopology(plan, code_root, "test")


# --- config layering -------------------------------------------------------------------------


def test_layers_defaults_cluster_topology_command_line(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("topology.stmgrs: 2\ntopology.debug: true\n")
    cfg = client_config(
        "mine",
        config_path=tmp_path,
        topology_config={"topology.stmgrs": 3, "topology.message.timeout.secs": 7},
        overrides=["topology.message.timeout.secs=9", "my.key=[1, 2]"],
    )
    assert cfg["topology.debug"] is True  # cluster YAML over the default
    assert cfg["topology.stmgrs"] == 3  # topology config over the cluster YAML
    assert cfg["topology.message.timeout.secs"] == 9  # command line over the topology
    assert cfg["my.key"] == [1, 2]
    assert cfg["heron.executor.restart.max.attempts"] == 150  # registry default


def test_heron_home_from_the_environment_or_the_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HERON_HOME_ENV, str(tmp_path / "env"))
    cfg = client_config("local")
    assert cfg["heron.directory.home"] == str(tmp_path / "env")
    assert cfg["heron.statemgr.root.path"] == str(tmp_path / "env" / "repository" / "state")
    assert client_config("local", heron_home=tmp_path / "arg")["heron.directory.home"] == str(
        tmp_path / "arg"
    )
    explicit = client_config("local", overrides=["heron.statemgr.root.path=/elsewhere"])
    assert explicit["heron.statemgr.root.path"] == "/elsewhere"


def test_heron_home_leaves_a_zookeeper_root_alone(tmp_path: Path) -> None:
    cfg = client_config("localzk", heron_home=tmp_path)
    assert cfg["heron.directory.home"] == str(tmp_path)
    assert cfg["heron.statemgr.root.path"] == "/heron"


def test_bad_override_and_unknown_cluster_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"topology\.stmgrs"):
        client_config("local", overrides=["topology.stmgrs=many"])
    with pytest.raises(ConfigurationError, match="unknown cluster 'mars'"):
        client_config("mars")


# --- prepare / install / uninstall -----------------------------------------------------------


def test_prepare_resolves_config_into_the_topology_and_packs(tmp_path: Path) -> None:
    deployment = prepare(
        "local", _loaded(None, **{"topology.stmgrs": 2}), ["topology.debug=true"], None, tmp_path
    )
    stored = config_from_proto(deployment.topology.topology_config)
    assert stored == deployment.config
    assert stored["topology.name"] == "wc"
    assert stored["topology.debug"] is True
    assert [c.id for c in deployment.packing_plan.containers] == [1, 2]
    assert deployment.working_dir == tmp_path / "topologies" / "local" / "wc"
    assert deployment.runtime.topology_id == "wc-42"


def _state(home: Path) -> StateManager:
    return create_state_manager(client_config("local", heron_home=home), "local")


def test_install_copies_code_and_stores_state_in_order(tmp_path: Path) -> None:
    code = tmp_path / "project"
    for relative in ("topo.py", "lib/util.py", ".git/HEAD", "lib/__pycache__/x.pyc", "old.pyc"):
        (code / relative).parent.mkdir(parents=True, exist_ok=True)
        (code / relative).write_text("x")
    (code / "env").mkdir()
    (code / "env" / "pyvenv.cfg").write_text("home = /usr")
    home = code / "home"  # a heron home inside the code root is not copied into itself
    deployment = prepare("local", _loaded(code), (), None, home)
    with _state(home) as state:
        install(state, deployment)
        copied = sorted(
            str(p.relative_to(deployment.working_dir / "code"))
            for p in (deployment.working_dir / "code").rglob("*")
        )
        assert copied == ["lib", "lib/util.py", "topo.py"]
        assert (deployment.working_dir / "logs").is_dir()
        assert state.get_topology("wc") == deployment.topology
        assert state.get_packing_plan("wc") == deployment.packing_plan
        execution = state.get_execution_state("wc")
        assert execution is not None
        assert execution.topology_id == "wc-42"
        assert execution.working_directory == str(deployment.working_dir)
        with pytest.raises(SchedulerError, match="'wc' already exists on cluster 'local'"):
            install(state, deployment)
        assert [i.name for i in list_topologies("local", heron_home=home)] == ["wc"]


def test_install_undoes_everything_when_a_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deployment = prepare("local", _loaded(None), (), None, tmp_path)
    with _state(tmp_path) as state:

        def fail(name: str, message: object) -> None:
            raise StateManagerError("disk full")

        monkeypatch.setattr(state, "set_execution_state", fail)
        with pytest.raises(StateManagerError, match="disk full"):
            install(state, deployment)
        assert state.get_topology("wc") is None
        assert state.get_packing_plan("wc") is None
        assert not deployment.working_dir.exists()


KILL_ORDER = (
    "tmanager_location",
    "packing_plan",
    "physical_plan",
    "scheduler_location",
    "execution_state",
    "stateful_checkpoints",
    "topology",
)


def _recording(kind: str, state: StateManager, log: list[str]) -> Callable[[str], None]:
    original = getattr(state, f"delete_{kind}")

    def delete(name: str) -> None:
        log.append(kind)
        original(name)

    return delete


def test_uninstall_deletes_in_herons_kill_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deployment = prepare("local", _loaded(None), (), None, tmp_path)
    deleted: list[str] = []
    with _state(tmp_path) as state:
        install(state, deployment)
        for kind in KILL_ORDER:
            monkeypatch.setattr(state, f"delete_{kind}", _recording(kind, state, deleted))
        uninstall(state, "wc", deployment.working_dir)
        assert state.list_topologies() == []
    assert deleted == list(KILL_ORDER)
    assert not deployment.working_dir.exists()


def test_uninstall_deletes_an_effectively_once_topologys_checkpoints(tmp_path: Path) -> None:
    mode = ("topology.reliability.mode=EFFECTIVELY_ONCE",)
    deployment = prepare("local", _loaded(None), mode, None, tmp_path)
    tasks = [i.task_id for c in deployment.packing_plan.containers for i in c.instances]
    store = create_state_store(deployment.config, "wc")
    for task in tasks:
        store.save("1700000000000-000001", task, b"state")
    with _state(tmp_path) as state:
        install(state, deployment)
        uninstall(state, "wc", deployment.working_dir)
    assert all(store.load("1700000000000-000001", task) is None for task in tasks)
    assert (tmp_path / "checkpoints").is_dir()  # the store's root stays, empty of this topology


# --- list / kill -----------------------------------------------------------------------------


def test_list_reports_running_while_the_scheduler_location_is_live(tmp_path: Path) -> None:
    deployment = prepare("local", _loaded(None), (), None, tmp_path)
    with _state(tmp_path) as state:
        install(state, deployment)
        (info,) = list_topologies("local", heron_home=tmp_path)
        assert (info.name, info.topology_id, info.state) == ("wc", "wc-42", "not running")
        assert info.submitted is not None
        location = scheduler_pb2.SchedulerLocation(topology_name="wc", pid=1)
        state.set_scheduler_location("wc", location)
        assert list_topologies("local", heron_home=tmp_path)[0].state == "running"
    assert list_topologies("local", heron_home=tmp_path)[0].state == "not running"


def test_kill_of_an_unknown_topology_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(SchedulerError, match=r"no topology 'nope' on cluster 'local'.*none"):
        kill("local", "nope", heron_home=tmp_path)
    with _state(tmp_path) as state:
        install(state, prepare("local", _loaded(None), (), None, tmp_path))
    with pytest.raises(SchedulerError, match="topologies there: wc"):
        kill("local", "nope", heron_home=tmp_path)


def test_kill_of_a_topology_without_processes_cleans_up(tmp_path: Path) -> None:
    deployment = prepare("local", _loaded(None), (), None, tmp_path)
    with _state(tmp_path) as state:
        install(state, deployment)
    messages: list[str] = []
    kill("local", "wc", heron_home=tmp_path, progress=messages.append)
    assert list_topologies("local", heron_home=tmp_path) == []
    assert not deployment.working_dir.exists()
    assert messages[-1] == "killed 'wc' on 'local'"


# --- metrics -----------------------------------------------------------------------------------


def _message(
    component: str, instance: str, at_ms: int = 0, **metrics: str
) -> metrics_pb2.MetricPublisherPublishMessage:
    return metrics_pb2.MetricPublisherPublishMessage(
        publisher=metrics_pb2.MetricPublisher(component_name=component, instance_id=instance),
        timestamp=at_ms,
        metrics=[metrics_pb2.MetricDatum(name=k, value=v) for k, v in metrics.items()],
    )


def test_component_stats_sum_instances_and_compute_rates() -> None:
    components = {"words": True, "count": False, "idle": False}
    meter = RateMeter(first_interval=2.0, clock=lambda: 10.0)
    first = component_stats(
        components,
        [
            _message(
                "words", "w1", 9_000, **{"__emit-count/default": "10", "__ack-count/default": "4"}
            ),
            _message("count", "c1", 9_000, **{"__execute-count/words/default": "6"}),
            _message("ghost", "g1", 9_000, **{"__emit-count/default": "99"}),
        ],
        meter,
    )
    # an instance's first message counts what it did in its first export interval
    assert [(s.component, s.instances, s.emitted, s.executed, s.acked, s.rate) for s in first] == [
        ("words", 1, 10, 0, 4, 5.0),
        ("count", 1, 0, 6, 0, 3.0),
        ("idle", 0, 0, 0, 0, 0.0),
    ]
    later = component_stats(
        components,
        [
            _message(
                "words", "w1", 9_500, **{"__emit-count/default": "30", "__fail-count/default": "1"}
            ),
            # the same message of c1 as before: its rate stays
            _message("count", "c1", 9_000, **{"__execute-count/words/default": "6"}),
            _message(
                "count", "c2", 9_800, **{"__execute-count/words/default": "8", "__x/s": "2.0"}
            ),
        ],
        meter,
    )
    words, count, _ = later
    assert (words.emitted, words.failed, words.rate) == (30, 1, 40.0)  # 20 in 0.5 s
    assert (count.instances, count.executed, count.rate) == (2, 14, 3.0 + 4.0)
    assert [s.rate for s in component_stats(components, [_message("words", "w1")])] == [0.0] * 3


def test_rate_meter_rates_between_an_instances_own_messages() -> None:
    now = [100.0]
    meter = RateMeter(first_interval=1.0, stale_after=5.0, clock=lambda: now[0])
    assert meter.rate("spout", 99_000, 1_000) == 1_000.0  # its first interval
    assert meter.rate("spout", 99_000, 1_000) == 1_000.0  # read again: not 0
    assert meter.rate("spout", 100_000, 1_000) == 0.0  # a later message, nothing emitted
    assert meter.rate("spout", 102_000, 5_000) == 2_000.0  # 4,000 in 2 s
    assert meter.rate("spout", 103_000, 300) == 300.0  # restarted: counters start over
    now[0] = 108.5
    assert meter.rate("spout", 103_000, 300) == 0.0  # 5.5 s old: dead or stuck
    assert meter.rate("bolt", 108_000, 0) == 0.0
