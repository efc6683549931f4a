"""Checks every state manager must pass: for the built-ins and third-party plug-ins.

Each ``check_*`` function takes a resolved config and a cluster name, builds its managers
with :func:`heron_core.statemgr.create_state_manager` (so ``heron.class.state.manager`` names
the plug-in), expects an empty store (a fresh root per check), and raises ``AssertionError``
naming the kind and node at fault. :data:`CHECKS` lists them all but
:func:`check_ephemeral_owner_vanishes`, which starts a process and waits as long as the store
keeps a vanished owner's node (ZooKeeper: the session timeout), so it deserves its own test
and a short timeout. A plug-in's test suite can read:

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as root:
...     check_set_get_delete({"heron.statemgr.root.path": root}, "local")
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf.message import Message

from heron_core.errors import StateManagerError
from heron_core.network import TopologyKeys
from heron_core.proto import (
    ckptmgr_pb2,
    execution_state_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    scheduler_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.statemgr import (
    Kind,
    StateAuthenticationError,
    StateKey,
    StateManager,
    create_state_manager,
)

__all__ = [
    "CHECKS",
    "DEADLINE_S",
    "check_closed_manager_raises",
    "check_ephemeral_owner_vanishes",
    "check_ephemeral_ownership",
    "check_invalid_arguments",
    "check_list_topologies",
    "check_sealed_nodes",
    "check_set_get_delete",
    "check_shared_store",
    "check_watch",
    "sample_message",
]

DEADLINE_S = 60.0
"""How long a check waits for a watch callback before it fails."""

Check = Callable[[Mapping[str, Any], str], None]


def sample_message(kind: Kind, name: str, version: int) -> Message:
    """A message of ``kind``'s type for topology ``name``; different versions differ.

    >>> sample_message(Kind.PACKING_PLAN, "wc", 2).id
    'wc-v2'
    """
    tag = f"{name}-v{version}"
    samples: dict[Kind, Message] = {
        Kind.TOPOLOGY: topology_pb2.Topology(id=tag, name=name),
        Kind.PACKING_PLAN: packing_plan_pb2.PackingPlan(id=tag),
        Kind.PHYSICAL_PLAN: physical_plan_pb2.PhysicalPlan(
            topology=topology_pb2.Topology(id=tag, name=name)
        ),
        Kind.EXECUTION_STATE: execution_state_pb2.ExecutionState(
            topology_name=name, topology_id=tag
        ),
        Kind.TMANAGER_LOCATION: tmanager_pb2.TManagerLocation(
            topology_name=name, topology_id=tag, host="127.0.0.1", server_port=version
        ),
        Kind.SCHEDULER_LOCATION: scheduler_pb2.SchedulerLocation(
            topology_name=name, http_endpoint=f"http://127.0.0.1:{version}"
        ),
        Kind.STATEFUL_CHECKPOINTS: ckptmgr_pb2.StatefulConsistentCheckpoints(
            consistent_checkpoints=[ckptmgr_pb2.StatefulConsistentCheckpoint(checkpoint_id=tag)]
        ),
    }
    return samples[kind]


def _accessors(
    sm: StateManager, kind: Kind
) -> tuple[Callable[[str, Any], None], Callable[[str], Any], Callable[[str], None]]:
    """The typed ``set_*``, ``get_*`` and ``delete_*`` methods of ``kind``."""
    table: dict[Kind, tuple[Callable[..., None], Callable[[str], Any], Callable[[str], None]]] = {
        Kind.TOPOLOGY: (sm.set_topology, sm.get_topology, sm.delete_topology),
        Kind.PACKING_PLAN: (sm.set_packing_plan, sm.get_packing_plan, sm.delete_packing_plan),
        Kind.PHYSICAL_PLAN: (
            sm.set_physical_plan,
            sm.get_physical_plan,
            sm.delete_physical_plan,
        ),
        Kind.EXECUTION_STATE: (
            sm.set_execution_state,
            sm.get_execution_state,
            sm.delete_execution_state,
        ),
        Kind.TMANAGER_LOCATION: (
            sm.set_tmanager_location,
            sm.get_tmanager_location,
            sm.delete_tmanager_location,
        ),
        Kind.SCHEDULER_LOCATION: (
            sm.set_scheduler_location,
            sm.get_scheduler_location,
            sm.delete_scheduler_location,
        ),
        Kind.STATEFUL_CHECKPOINTS: (
            sm.set_stateful_checkpoints,
            sm.get_stateful_checkpoints,
            sm.delete_stateful_checkpoints,
        ),
    }
    return table[kind]


def _next_event(events: queue.Queue[Any], what: str) -> Any:
    try:
        return events.get(timeout=DEADLINE_S)
    except queue.Empty:
        raise AssertionError(f"no watch callback for {what} within {DEADLINE_S:g} s") from None


def _raises(what: str, action: Callable[..., object], *args: Any) -> None:
    try:
        action(*args)
    except StateManagerError:
        return
    raise AssertionError(f"{what}: expected StateManagerError, nothing was raised")


def check_set_get_delete(config: Mapping[str, Any], cluster: str) -> None:
    """For every kind: get of an absent node is None; set creates, set again overwrites,
    other names are unaffected; delete removes; deleting an absent node is a no-op."""
    with create_state_manager(config, cluster) as sm:
        for kind in Kind:
            put, get, delete = _accessors(sm, kind)
            node = f"{kind.value}/wc"
            assert get("wc") is None, f"{node}: expected absent before any set"
            put("wc", sample_message(kind, "wc", 1))
            assert get("wc") == sample_message(kind, "wc", 1), f"{node}: set then get differ"
            put("wc", sample_message(kind, "wc", 2))
            assert get("wc") == sample_message(kind, "wc", 2), f"{node}: overwrite not seen"
            assert get("wc2") is None, f"{kind.value}/wc2 appeared after setting {node}"
            delete("wc")
            assert get("wc") is None, f"{node}: still present after delete"
            delete("wc")


def check_shared_store(config: Mapping[str, Any], cluster: str) -> None:
    """Two managers on the same config see each other's nodes; persistent nodes outlive the
    manager that wrote them."""
    persistent = [kind for kind in Kind if not kind.ephemeral]
    with create_state_manager(config, cluster) as writer:
        for kind in persistent:
            _accessors(writer, kind)[0]("wc", sample_message(kind, "wc", 1))
    with (
        create_state_manager(config, cluster) as reader,
        create_state_manager(config, cluster) as other,
    ):
        for kind in persistent:
            _, get, delete = _accessors(reader, kind)
            assert get("wc") == sample_message(kind, "wc", 1), (
                f"{kind.value}/wc: not seen by a second manager after its writer closed"
            )
            delete("wc")
            assert _accessors(other, kind)[1]("wc") is None, (
                f"{kind.value}/wc: deleted by one manager, still seen by another"
            )


def check_list_topologies(config: Mapping[str, Any], cluster: str) -> None:
    """``list_topologies`` lists the names with a ``topologies/`` node, sorted, and only those."""
    with create_state_manager(config, cluster) as sm:
        assert sm.list_topologies() == [], "an empty store lists topologies"
        for name in ("b", "a", "c.1"):
            sm.set_topology(name, topology_pb2.Topology(name=name))
        sm.set_packing_plan("z", packing_plan_pb2.PackingPlan(id="z"))
        sm.set_tmanager_location("y", tmanager_pb2.TManagerLocation(topology_name="y"))
        listed = sm.list_topologies()
        assert listed == ["a", "b", "c.1"], f"expected ['a', 'b', 'c.1'], listed {listed}"
        sm.delete_topology("a")
        listed = sm.list_topologies()
        assert listed == ["b", "c.1"], f"after deleting 'a': listed {listed}"


def check_watch(config: Mapping[str, Any], cluster: str) -> None:
    """For every kind, a watch is called with the current value before ``watch`` returns, then
    on create, update (even to the same value) and delete; after ``cancel`` it is not called
    again."""
    with create_state_manager(config, cluster) as sm:
        for kind in Kind:
            put, _, delete = _accessors(sm, kind)
            node = f"{kind.value}/wc"
            events: queue.Queue[Any] = queue.Queue()
            handle = sm.watch(kind, "wc", events.put)
            assert events.get_nowait() is None, f"{node}: first callback is not None"
            for version in (1, 2, 2):  # a rewrite with the same value is a change too
                put("wc", sample_message(kind, "wc", version))
                got = _next_event(events, f"{node} set to version {version}")
                assert got == sample_message(kind, "wc", version), f"{node}: watch got {got}"
            delete("wc")
            got = _next_event(events, f"{node} deleted")
            assert got is None, f"{node}: after delete the watch got {got}"
            handle.cancel()
            witness: queue.Queue[Any] = queue.Queue()
            witness_handle = sm.watch(kind.value, "wc", witness.put)
            witness.get_nowait()
            put("wc", sample_message(kind, "wc", 3))
            _next_event(witness, f"{node} set after a cancel")
            witness_handle.cancel()
            assert events.empty(), f"{node}: a cancelled watch was called"
            delete("wc")


def check_ephemeral_ownership(config: Mapping[str, Any], cluster: str) -> None:
    """An ephemeral node set by one manager cannot be set by another while the first lives;
    the owner may overwrite it; any manager may delete it; closing the owner removes it."""
    for kind in (k for k in Kind if k.ephemeral):
        node = f"{kind.value}/wc"
        with create_state_manager(config, cluster) as second:
            put2, get2, delete2 = _accessors(second, kind)
            with create_state_manager(config, cluster) as first:
                put1, _, _ = _accessors(first, kind)
                put1("wc", sample_message(kind, "wc", 1))
                _raises(f"{node}: set by a second owner", put2, "wc", sample_message(kind, "wc", 2))
                assert get2("wc") == sample_message(kind, "wc", 1), (
                    f"{node}: refused set changed it"
                )
                put1("wc", sample_message(kind, "wc", 3))
                assert get2("wc") == sample_message(kind, "wc", 3), (
                    f"{node}: owner's overwrite lost"
                )
            assert get2("wc") is None, f"{node}: still present after its owner closed"
            put2("wc", sample_message(kind, "wc", 4))
            assert get2("wc") == sample_message(kind, "wc", 4), f"{node}: not taken over"
            with create_state_manager(config, cluster) as third:
                _accessors(third, kind)[2]("wc")
            assert get2("wc") is None, f"{node}: deleting another owner's node had no effect"
            delete2("wc")


def _check_unusable(sm: StateManager, when: str) -> None:
    for kind in Kind:
        put, get, delete = _accessors(sm, kind)
        node = f"{kind.value}/wc"
        _raises(f"set of {node} {when}", put, "wc", sample_message(kind, "wc", 1))
        _raises(f"get of {node} {when}", get, "wc")
        _raises(f"delete of {node} {when}", delete, "wc")
        _raises(f"watch of {node} {when}", sm.watch, kind, "wc", print)
    _raises(f"list_topologies() {when}", sm.list_topologies)


def check_closed_manager_raises(config: Mapping[str, Any], cluster: str) -> None:
    """Every method raises StateManagerError before ``start`` and after ``close``, ``start``
    too after ``close``; ``close`` is idempotent and cancels the manager's watches."""
    _check_unusable(create_state_manager(config, cluster), "before start()")
    sm = create_state_manager(config, cluster)
    sm.start()
    events: queue.Queue[Any] = queue.Queue()
    handle = sm.watch(Kind.TOPOLOGY, "wc", events.put)
    events.get_nowait()
    sm.close()
    sm.close()
    assert handle.cancelled, "close() did not cancel a watch"
    _raises("start() after close()", sm.start)
    _check_unusable(sm, "after close()")
    with create_state_manager(config, cluster) as writer:
        witness: queue.Queue[Any] = queue.Queue()
        writer.watch(Kind.TOPOLOGY, "wc", witness.put)
        witness.get_nowait()
        writer.set_topology("wc", topology_pb2.Topology(name="wc"))
        _next_event(witness, "topologies/wc set after another manager closed")
    assert events.empty(), "a watch was called after its manager closed"


def check_invalid_arguments(config: Mapping[str, Any], cluster: str) -> None:
    """Bad topology names, unknown kinds and messages of the wrong type raise
    StateManagerError and change nothing."""
    with create_state_manager(config, cluster) as sm:
        for name in ("", "a/b", "..", ".hidden", "a b", "x\n"):
            _raises(f"set_topology({name!r})", sm.set_topology, name, topology_pb2.Topology())
            _raises(f"get_topology({name!r})", sm.get_topology, name)
        _raises("watch of kind 'nodes'", sm.watch, "nodes", "wc", print)
        wrong = packing_plan_pb2.PackingPlan(id="wc")
        _raises("set_topology with a PackingPlan", sm.set_topology, "wc", wrong)
        assert sm.list_topologies() == [], "a refused set created a node"


def _refused(what: str, action: Callable[..., object], *args: Any) -> str:
    """The message of the `StateAuthenticationError` ``action(*args)`` raises."""
    try:
        action(*args)
    except StateAuthenticationError as exc:
        return str(exc)
    raise AssertionError(f"{what}: expected StateAuthenticationError, nothing was raised")


def check_sealed_nodes(config: Mapping[str, Any], cluster: str) -> None:
    """For every kind: a manager holding topology "wc"'s `StateKey` writes sealed nodes that
    another holder reads back and a manager without the key reads unchecked; a node written
    without the key, or sealed with another topology's key, is refused by a holder (an error
    naming the topology, the kind's directory and the node's location) and still read by
    `read_unverified`; a holder's watch does not deliver a refused value, and delivers the
    next sealed one."""
    key = StateKey.of("wc", TopologyKeys(*_keypair()))
    foreign = StateKey.of("wc", TopologyKeys(*_keypair()))
    with (
        create_state_manager(config, cluster, key=key) as holder,
        create_state_manager(config, cluster) as reader,
        create_state_manager(config, cluster) as keyless,
        create_state_manager(config, cluster, key=foreign) as stranger,
    ):
        other = create_state_manager(config, cluster)
        other.add_key(key)  # a key added after start() acts as one given at construction
        with other:
            for kind in Kind:
                node = f"{kind.value}/wc"
                put, get, delete = _accessors(holder, kind)
                put("wc", sample_message(kind, "wc", 1))
                for manager, who in ((other, "another holder"), (reader, "a keyless reader")):
                    got = _accessors(manager, kind)[1]("wc")
                    assert got == sample_message(kind, "wc", 1), f"{node}: {who} read {got}"
                events: queue.Queue[Any] = queue.Queue()
                handle = other.watch(kind, "wc", events.put)
                assert events.get_nowait() == sample_message(kind, "wc", 1), node
                for version, (writer, why) in enumerate(
                    ((keyless, "no MAC"), (stranger, "does not match")), start=2
                ):
                    delete("wc")  # a stranger may delete a node (the parent's ACL), not change it
                    _accessors(writer, kind)[0]("wc", sample_message(kind, "wc", version))
                    message = _refused(f"{node} written by a manager with {why}", get, "wc")
                    for part in ("'wc'", f"{kind.value}/", why):
                        assert part in message, f"{node}: the refusal does not name {part!r}"
                    unchecked = holder.read_unverified(kind, "wc")
                    assert unchecked == sample_message(kind, "wc", version), node
                    _accessors(writer, kind)[2]("wc")
                    put("wc", sample_message(kind, "wc", 10 + version))
                    _watch_reaches(events, sample_message(kind, "wc", 10 + version), node)
                handle.cancel()
                delete("wc")


def _watch_reaches(events: queue.Queue[Any], wanted: Message, node: str) -> None:
    """Read ``events`` until ``wanted``; absent (None) may come first, nothing else may."""
    while (got := _next_event(events, f"{node} sealed again")) != wanted:
        assert got is None, f"{node}: the watch delivered {got}, which fails authentication"


def _keypair() -> tuple[bytes, bytes]:
    import zmq

    return zmq.curve_keypair()


def check_ephemeral_owner_vanishes(config: Mapping[str, Any], cluster: str) -> None:
    """The tmanager location set by another process reads as absent once that process is
    killed (after the store notices: ZooKeeper waits out the session timeout), a watch sees
    it go, and another manager can then take it over. ``config`` must be JSON-serializable."""
    owner_script = (
        "import json, sys\n"
        "from heron_core.proto import tmanager_pb2\n"
        "from heron_core.statemgr import create_state_manager\n"
        "sm = create_state_manager(json.loads(sys.argv[1]), sys.argv[2])\n"
        "sm.start()\n"
        "sm.set_tmanager_location('wc', tmanager_pb2.TManagerLocation.FromString("
        "bytes.fromhex(sys.argv[3])))\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    theirs = tmanager_pb2.TManagerLocation(topology_name="wc", host="127.0.0.1", server_port=1)
    mine = tmanager_pb2.TManagerLocation(topology_name="wc", host="127.0.0.1", server_port=2)
    with create_state_manager(config, cluster) as sm:
        events: queue.Queue[Any] = queue.Queue()
        sm.watch(Kind.TMANAGER_LOCATION, "wc", events.put)
        assert events.get_nowait() is None
        arguments = [json.dumps(dict(config)), cluster, theirs.SerializeToString().hex()]
        owner = subprocess.Popen(
            [sys.executable, "-c", owner_script, *arguments],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert owner.stdout is not None
            line = owner.stdout.readline()
            assert line == "ready\n", f"the owner process failed to set tmanagers/wc: {line!r}"
            got = _next_event(events, "tmanagers/wc set by another process")
            assert got == theirs, f"tmanagers/wc: the watch got {got}"
            _raises("tmanagers/wc set while its owner lives", sm.set_tmanager_location, "wc", mine)
        finally:
            owner.kill()
            owner.wait()
            for stream in (owner.stdin, owner.stdout):
                if stream is not None:
                    stream.close()
        got = _next_event(events, "tmanagers/wc after its owner process was killed")
        assert got is None, f"tmanagers/wc: after its owner died the watch got {got}"
        assert sm.get_tmanager_location("wc") is None, "tmanagers/wc: present, owner dead"
        sm.set_tmanager_location("wc", mine)
        assert sm.get_tmanager_location("wc") == mine, "tmanagers/wc: not taken over"


CHECKS: tuple[Check, ...] = (
    check_set_get_delete,
    check_sealed_nodes,
    check_shared_store,
    check_list_topologies,
    check_watch,
    check_ephemeral_ownership,
    check_closed_manager_raises,
    check_invalid_arguments,
)
"""Every check but :func:`check_ephemeral_owner_vanishes`, in a stable order."""
