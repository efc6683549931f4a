"""Tampering with a topology's state and checkpoints: nothing is unpickled without the secret.

The state manager's nodes (ZooKeeper on ``localzk``, files on ``local``) and the checkpoint
store are reachable by more than the topology's processes. Whatever a daemon or the CLI
unpickles from them (config values, component specs, custom groupings, instance state) must
come from a holder of the topology's key pair: each node and each checkpoint carries an
HMAC-SHA256 keyed from the topology's secret (``heron_core.statemgr._seal``).

- The MAC envelope (unit and Hypothesis): a sealed value opens back to its payload; any bit
  flipped anywhere, a cut or an extension, another context or key is refused.
- In process: a tampered topology node (a pickled config value whose unpickling would create
  a marker) is refused by every CLI verb that would read it (``heron activate``, ``restart``,
  ``update``), ``heron list`` and the tracker's clients read it without unpickling, and
  ``heron kill`` kills it without unpickling anything; CONTROL: the same bytes unpickled
  create the marker.
- On a submitted topology (``localzk`` and ``local``): an anonymous ZooKeeper client cannot
  overwrite a node (its ACL), but can delete one and create it again (the kind directory's
  open ACL); a node so forged, or a state file written without the key, is refused by the
  restarted executor with an error naming the node, nothing of it runs, and ``heron kill``
  then leaves no process. CONTROL: the same tampering sealed with the topology's key (what a
  holder of ``W/keys`` could do) runs the pickle after the restart.
- Checkpoints of an EFFECTIVELY_ONCE topology: a stored state replaced by a pickle that would
  create the marker is refused at the rollback by the stream manager, naming the checkpoint,
  the task and the file, and the topology stays rolled back without it (it does not start
  from empty state: that would silently lose the counts); CONTROL: sealed with the topology's
  checkpoint key, the restored instance unpickles it.
"""

from __future__ import annotations

import os
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
import zmq
from hypothesis import given
from hypothesis import strategies as st
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from heron_core.api import Grouping, TopologyBuilder
from heron_core.ckptmgr import (
    CheckpointAuthenticationError,
    CheckpointManager,
    checkpoint_context,
    checkpoint_seal,
    create_state_store,
)
from heron_core.ckptmgr.localfs import LocalFileSystemStore
from heron_core.client import (
    LoadedTopology,
    TManagerClient,
    client_config,
    kill,
    list_topologies,
    restart,
    set_topology_state,
    submit,
    topology_processes,
    update,
)
from heron_core.config import config_from_proto, config_to_proto
from heron_core.config.codec import json_config_from_proto
from heron_core.network import KEYS_DIR, TopologyKeys
from heron_core.proto import execution_state_pb2, tmanager_pb2, topology_pb2
from heron_core.statemgr import (
    Kind,
    Seal,
    SealBroken,
    StateAuthenticationError,
    StateKey,
    create_state_manager,
)
from heron_core.statemgr._seal import MAC_BYTES, MAGIC, STATE_LABEL, unverified_payload
from heron_core.testing.attack import evil_pickle
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import isolated_home, run_command, wait_until
from heron_core.testing.zookeeper import ZooKeeperServer

E2E = Path(__file__).resolve().parents[1] / "e2e"
sys.path.insert(0, str(E2E))  # the end-to-end tests' components
from e2e_components import AckingSink, PacedSpout  # type: ignore[import-not-found]  # noqa: E402
from stateful_components import (  # type: ignore[import-not-found]  # noqa: E402
    CountBolt,
    OffsetSpout,
    Relay,
)

HERON = str(Path(sys.executable).with_name("heron"))
NAME = "tampered"
DEADLINE_S = 180.0

contexts = st.binary(max_size=64)
payloads = st.binary(max_size=512)


# --- the MAC envelope ----------------------------------------------------------------------------
@given(key=st.binary(min_size=32, max_size=32), context=contexts, payload=payloads)
def test_a_sealed_value_opens_back_to_its_payload(
    key: bytes, context: bytes, payload: bytes
) -> None:
    seal = Seal(key, "wc")
    sealed = seal.seal(context, payload)
    assert sealed.startswith(MAGIC) and len(sealed) == len(MAGIC) + MAC_BYTES + len(payload)
    assert seal.open(context, sealed) == payload
    assert unverified_payload(sealed) == payload


@given(context=contexts, payload=payloads, data=st.data())
def test_any_bit_flip_of_a_sealed_value_is_refused(
    context: bytes, payload: bytes, data: st.DataObject
) -> None:
    seal = Seal(b"k" * 32, "wc")
    sealed = bytearray(seal.seal(context, payload))
    bit = data.draw(st.integers(0, len(sealed) * 8 - 1), label="bit")
    sealed[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(SealBroken) as refused:
        seal.open(context, bytes(sealed))
    assert refused.value.unsealed == (bit < len(MAGIC) * 8)


@given(context=contexts, payload=payloads, data=st.data())
def test_a_cut_or_extended_sealed_value_is_refused(
    context: bytes, payload: bytes, data: st.DataObject
) -> None:
    seal = Seal(b"k" * 32, "wc")
    sealed = seal.seal(context, payload)
    cut = data.draw(st.integers(0, len(sealed) - 1), label="kept bytes")
    extra = data.draw(st.binary(min_size=1, max_size=8), label="appended")
    for changed in (sealed[:cut], sealed + extra):
        with pytest.raises(SealBroken):
            seal.open(context, changed)


@given(context=contexts, other=contexts, payload=payloads)
def test_another_context_or_key_is_refused(context: bytes, other: bytes, payload: bytes) -> None:
    seal = Seal(b"k" * 32, "wc")
    sealed = seal.seal(context, payload)
    if other != context:
        with pytest.raises(SealBroken, match="does not match"):
            seal.open(other, sealed)
    with pytest.raises(SealBroken, match="does not match"):
        Seal(b"j" * 32, "wc").open(context, sealed)
    with pytest.raises(SealBroken, match="carries no MAC"):
        seal.open(context, payload)


def test_each_use_of_the_secret_has_its_own_key() -> None:
    """The state seal, the checkpoint seal and the ZooKeeper password are derived apart (and
    none is the secret); two topologies' keys differ."""
    keys = TopologyKeys(*zmq.curve_keypair())
    state = StateKey.of("wc", keys)
    derived = {
        state.seal.key,
        keys.derive(b"heron checkpoint v1"),
        bytes.fromhex(state.digest_password),
    }
    assert len(derived) == 3 and keys.secret not in derived
    assert state.seal.key == keys.derive(STATE_LABEL)
    assert StateKey.of("wc", TopologyKeys(*zmq.curve_keypair())).seal.key != state.seal.key
    assert "digest_password" not in repr(state) and state.digest_password not in repr(state)


@given(data=st.data())
def test_a_state_file_with_a_flipped_bit_is_refused_naming_the_node(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    key = StateKey.of("wc", TopologyKeys(*zmq.curve_keypair()))
    config = {"heron.statemgr.root.path": str(tmp_path_factory.mktemp("state"))}
    with create_state_manager(config, "local", key=key) as sm:
        sm.set_topology("wc", topology_pb2.Topology(id="wc-1", name="wc"))
        file = Path(config["heron.statemgr.root.path"], "local", "topologies", "wc")
        original = file.read_bytes()
        header = original.index(b"\n") + 1  # the localfs header names the owner: not sealed
        bit = data.draw(st.integers(header * 8, len(original) * 8 - 1), label="bit")
        flipped = bytearray(original)
        flipped[bit // 8] ^= 1 << (bit % 8)
        file.write_bytes(bytes(flipped))
        with pytest.raises(StateAuthenticationError) as refused:
            sm.get_topology("wc")
    for part in ("topology 'wc'", "logical plan", "topologies/", str(file)):
        assert part in str(refused.value)


@given(data=st.data())
def test_a_checkpoint_with_a_flipped_bit_is_refused_naming_it(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    root = tmp_path_factory.mktemp("checkpoints")
    store = LocalFileSystemStore({"heron.statefulstorage.localfs.root.path": str(root)}, "wc")
    manager = CheckpointManager(store, Seal(b"k" * 32, "wc"))
    try:
        manager.save("0001-000001", 7, pickle.dumps({"count": 1}))
        manager.close()
        file = root / "wc" / "7" / "0001-000001"
        sealed = bytearray(file.read_bytes())
        bit = data.draw(st.integers(0, len(sealed) * 8 - 1), label="bit")
        sealed[bit // 8] ^= 1 << (bit % 8)
        file.write_bytes(bytes(sealed))
        with pytest.raises(CheckpointAuthenticationError) as refused:
            manager.load("0001-000001", 7)
        for part in ("topology 'wc'", "task 7", "checkpoint 0001-000001", str(file)):
            assert part in str(refused.value)
    finally:
        manager.close()


def test_json_config_never_unpickles(tmp_path: Path) -> None:
    """CONTROL included: the same message through `config_from_proto` runs the pickle."""
    marker = tmp_path / "marker"
    message = config_to_proto({"topology.workers": 2})
    message.kvs.add(key="attack", pickled_value=evil_pickle(marker))
    assert json_config_from_proto(message) == {"topology.workers": 2}
    assert not marker.exists()
    config_from_proto(message)
    assert marker.exists()


# --- the CLI on a tampered topology (no process runs) ---------------------------------------------
def _tampered(topology: topology_pb2.Topology, marker: Path) -> topology_pb2.Topology:
    """``topology`` with a config value whose unpickling creates ``marker``."""
    tampered = topology_pb2.Topology()
    tampered.CopyFrom(topology)
    tampered.topology_config.kvs.add(key="attack.payload", pickled_value=evil_pickle(marker))
    return tampered


def test_no_verb_unpickles_a_tampered_topology_and_kill_removes_it(tmp_path: Path) -> None:
    """A stored topology whose node was rewritten without the key (as by a heron before state
    authentication, or an attacker with write access to the state): ``activate``,
    ``restart`` and ``update`` refuse it naming the node; ``list`` and the tracker's tmanager
    client read it without unpickling; ``kill`` deletes it and its working directory. The
    marker never appears; CONTROL: unpickling the stored config creates it."""
    home = tmp_path / "home"
    marker = tmp_path / "marker"
    config = client_config("local", heron_home=home)
    root = home / "topologies" / "local" / NAME
    keys = TopologyKeys.create(root / KEYS_DIR)
    plain = topology_pb2.Topology(id=f"{NAME}-1", name=NAME)
    plain.topology_config.CopyFrom(config_to_proto({**config, "topology.name": NAME}))
    with create_state_manager(config, "local", key=StateKey.of(NAME, keys)) as state:
        state.set_topology(NAME, plain)
        state.set_execution_state(
            NAME,
            execution_state_pb2.ExecutionState(
                topology_name=NAME, topology_id=plain.id, working_directory=str(root)
            ),
        )
    with create_state_manager(config, "local") as keyless:  # no key: the write is unsealed
        keyless.set_topology(NAME, _tampered(plain, marker))
        keyless.set_tmanager_location(
            NAME, tmanager_pb2.TManagerLocation(topology_name=NAME, host="127.0.0.1", stats_port=9)
        )
        client = TManagerClient(keyless, NAME, timeout=0.2)  # as the tracker asks
        try:
            assert client.ask(tmanager_pb2.MetricsRequest()) is None
        finally:
            client.close()
    verbs = {
        "activate": lambda: set_topology_state(
            "local", NAME, topology_pb2.RUNNING, heron_home=home
        ),
        "restart": lambda: restart("local", NAME, heron_home=home),
        "update": lambda: update("local", NAME, {"x": 2}, heron_home=home),
    }
    for verb, call in verbs.items():
        with pytest.raises(StateAuthenticationError) as refused:
            call()
        message = str(refused.value)
        assert "fails authentication: it carries no MAC" in message, verb
        assert f"topology {NAME!r}" in message and "topologies/" in message, verb
        assert f"heron kill local {NAME}" in message, verb
    assert [t.name for t in list_topologies("local", heron_home=home)] == [NAME]
    said: list[str] = []
    kill("local", NAME, heron_home=home, progress=said.append)
    assert any("fails authentication" in line for line in said), said
    assert list_topologies("local", heron_home=home) == []
    assert not root.exists()
    assert not marker.exists()
    with create_state_manager(config, "local") as keyless:
        assert keyless.get_topology(NAME) is None
    config_from_proto(_tampered(plain, marker).topology_config)  # CONTROL: the pickle is live
    assert marker.exists()


# --- a submitted topology, tampered in its state manager -----------------------------------------
def _plan(out: Path) -> Any:
    b = TopologyBuilder(NAME)
    spout = b.add_spout("paced", PacedSpout(str(out), pause=0.01), par=1)
    b.add_bolt("sink", AckingSink(str(out)), par=1, inputs={spout: Grouping.SHUFFLE})
    return b.build()


def _executor(topology_id: str, container: int) -> psutil.Process | None:
    for process in topology_processes(topology_id):
        try:
            argv = process.cmdline()
        except psutil.Error:
            continue
        if "heron_core.executor" in argv and argv[argv.index("--container") + 1] == str(container):
            return process
    return None


def _log(working_dir: Path, name: str) -> str:
    file = working_dir / "logs" / f"{name}.log"
    return file.read_text(errors="replace") if file.exists() else ""


def _kazoo(server: ZooKeeperServer, auth: str | None = None) -> KazooClient:
    client = KazooClient(server.connection_string, auth_data=[("digest", auth)] if auth else None)
    client.start(timeout=DEADLINE_S)
    return client


def _tamper(
    cluster: str,
    config: dict[str, Any],
    key: StateKey,
    marker: Path,
    resealed: bool,
    zookeeper: ZooKeeperServer | None,
) -> None:
    """Replace the topology node by one carrying a pickle that creates ``marker``: sealed with
    the topology's key when ``resealed`` (the CONTROL), else as an attacker can: on
    ZooKeeper an anonymous client deletes the node and creates it again with a MAC of a key
    of its own (its ACL refuses an overwrite in place: checked here, with the control that
    the topology's own identity may); on localfs the state file written without a MAC."""
    with create_state_manager(config, cluster) as keyless:
        stored = keyless.read_unverified(Kind.TOPOLOGY, NAME)
    assert isinstance(stored, topology_pb2.Topology)
    tampered = _tampered(stored, marker)
    if resealed:
        with create_state_manager(config, cluster, key=key) as holder:
            holder.set_topology(NAME, tampered)
        return
    if zookeeper is None:
        file = Path(config["heron.statemgr.root.path"]) / cluster / "topologies" / NAME
        file.write_bytes(b"heron-state 1 -\n" + tampered.SerializeToString())
        return
    node = f"{config['heron.statemgr.root.path']}/topologies/{NAME}"
    stranger = StateKey.of(NAME, TopologyKeys(*zmq.curve_keypair()))
    forged = stranger.seal.seal(f"topologies/{NAME}".encode(), tampered.SerializeToString())
    anonymous = _kazoo(zookeeper)
    holder_client = _kazoo(zookeeper, f"{key.digest_user}:{key.digest_password}")
    try:
        current, _ = anonymous.get(node)  # world READ: the tracker reads without the key
        with pytest.raises(NoAuthError):
            anonymous.set(node, forged)
        holder_client.set(node, current)  # CONTROL: the topology's identity may write
        anonymous.delete(node)  # allowed by the kind directory's open ACL: denial only
        anonymous.create(node, forged)
    finally:
        for client in (anonymous, holder_client):
            client.stop()
            client.close()


@pytest.mark.processes
@pytest.mark.parametrize(
    ("cluster", "resealed"),
    [
        pytest.param("localzk", False, marks=pytest.mark.zookeeper, id="localzk-attack"),
        pytest.param("localzk", True, marks=pytest.mark.zookeeper, id="localzk-control"),
        pytest.param("local", False, id="local-attack"),
        pytest.param("local", True, id="local-control"),
    ],
)
def test_a_tampered_topology_node_runs_nothing_after_a_restart_and_kill_works(
    cluster: str, resealed: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    zookeeper = request.getfixturevalue("zookeeper_server") if cluster == "localzk" else None
    zk = request.getfixturevalue("zk_config") if cluster == "localzk" else {}
    overrides = [f"{k}={v}" for k, v in zk.items() if "statemgr" in k]
    flags = [f"--config-property={p}" for p in overrides]
    marker = tmp_path / "marker"
    code = tmp_path / "code"
    code.mkdir()
    (code / "e2e_components.py").write_text((E2E / "e2e_components.py").read_text())
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:

        def heron(*args: str) -> Any:
            argv = [HERON, *args, "--heron-home", str(home), *flags]
            return run_command(argv, timeout=300)

        result = submit(
            cluster,
            LoadedTopology(_plan(tmp_path / "out"), code, NAME),
            overrides=[*overrides, "topology.stmgrs=1"],
            heron_home=home,
            timeout=DEADLINE_S,
        )
        killed = False
        try:
            config = client_config(cluster, heron_home=home, overrides=overrides)
            key = StateKey.load(NAME, result.working_dir)
            executor = _executor(result.topology_id, 1)
            assert executor is not None, "no executor of container 1"
            logged = len(_log(result.working_dir, "executor-1"))
            _tamper(cluster, config, key, marker, resealed, zookeeper)
            executor.kill()
            if resealed:
                wait_until(marker.exists, "the resealed pickle run by the restarted executor")
            else:
                refusal = re.compile(
                    rf"topology '{NAME}': its logical plan node \(topologies/\) at \S*"
                    rf"topologies/{NAME} fails authentication"
                )

                def refused() -> bool:
                    return bool(refusal.search(_log(result.working_dir, "executor-1")[logged:]))

                wait_until(refused, "the restarted executor's refusal", DEADLINE_S)
                assert not marker.exists(), "the tampered pickle ran"
                said = heron("restart", cluster, NAME)
                assert said.returncode != 0 and "fails authentication" in said.stderr, said
                listed = heron("list", cluster)
                assert listed.returncode == 0 and NAME in listed.stdout, listed
            done = heron("kill", cluster, NAME)
            killed = True
            assert done.returncode == 0, f"heron kill:\n{done.stdout}\n{done.stderr}"
            assert topology_processes(result.topology_id) == []
            assert resealed or not marker.exists(), "the tampered pickle ran at the kill"
        finally:
            if not killed:
                kill(cluster, NAME, heron_home=home, overrides=overrides)


# --- checkpoints ----------------------------------------------------------------------------------
_ROLLBACK = re.compile(r"rolling back to checkpoint (\S+) \(restore (\d+)\)")


@pytest.mark.processes
@pytest.mark.parametrize("resealed", [False, True], ids=["attack", "control"])
def test_a_tampered_checkpoint_is_not_restored(
    resealed: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Every stored state of the count task is replaced by a pickle that creates the marker,
    then the task's instance is killed: the rollback to the newest consistent checkpoint
    refuses it (attack) or restores it (control)."""
    marker = tmp_path / "marker"
    code = tmp_path / "code"
    code.mkdir()
    (code / "stateful_components.py").write_text((E2E / "stateful_components.py").read_text())
    b = TopologyBuilder(NAME)
    words = b.add_spout("words", OffsetSpout(10**9, ((1, 0.01),)), par=1)
    relay = b.add_bolt("relay", Relay(), par=1, inputs={words: Grouping.SHUFFLE})
    b.add_bolt("count", CountBolt(), par=1, inputs={relay: Grouping.fields("word")})
    config = {
        "topology.reliability.mode": "EFFECTIVELY_ONCE",
        "topology.stateful.checkpoint.interval.seconds": 2,
        "topology.stmgrs": 1,
    }
    failures = request.session.testsfailed
    with (
        isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home,
        TopologyRun(b.build(), heron_home=home, code_root=code, config=config) as run,
    ):
        store = create_state_store(run.deployment.config, run.name)
        seal = checkpoint_seal(run.name, run.working_dir)
        assert isinstance(store, LocalFileSystemStore)
        (task,) = [
            i.task_id
            for c in run.deployment.packing_plan.containers
            for i in c.instances
            if i.component_name == "count"
        ]

        def newest() -> str:
            stored = run.state.get_stateful_checkpoints(NAME)
            return stored.consistent_checkpoints[0].checkpoint_id if stored else ""

        run.wait_until(lambda: newest() != "", "a first consistent checkpoint", DEADLINE_S)
        for _ in range(3):  # a checkpoint made after the tampering is not one of them: again
            logged = len(run.logs().get("stmgr-1", ""))
            tampered = set()
            for file in (store.root / str(task)).iterdir():
                if file.name.startswith("."):
                    continue
                evil = evil_pickle(marker)
                if resealed:
                    evil = seal.seal(checkpoint_context(NAME, file.name, task), evil)
                file.write_bytes(evil)
                tampered.add(file.name)
            run.kill_instance("count")

            def rollback(start: int = logged) -> re.Match[str] | None:
                return _ROLLBACK.search(run.logs().get("stmgr-1", "")[start:])

            run.wait_until(rollback, "the rollback after the kill", DEADLINE_S)
            found = rollback()
            assert found is not None
            checkpoint, restore = found.group(1), found.group(2)
            if checkpoint in tampered:
                break
        else:
            pytest.fail(f"no rollback to a tampered checkpoint (tampered: {sorted(tampered)})")
        if resealed:
            run.wait_until(marker.exists, "the resealed state unpickled by the instance")
            return
        refusal = (
            f"task {task}'s state of checkpoint {checkpoint} "
            f"({store.root / str(task) / checkpoint}) fails authentication"
        )
        run.wait_until(
            lambda: refusal in run.logs().get("stmgr-1", "")[logged:],
            "the stream manager's refusal",
            DEADLINE_S,
        )
        assert not marker.exists(), "the tampered checkpoint was unpickled"
        assert f"rolled back (restore {restore})" not in run.logs().get("tmanager", "")
        assert newest() == checkpoint, "a checkpoint completed after a refused rollback"
        assert os.path.exists(store.root / str(task) / checkpoint)
