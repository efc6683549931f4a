"""Real stream manager processes (``python -m heron_core.stmgr``) of a 2-container topology,
with the real topology manager; the test plays the instances (with the instances' own
`StMgrClient`) and the metrics managers (a PULL bound on each container's metrics endpoint)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from heron_core.config import build_config
from heron_core.instance.stmgr_client import StMgrClient
from heron_core.network import (
    DATA,
    KEYS_DIR,
    TopologyKeys,
    data_frames,
    decode,
    metrics_endpoint,
    task_endpoint,
)
from heron_core.proto import (
    metrics_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    stmgr_pb2,
    topology_pb2,
)
from heron_core.statemgr import LocalFileSystemStateManager, StateKey
from heron_core.testing.processes import wait_until
from heron_core.testing.topologies import word_count_proto

pytestmark = pytest.mark.processes

DEADLINE_S = 60.0
SHELL_PORTS = {1: 4101, 2: 4102}
TASKS = {1: ("word", 1), 2: ("count", 1), 3: ("count", 2)}  # task -> (component, container)


def topology() -> topology_pb2.Topology:
    """Spout "word" (task 1, container 1) feeding bolt "count" (tasks 2 and 3, containers 1
    and 2); small watermarks and a short metrics interval."""
    config = build_config(
        topology_config={
            "heron.metrics.export.interval.sec": 0.2,
            "heron.streammgr.network.backpressure.highwatermark.mb": 2,
            "heron.streammgr.network.backpressure.lowwatermark.mb": 1,
            "heron.streammgr.tmanager.heartbeat.interval.sec": 1.0,
        }
    )
    return word_count_proto(config=config)


def packing() -> packing_plan_pb2.PackingPlan:
    containers: dict[int, list[packing_plan_pb2.InstancePlan]] = defaultdict(list)
    for task, (component, container) in TASKS.items():
        index = sum(1 for c, _ in list(TASKS.values())[: task - 1] if c == component)
        containers[container].append(
            packing_plan_pb2.InstancePlan(
                component_name=component, task_id=task, component_index=index
            )
        )
    return packing_plan_pb2.PackingPlan(
        id="wc-plan",
        containers=[
            packing_plan_pb2.ContainerPlan(id=c, instances=i) for c, i in containers.items()
        ],
    )


def instance_id(task: int) -> str:
    component, container = TASKS[task]
    return f"container_{container}_{component}_{task}"


class Cluster:
    """The daemons of topology "wc", and the test's sockets playing instances and metrics
    managers."""

    def __init__(self, root: Path, endpoints: Path) -> None:
        self.root = root
        self.state_config = json.dumps(
            {"heron.class.state.manager": "localfs", "heron.statemgr.root.path": str(root)}
        )
        self.prefix = {c: f"ipc://{endpoints}/{c}/" for c in SHELL_PORTS}
        for c in SHELL_PORTS:
            (endpoints / str(c)).mkdir(mode=0o700)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.metrics: dict[int, zmq.Socket[bytes]] = {}
        self.received: dict[int, list[metrics_pb2.MetricPublisherPublishMessage]] = {
            c: [] for c in SHELL_PORTS
        }
        self.clients: dict[int, StMgrClient] = {}
        for c, prefix in self.prefix.items():
            sock = self.context.socket(zmq.PULL)
            sock.setsockopt(zmq.LINGER, 0)
            sock.bind(metrics_endpoint(prefix))
            self.metrics[c] = sock

    def start(self, name: str, module: str, container: int, *extra: str) -> None:
        argv = [
            sys.executable,
            "-m",
            module,
            "--topology-name=wc",
            "--topology-id=wc-1",
            "--cluster=local",
            f"--working-dir={self.root}",
            f"--container={container}",
            f"--state-config={self.state_config}",
            *extra,
        ]
        with open(self.root / f"{name}.log", "wb") as out:
            self.procs[name] = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, cwd=self.root
            )

    def start_stmgr(self, container: int) -> None:
        self.start(
            f"stmgr-{container}",
            "heron_core.stmgr",
            container,
            f"--local-endpoint={self.prefix[container]}",
            f"--shell-port={SHELL_PORTS[container]}",
        )

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def register(self, task: int) -> StMgrClient:
        """Connect and register task ``task`` as its instance does; wait for the answer."""
        component, container = TASKS[task]
        client = StMgrClient(self.context, task_endpoint(self.prefix[container], task))
        instance = physical_plan_pb2.Instance(
            instance_id=instance_id(task),
            stmgr_id=f"stmgr-{container}",
            info=physical_plan_pb2.InstanceInfo(task_id=task, component_name=component),
        )
        client.register(instance, "wc", "wc-1")
        assert client.socket.poll(int(DEADLINE_S * 1000)), f"no answer to task {task}"
        response = decode(client.socket.recv_multipart())
        assert isinstance(response, stmgr_pb2.RegisterInstanceResponse)
        self.clients[task] = client
        return client

    def take_data(self, task: int) -> list[bytes]:
        """The data payloads waiting on task ``task``'s socket (control messages skipped)."""
        sock, found = self.clients[task].socket, []
        while sock.poll(0):
            frames = sock.recv_multipart()
            if frames[0] == DATA:
                found.append(frames[2])
        return found

    def take_metrics(self, container: int) -> list[metrics_pb2.MetricPublisherPublishMessage]:
        """Every metrics message stmgr-``container`` sent so far."""
        sock = self.metrics[container]
        while sock.poll(0):
            message = decode(sock.recv_multipart())
            assert isinstance(message, metrics_pb2.MetricPublisherPublishMessage)
            self.received[container].append(message)
        return self.received[container]

    def total(self, container: int, name: str) -> int:
        """The sum over every interval of metric ``name`` of stmgr-``container``."""
        return sum(
            int(d.value) for m in self.take_metrics(container) for d in m.metrics if d.name == name
        )

    def close(self) -> None:
        for client in self.clients.values():
            client.socket.close(linger=0)
            client.metrics_socket.close(linger=0)
        for sock in self.metrics.values():
            sock.close()
        self.context.term()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """Topology "wc" in a localfs state manager, its keys, a tmanager and two stmgrs; every
    process is killed by pid afterwards and its log printed."""
    TopologyKeys.create(tmp_path / KEYS_DIR)
    with LocalFileSystemStateManager({"heron.statemgr.root.path": str(tmp_path)}, "local") as sm:
        sm.add_key(StateKey.load("wc", tmp_path))
        sm.set_topology("wc", topology())
        sm.set_packing_plan("wc", packing())
    endpoints = Path(tempfile.mkdtemp(prefix="hs-"))  # ipc paths must stay short
    cluster = Cluster(tmp_path, endpoints)
    try:
        cluster.start("tmanager", "heron_core.tmanager", 0)
        for container in SHELL_PORTS:
            cluster.start_stmgr(container)
        yield cluster
    finally:
        for name, proc in cluster.procs.items():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            print(f"----- {name} (exit {proc.returncode})\n{cluster.log(name)}")
        cluster.close()
        shutil.rmtree(endpoints, ignore_errors=True)


def physical_plan(cluster: Cluster) -> physical_plan_pb2.PhysicalPlan | None:
    with LocalFileSystemStateManager(
        {"heron.statemgr.root.path": str(cluster.root)}, "local"
    ) as sm:
        return sm.get_physical_plan("wc")


def test_routing_metrics_shell_port_and_clean_exit(cluster: Cluster) -> None:
    for task in TASKS:
        cluster.register(task)
    wait_until(lambda: physical_plan(cluster) is not None, "the physical plan", DEADLINE_S)
    plan = physical_plan(cluster)
    assert plan is not None
    assert {s.id: s.shell_port for s in plan.stmgrs} == {
        f"stmgr-{c}": port for c, port in SHELL_PORTS.items()
    }
    # every instance has its plan: task 1 sends 30 batches to task 2 (local), 20 to task 3
    payload = b"x" * 1000
    spout = cluster.clients[1]
    for n in range(50):
        spout.send(data_frames(2 if n < 30 else 3, payload))
    got: dict[int, list[bytes]] = {2: [], 3: []}

    def delivered() -> bool:
        spout.drain()
        for task in got:
            got[task] += cluster.take_data(task)
        return len(got[2]) == 30 and len(got[3]) == 20

    wait_until(delivered, "every batch delivered", DEADLINE_S)
    assert set(got[2]) == set(got[3]) == {payload}
    expected = {
        (1, "__server/__batches_from_workers"): 50,
        (1, "__server/__bytes_from_workers"): 50_000,
        (1, "__server/__batches_to_workers"): 30,
        (1, "__server/__bytes_to_workers"): 30_000,
        (1, "__client_stmgr-2/__batches_to_stmgrs"): 20,
        (1, "__client_stmgr-2/__bytes_to_stmgrs"): 20_000,
        (2, "__server/__batches_from_stmgrs"): 20,
        (2, "__server/__bytes_from_stmgrs"): 20_000,
        (2, "__server/__batches_to_workers"): 20,
        (1, "__server/__batches_to_stmgrs_lost"): 0,
    }
    wait_until(
        lambda: {key: cluster.total(*key) for key in expected} == expected,
        f"the counts {expected}",
        DEADLINE_S,
    )
    message = cluster.take_metrics(1)[-1]
    assert (
        message.publisher.component_name,
        message.publisher.instance_id,
        message.publisher.hostname,
    ) == ("__stmgr__", "stmgr-1", "127.0.0.1")
    types = {d.name: d.type for d in message.metrics}
    values = {d.name: int(d.value) for d in message.metrics}
    assert types["__server/__batches_from_workers"] == metrics_pb2.SUM
    assert types["__process/__cpu_user_usec"] == metrics_pb2.SUM
    for name in (
        f"__connection_buffer_length_by_instanceid/{instance_id(2)}",
        f"__connection_buffer_by_instanceid/{instance_id(2)}/bytes",
        "__process/__uptime_sec",
        "__process/__mem_used_bytes",
    ):
        assert types[name] == metrics_pb2.LAST, name
    assert values["__process/__mem_used_bytes"] > 0
    assert values["__process/__uptime_sec"] >= 0
    assert f"__time_spent_back_pressure_by_compid/{instance_id(1)}" in values
    assert "__client_stmgr-1/__batches_to_stmgrs" not in values  # no client to itself

    for container in SHELL_PORTS:
        proc = cluster.procs[f"stmgr-{container}"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0


def test_back_pressure_throttles_the_spout_is_announced_and_measured(cluster: Cluster) -> None:
    """Task 2 stops reading: its outbox in stmgr-1 passes the high watermark (2 MB), stmgr-1
    stops reading its spout and tells stmgr-2; once task 2 reads again, all is delivered."""
    for task in TASKS:
        cluster.register(task)
    wait_until(lambda: physical_plan(cluster) is not None, "the physical plan", DEADLINE_S)
    payload, count = b"y" * 100_000, 200  # 20 MB towards task 2: more than every buffer
    spout = cluster.clients[1]
    for _ in range(count):
        spout.send(data_frames(2, payload))
    queued = f"__connection_buffer_by_instanceid/{instance_id(2)}/bytes"

    def throttled() -> bool:
        spout.drain()
        return "back pressure: " in cluster.log("stmgr-1") and any(
            d.name == queued and int(d.value) > 2 << 20
            for m in cluster.take_metrics(1)
            for d in m.metrics
        )

    wait_until(throttled, "back pressure in stmgr-1", DEADLINE_S)
    assert spout.pending, "the spout's socket is not read: its batches wait in the instance"
    wait_until(
        lambda: cluster.total(2, "__server/__time_spent_back_pressure_by_remote_stmgr") > 0,
        "stmgr-2 throttled by stmgr-1's announcement",
        DEADLINE_S,
    )
    received: list[bytes] = []

    def all_delivered() -> bool:
        spout.drain()
        received.extend(cluster.take_data(2))
        return len(received) == count

    wait_until(all_delivered, "every batch delivered once task 2 reads", DEADLINE_S)
    wait_until(lambda: "back pressure relieved" in cluster.log("stmgr-1"), "relief", DEADLINE_S)
    wait_until(
        lambda: (
            cluster.total(1, f"__time_spent_back_pressure_by_compid/{instance_id(2)}") > 0
            and cluster.total(1, "__server/__time_spent_back_pressure_initiated") > 0
        ),
        "the back-pressure time in stmgr-1's metrics",
        DEADLINE_S,
    )
    wait_until(
        lambda: cluster.total(1, "__server/__batches_to_workers") == count,
        f"{count} batches to workers counted",
        DEADLINE_S,
    )
    assert cluster.total(1, f"__time_spent_back_pressure_by_compid/{instance_id(3)}") == 0
