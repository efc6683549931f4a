"""desired_processes: the processes of a container, derived from the packing plan."""

from __future__ import annotations

import json

import pytest

from heron_core.errors import SchedulerError
from heron_core.executor import DaemonContext, desired_processes, state_config_json
from heron_core.proto import packing_plan_pb2

CTX = DaemonContext(
    topology_name="wc",
    topology_id="wc-123",
    cluster="local",
    working_dir="/w",
    state_config='{"heron.class.state.manager": "localfs"}',
    local_endpoint="ipc:///tmp/heron-x/",
    command_prefix=("py", "-m"),
    shell_port=4242,
    shell_fd=9,
)


def _plan() -> packing_plan_pb2.PackingPlan:
    def inst(component: str, task: int, index: int) -> packing_plan_pb2.InstancePlan:
        return packing_plan_pb2.InstancePlan(
            component_name=component, task_id=task, component_index=index
        )

    return packing_plan_pb2.PackingPlan(
        id="plan-1",
        containers=[
            packing_plan_pb2.ContainerPlan(
                id=1, instances=[inst("count", 3, 0), inst("word", 1, 0)]
            ),
            packing_plan_pb2.ContainerPlan(id=2, instances=[inst("word", 2, 1)]),
        ],
    )


def _flag(argv: tuple[str, ...], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_container_zero_runs_only_the_tmanager() -> None:
    desired = desired_processes(_plan(), 0, CTX)
    assert list(desired) == ["tmanager"]
    argv = desired["tmanager"].argv
    assert argv[:3] == ("py", "-m", "heron_core.tmanager")
    assert _flag(argv, "--container") == "0"
    assert _flag(argv, "--topology-id") == "wc-123"
    assert json.loads(_flag(argv, "--state-config")) == {"heron.class.state.manager": "localfs"}
    assert desired["tmanager"].depends_on is None


def test_container_runs_its_metricsmgr_stmgr_then_its_instances_by_task_id() -> None:
    desired = desired_processes(_plan(), 1, CTX)
    assert list(desired) == [
        "metricsmgr-1",
        "stmgr-1",
        "container_1_word_1",
        "container_1_count_3",
    ]
    stmgr = desired["stmgr-1"].argv
    assert stmgr[:3] == ("py", "-m", "heron_core.stmgr")
    assert _flag(stmgr, "--local-endpoint") == "ipc:///tmp/heron-x/"
    assert _flag(stmgr, "--container") == "1"
    assert _flag(stmgr, "--shell-port") == "4242"  # it advertises the shell in the plan
    metricsmgr = desired["metricsmgr-1"]
    assert metricsmgr.argv[:3] == ("py", "-m", "heron_core.metricsmgr")
    assert _flag(metricsmgr.argv, "--local-endpoint") == "ipc:///tmp/heron-x/"
    assert _flag(metricsmgr.argv, "--shell-port") == "4242"  # where it serves the shell
    assert _flag(metricsmgr.argv, "--shell-fd") == "9"  # on the executor's listening socket
    assert metricsmgr.pass_fds == (9,) and desired["stmgr-1"].pass_fds == ()
    assert metricsmgr.depends_on is None  # a stmgr restart does not restart it
    count = desired["container_1_count_3"]
    assert count.depends_on == "stmgr-1"
    assert count.argv[:3] == ("py", "-m", "heron_core.instance")
    assert _flag(count.argv, "--task-id") == "3"
    assert _flag(count.argv, "--component") == "count"
    assert _flag(count.argv, "--component-index") == "0"
    assert _flag(count.argv, "--working-dir") == "/w"
    assert "--state-config" not in count.argv  # instances get their plan from the stmgr
    assert count.cwd == "/w/code"  # instances run in the code directory, the daemons in W
    assert desired["stmgr-1"].cwd is None


def test_other_containers_only_get_their_own_tasks() -> None:
    assert list(desired_processes(_plan(), 2, CTX)) == [
        "metricsmgr-2",
        "stmgr-2",
        "container_2_word_2",
    ]


def test_unknown_container_is_a_clear_error() -> None:
    with pytest.raises(
        SchedulerError, match=r"'wc': container 3 is not in packing plan 'plan-1'.*1, 2"
    ):
        desired_processes(_plan(), 3, CTX)


def test_state_config_keeps_only_state_manager_keys() -> None:
    config = {
        "heron.class.state.manager": "zookeeper",
        "heron.statemgr.connection.string": "127.0.0.1:2181",
        "topology.stmgrs": 3,
    }
    assert json.loads(state_config_json(config)) == {
        "heron.class.state.manager": "zookeeper",
        "heron.statemgr.connection.string": "127.0.0.1:2181",
    }
