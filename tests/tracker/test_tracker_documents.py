"""The tracker's documents built from state-manager nodes (no processes): which topologies
are listed, roles and environs, and the physical plan's groups and log links."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from heron_core.proto import execution_state_pb2, physical_plan_pb2, topology_pb2
from heron_core.tracker import DEFAULT_ENVIRON, TopologySnapshot


def _snapshot(cluster_in_state: str = "local") -> TopologySnapshot:
    bolt = topology_pb2.Bolt(
        comp=topology_pb2.Component(name="split_words", parallelism=1),
        inputs=[
            topology_pb2.InputStream(
                stream=topology_pb2.StreamId(id="default", component_name="src"),
                gtype=topology_pb2.FIELDS,
            )
        ],
    )
    spout = topology_pb2.Spout(comp=topology_pb2.Component(name="src", parallelism=1))
    topology = topology_pb2.Topology(id="t-1", name="t", spouts=[spout], bolts=[bolt])
    plan = physical_plan_pb2.PhysicalPlan(
        topology=topology,
        stmgrs=[physical_plan_pb2.StMgr(id="stmgr-3", container_id=3, host_name="h")],
        instances=[
            physical_plan_pb2.Instance(
                instance_id="container_3_split_words_2",
                stmgr_id="stmgr-3",
                info=physical_plan_pb2.InstanceInfo(task_id=2, component_name="split_words"),
            )
        ],
    )
    state = execution_state_pb2.ExecutionState(cluster=cluster_in_state, submission_user="ann")
    return TopologySnapshot("local", "t", topology, None, plan, state)


def test_visibility_role_and_environ() -> None:
    snapshot = _snapshot()
    assert snapshot.visible and snapshot.role == "ann" and snapshot.environ == DEFAULT_ENVIRON
    assert not _snapshot("spark").visible  # another cluster sharing the store
    assert not TopologySnapshot("local", "t").visible  # nothing read yet


def test_groups_and_links_follow_containers_not_names() -> None:
    doc = _snapshot().physical_plan_doc()
    assert doc["instance_groups"] == {"container_3": ["container_3_split_words_2"]}
    assert doc["bolts"] == {"split_words": ["container_3_split_words_2"]}
    link = urlsplit(doc["instances"]["container_3_split_words_2"]["logfile"])
    assert link.path == "/topologies/containerfiledata"
    assert parse_qs(link.query) == {
        "cluster": ["local"],
        "environ": ["default"],
        "topology": ["t"],
        "container": ["3"],
        "path": ["logs/container_3_split_words_2.log"],
        "offset": ["-1"],
        "length": [str(1 << 20)],
    }
    assert "logs%2Fstmgr-3.log" in doc["stmgrs"]["stmgr-3"]["logfiles"]
    assert _snapshot().container_of("metricsmgr-3") == 3
    assert _snapshot().container_of("stmgr-4") is None


def test_logical_plan_grouping_names_and_stages() -> None:
    plan = _snapshot().logical_plan()
    assert plan["bolts"]["split_words"]["inputs"][0]["grouping"] == "FIELDS"
    assert plan["stages"] == 1 and plan["spouts"]["src"]["spout_type"] == "default"
