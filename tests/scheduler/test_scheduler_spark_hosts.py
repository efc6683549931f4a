"""The spark cluster across hosts: a word count whose containers run on three machines.

The machines are network namespaces (`heron_core.testing.netns`) joined by a bridge (veth
pairs where the kernel has no bridges), with addresses only in TEST-NET-1. ZooKeeper, the Spark
master and the topology's driver (the scheduler service of ``heron submit spark``) run in the
root namespace on the gateway address; one one-core Spark worker runs in each namespace, so
each of the three containers (the topology manager's and two stream managers') lands on a host
of its own: with two hosts, Spark (which places tasks at random among free slots) would put
both stream managers on one host in one run out of three. The workers have no
``SPARK_LOCAL_IP``: each container's daemons pick the address that routes to the driver
(``spark.driver.host``, given as a ``heron.scheduler.spark.conf`` property).

The test checks that each daemon runs in its container's namespace and listens on that host's
address only, that the state manager holds those addresses (so stream managers on two hosts
exchange tuples), that the count is exact with words counted on the host without the spout,
and that ``heron kill`` leaves no process in any namespace, no znode and a FINISHED
application. Smaller tests check the network helper itself: both of its modes carry traffic
between every pair of hosts and leave nothing behind, and what a crashed run left is removed.

The daemons' TCP sockets use CurveZMQ by default: this test, which depends on no
detail of the transport, so also shows the CURVE handshake working across hosts (with the key
pair shipped in the container package), and keeps covering whatever transport is the default.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import pytest
from spark_support import (
    SPARK_CONF,
    SparkTopologyRun,
    assert_exact,
    container_processes,
    processes_of,
    topology_id,
    topology_run,
    wait_all_acked,
    wait_for,
    znodes_naming,
)

from heron_core.statemgr import create_state_manager
from heron_core.testing.netns import (
    SUBNET,
    Host,
    HostNetwork,
    Mode,
    NetworkError,
    listening_addresses,
    namespace_of,
    netns_unavailable,
    remove_leftovers,
)
from heron_core.testing.spark import (
    QUICK_START_JAVA_OPTIONS,
    SparkClusterError,
    SparkStandaloneCluster,
    WorkerSite,
)
from heron_core.testing.zookeeper import ZooKeeperServer, ZooKeeperServerError

pytestmark = [pytest.mark.processes, pytest.mark.zookeeper]

NAME = "xhosts"
SENTENCES = 300
HOSTS = 3  # one per container: the topology manager's and two stream managers'


def _failed_since(request: pytest.FixtureRequest, failures: int) -> bool:
    return request.session.testsfailed > failures


@pytest.fixture
def network() -> Iterator[HostNetwork]:
    """``HOSTS`` namespaces on a bridge; skips only without root or ``ip``, and never in CI
    (``CI`` set: CI runs as root and installs ``ip``). At teardown any process still in a
    namespace is killed by pid, which fails the test."""
    _require_netns()
    remove_leftovers()
    net = HostNetwork(HOSTS)
    try:
        net.start()
    except NetworkError as exc:
        pytest.fail(f"cannot make the test network: {exc}", pytrace=False)
    try:
        yield net
    finally:
        stragglers = net.stop()
    assert not stragglers, f"processes outlived the test in its namespaces: {stragglers}"


@pytest.fixture
def zookeeper(network: HostNetwork, request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """A ZooKeeper server of its own on the gateway address, as a ``zk_config``; its log is
    printed when the test failed."""
    failures = request.session.testsfailed
    server = ZooKeeperServer(host=network.gateway)
    try:
        server.start()
    except ZooKeeperServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield {
            "heron.class.state.manager": "zookeeper",
            "heron.statemgr.connection.string": server.connection_string,
            "heron.statemgr.root.path": f"/t-{uuid.uuid4().hex}",
        }
    finally:
        server.stop()
        if _failed_since(request, failures):
            print(f"--- ZooKeeper server log ---\n{server.log_text()}")


@pytest.fixture
def cluster(
    network: HostNetwork, request: pytest.FixtureRequest
) -> Iterator[SparkStandaloneCluster]:
    """A Spark master on the gateway address and one one-core worker in each namespace
    (``ip netns exec``), every daemon ended by process group at teardown; the daemons',
    executors' and containers' logs are printed when the test failed."""
    failures = request.session.testsfailed
    sites = [WorkerSite(h.address, tuple(h.command([])), local_ip=False) for h in network.hosts]
    spark = SparkStandaloneCluster(
        cores=1,
        memory="1g",
        host=network.gateway,
        sites=sites,
        java_options=QUICK_START_JAVA_OPTIONS,
    )
    try:
        spark.start()
    except SparkClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield spark
    finally:
        if _failed_since(request, failures):
            print(f"--- Spark cluster logs ---\n{spark.log_text()}")
            work = spark.work_dir
            for log in sorted(work.rglob("containers/*/logs/*.log")) if work else []:
                print(f"===== {log} =====\n{log.read_text(errors='replace')}")
        spark.stop()


@pytest.fixture
def run(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    zookeeper: dict[str, Any],
    cluster: SparkStandaloneCluster,
) -> Iterator[SparkTopologyRun]:
    """The test's `SparkTopologyRun` (torn down before the cluster): the ``heron`` commands
    run without ``SPARK_LOCAL_IP``, so the driver binds ``spark.driver.host``."""
    env = dict(os.environ)
    env.pop("SPARK_LOCAL_IP", None)
    with topology_run(request, tmp_path, zookeeper, environment=env) as topology:
        yield topology


def test_word_count_runs_across_three_hosts_and_kill_leaves_nothing(
    network: HostNetwork, cluster: SparkStandaloneCluster, run: SparkTopologyRun
) -> None:
    started = time.monotonic()
    submitted = run.submit(
        NAME,
        cluster,
        "topology.stmgrs=2",
        "topology.message.timeout.secs=120",
        f"sparktest.sentences={SENTENCES}",
        f"{SPARK_CONF}driver.host={network.gateway}",
        "heron.scheduler.spark.slots.timeout.secs=180",
    )
    assert submitted.returncode == 0, submitted.stderr
    ident = topology_id(submitted)
    took = {"submit": time.monotonic() - started}

    # Each container runs on a host of its own, every daemon in its container's namespace.
    containers = container_processes(ident)
    assert sorted(containers) == [0, 1, 2], containers
    hosts = {h.name: h for h in network.hosts}
    host_of: dict[int, Host] = {}
    for k, daemons in containers.items():
        where = {role: namespace_of(pid) for role, pid in daemons.items()}
        assert set(where.values()) <= set(hosts), f"container {k} runs outside the hosts: {where}"
        assert len(set(where.values())) == 1, f"container {k} spans hosts: {where}"
        host_of[k] = hosts[str(where["executor"])]
    assert sorted(h.name for h in host_of.values()) == sorted(hosts), host_of

    # Each daemon listens on its own host's address: not loopback, not the gateway.
    for k, daemons in containers.items():
        for role, pid in daemons.items():
            listening = listening_addresses(pid)
            assert {address for address, _ in listening} <= {host_of[k].address}, (
                f"{role} of container {k} (pid {pid}) on {host_of[k]} listens on {listening}"
            )
    assert listening_addresses(containers[0]["tmanager"]), "the tmanager listens on nothing"
    for k in (1, 2):
        assert listening_addresses(containers[k]["stmgr"]), f"stmgr-{k} listens on nothing"

    # The state manager holds those addresses: the stream managers reach each other there.
    with create_state_manager(run.zk, "spark") as state:
        tmanager = state.get_tmanager_location(NAME)
        plan = state.get_physical_plan(NAME)
    assert tmanager is not None and plan is not None
    assert tmanager.host == host_of[0].address
    stmgrs = {s.container_id: s for s in plan.stmgrs}
    assert sorted(stmgrs) == [1, 2]
    for k, stmgr in stmgrs.items():
        assert (stmgr.host_name, stmgr.pid) == (host_of[k].address, containers[k]["stmgr"])
    assert len({s.host_name for s in plan.stmgrs}) == 2

    # Exact counts, with words counted on the host that does not run the spout: those
    # tuples crossed from one host to the other.
    wait_all_acked(run.out, SENTENCES)
    took["count"] = time.monotonic() - started - took["submit"]
    assert_exact(run.out, SENTENCES)
    container_of = {i.info.task_id: int(i.stmgr_id.split("-")[1]) for i in plan.instances}
    components = {i.info.task_id: i.info.component_name for i in plan.instances}
    spout_containers = {container_of[t] for t, c in components.items() if c == "sentences"}
    assert len(spout_containers) == 1
    elsewhere = [
        t for t, c in components.items() if c == "count" and container_of[t] not in spout_containers
    ]
    assert elsewhere, f"every count task shares the spout's container: {container_of}"
    across = sum(_lines(run.out / f"count-{t}.jsonl") for t in elsewhere)
    assert across > 0, f"count tasks {elsewhere}, away from the spout, counted nothing"

    # Kill: no process of the topology on any host, no znode, a FINISHED application. (The
    # namespaces share this machine's pids, so `heron kill` could still end a container's
    # process itself once the scheduler service has exited, which it cannot on real hosts;
    # measured here, Spark's cancel ends them all before the service exits.)
    killing = time.monotonic()
    killed = run.heron("kill", "spark", NAME)
    assert killed.returncode == 0, killed.stderr
    assert processes_of(ident) == []
    assert znodes_naming(run.zk, NAME) == []
    wait_for(
        lambda: (
            [a["state"] for a in cluster.applications(f"heron-{NAME}")["completed"]] == ["FINISHED"]
        ),
        "the application to be listed as FINISHED",
        timeout=120,
    )
    assert cluster.applications(f"heron-{NAME}")["active"] == []
    workers = {h.name: cluster.daemon_pids[f"worker-{i}"] for i, h in enumerate(network.hosts)}

    def only_workers_left() -> bool:
        return all(host.pids() == [workers[host.name]] for host in network.hosts)

    wait_for(only_workers_left, f"only the Spark workers {workers} left in their namespaces", 120)
    took["kill"] = time.monotonic() - killing
    print(
        f"across {HOSTS} hosts ({network.mode}): "
        + ", ".join(f"{k} {v:.1f} s" for k, v in took.items())
    )


def _lines(path: Path) -> int:
    """How many lines ``path`` holds (0 when it does not exist)."""
    try:
        return len(path.read_text(encoding="utf-8").splitlines())
    except FileNotFoundError:
        return 0


# ---------------------------------------------------------------------------- the network helper


def _require_netns() -> None:
    reason = netns_unavailable()
    if reason is not None and os.environ.get("CI"):
        pytest.fail(f"CI must run the multi-host test: {reason}", pytrace=False)
    if reason is not None:
        pytest.skip(reason)


def _named(tag: str) -> list[str]:
    """The namespaces and links whose names start with ``tag``."""
    namespaces = _ip("netns", "list").splitlines()
    links = [line.split(":")[1].strip() for line in _ip("-o", "link", "show").splitlines()]
    names = [line.split()[0] for line in namespaces if line.strip()]
    names += [link.split("@")[0] for link in links]
    return [name for name in names if name.startswith(tag)]


def _ip(*args: str) -> str:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("mode", ["bridge", "veth"])
def test_host_network_joins_every_host_and_leaves_nothing(mode: Mode) -> None:
    _require_netns()
    remove_leftovers()
    forwarding = Path("/proc/sys/net/ipv4/ip_forward").read_text()
    net = HostNetwork(2, mode=mode)
    probe: subprocess.Popen[bytes] | None = None
    try:
        net.start()  # checks over TCP that every host reaches every other and the gateway
        assert net.mode == mode
        assert net.block.subnet_of(SUBNET) and ip_address(net.gateway) in net.block
        for host in net.hosts:
            shown = _ip("-n", host.name, "-o", "addr", "show").splitlines()
            addresses = {line.split()[3].split("/")[0] for line in shown}
            assert addresses == {"127.0.0.1", "::1", host.address}, shown
            assert ip_address(host.address) in net.block
        probe = subprocess.Popen(net.hosts[1].command(["sleep", "600"]))
        wait_for(lambda: net.hosts[1].pids() == [probe.pid], "a sleep in the second host", 30)
        assert namespace_of(probe.pid) == net.hosts[1].name
    finally:
        killed = net.stop()
        if probe is not None:
            probe.kill()
            probe.wait()
    assert probe is not None and killed == [probe.pid]  # stop ends what a test left behind
    assert _named(net.tag) == []
    assert Path("/proc/sys/net/ipv4/ip_forward").read_text() == forwarding


_CRASHING_RUN = """
import subprocess, sys
from heron_core.testing.netns import HostNetwork
net = HostNetwork(2)
net.start()
sleeper = subprocess.Popen(
    net.hosts[0].command(["sleep", "600"]),
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
print(net.tag, sleeper.pid, flush=True)
sys.stdin.read()
"""


def test_leftovers_of_a_crashed_run_are_removed() -> None:
    _require_netns()
    crashing = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_RUN],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sleeper = 0
    try:
        assert crashing.stdout is not None
        line = crashing.stdout.readline().split()
        assert len(line) == 2, f"the crashing run did not start: {crashing.communicate()}"
        tag, sleeper = line[0], int(line[1])
        crashing.send_signal(signal.SIGKILL)
        crashing.communicate()
        assert _named(tag), "the killed run left nothing to remove"
        removed = remove_leftovers()
        assert _named(tag) == []
        assert set(removed) >= {f"{tag}-a", f"{tag}-b", f"{tag}br"}
        wait_for(
            lambda: namespace_of(sleeper) is None, "the sleep in a removed namespace to end", 30
        )
    finally:
        if crashing.poll() is None:
            crashing.kill()
            crashing.communicate()
        if sleeper:
            with contextlib.suppress(ProcessLookupError):
                os.kill(sleeper, signal.SIGKILL)
        remove_leftovers()
