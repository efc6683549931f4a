"""The state manager interface: where a topology's plans and locations live.

One node per (kind, topology name), at ``<root>/<kind>/<name>``, each holding one serialized
protobuf message (reference: heron-internals.md section 6). :class:`StateManager` implements
every public method once, on top of a few primitives a backend provides (``_put``, ``_get``,
``_delete``, ``_children``, ``_watch``, plus ``_start``, ``_close`` and ``_location``).
"""

from __future__ import annotations

import logging
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, Self, TypeVar

from google.protobuf.message import DecodeError, Message

from heron_core.errors import StateManagerError
from heron_core.proto import (
    ckptmgr_pb2,
    execution_state_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    scheduler_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.statemgr._seal import SealBroken, StateKey, unverified_payload

__all__ = ["Kind", "StateAuthenticationError", "StateManager", "WatchCallback", "WatchHandle"]

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)

WatchCallback = Callable[[Any], None]
"""Receives the node's message (of the watched kind's type), or None when the node is absent."""

_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


class StateAuthenticationError(StateManagerError):
    """A topology's node fails its authentication: it carries no MAC, or a MAC that does not
    match under the topology's key; nothing of it was used. The message names the topology,
    the node's kind and where it lives."""


class Kind(StrEnum):
    """A kind of node; its value is the directory holding one node per topology."""

    TOPOLOGY = "topologies"
    PACKING_PLAN = "packingplans"
    PHYSICAL_PLAN = "pplans"
    EXECUTION_STATE = "executionstate"
    TMANAGER_LOCATION = "tmanagers"
    SCHEDULER_LOCATION = "schedulers"
    STATEFUL_CHECKPOINTS = "statefulcheckpoints"

    @property
    def message_type(self) -> type[Message]:
        """The protobuf message class a node of this kind holds."""
        return _MESSAGE_TYPES[self]

    @property
    def ephemeral(self) -> bool:
        """True when a node of this kind lives only as long as the session that set it."""
        return self in (Kind.TMANAGER_LOCATION, Kind.SCHEDULER_LOCATION)

    @property
    def what(self) -> str:
        """What a node of this kind holds, for messages (``"logical plan"``)."""
        return _WHAT[self]


_MESSAGE_TYPES: dict[Kind, type[Message]] = {
    Kind.TOPOLOGY: topology_pb2.Topology,
    Kind.PACKING_PLAN: packing_plan_pb2.PackingPlan,
    Kind.PHYSICAL_PLAN: physical_plan_pb2.PhysicalPlan,
    Kind.EXECUTION_STATE: execution_state_pb2.ExecutionState,
    Kind.TMANAGER_LOCATION: tmanager_pb2.TManagerLocation,
    Kind.SCHEDULER_LOCATION: scheduler_pb2.SchedulerLocation,
    Kind.STATEFUL_CHECKPOINTS: ckptmgr_pb2.StatefulConsistentCheckpoints,
}


_WHAT: dict[Kind, str] = {
    Kind.TOPOLOGY: "logical plan",
    Kind.PACKING_PLAN: "packing plan",
    Kind.PHYSICAL_PLAN: "physical plan",
    Kind.EXECUTION_STATE: "execution state",
    Kind.TMANAGER_LOCATION: "tmanager location",
    Kind.SCHEDULER_LOCATION: "scheduler location",
    Kind.STATEFUL_CHECKPOINTS: "consistent checkpoints",
}


class WatchHandle:
    """Returned by :meth:`StateManager.watch`; :meth:`cancel` stops the callbacks."""

    def __init__(self, stop: Callable[[], None], forget: Callable[[WatchHandle], None]) -> None:
        self._cancelled = threading.Event()
        self._stop = stop
        self._forget = forget

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called (directly or by closing the manager)."""
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the watch. Idempotent; may be called from inside the callback.

        After it returns, the callback is not called again, except for a call already running
        on the watch's thread.
        """
        if self._cancelled.is_set():
            return
        self._cancelled.set()
        self._stop()
        self._forget(self)


class StateManager(ABC):
    """Stores a topology's logical plan, packing plan, physical plan, execution state and the
    locations of its tmanager and scheduler.

    Constructed as ``cls(config, cluster)`` with the resolved config; does no I/O until
    :meth:`start`. Usable as a context manager (``with`` starts and closes it). Every method is
    thread-safe. Every method but :meth:`start` and :meth:`close` raises
    :class:`StateManagerError` before :meth:`start` and after :meth:`close`.

    ``set_*`` creates or overwrites a node, ``get_*`` returns its message or None when absent,
    ``delete_*`` removes it (deleting an absent node is a no-op). The tmanager and scheduler
    locations are *ephemeral*: they belong to the manager that set them and disappear when it
    closes or its process dies; setting one that another live manager owns raises
    :class:`StateManagerError` (a second tmanager must not steal the first one's place), while
    any manager may delete one (that is how ``kill`` and ``restart`` clear them). A store whose
    sessions can end while the process lives (a ZooKeeper session expiry) loses them then; the
    manager creates them again in its new session unless another live manager took the node
    meanwhile, so a daemon keeps its place without rebuilding its manager. A call that cannot
    reach the store raises :class:`StateManagerError`; the next call may succeed again.

    **Authentication.** A manager given a topology's `StateKey` (:meth:`add_key`, or
    ``create_state_manager(..., key=...)``) seals every node of that topology it writes (an
    HMAC-SHA256 keyed from the topology's secret, stored in the node with the message, see
    ``heron_core.statemgr._seal``) and reads that topology's nodes only when their MAC checks:
    a node without a MAC, or with one that does not match, raises
    :class:`StateAuthenticationError` naming the topology, the node's kind and where it lives,
    and nothing of it is returned. Every daemon and CLI verb that unpickles anything of a
    topology (config values, component specs, custom groupings) reads through a manager
    holding its key. A manager without a topology's key writes its nodes unsealed and reads
    them unchecked: that is for describing a topology (the tracker, ``heron list``) and
    deleting it (``heron kill``), never for unpickling what it read. :meth:`read_unverified`
    reads a node unchecked even with the key.

    Subclasses implement the primitives below; the shared contract is checked by
    ``heron_core.testing.statemgr_conformance``.

    Attributes:
        config: the resolved config the manager was built with.
        cluster: the cluster's name.
        call_timeout_s: the longest a single call waits for the store (also the longest
            :meth:`watch` waits for its first callback).
    """

    call_timeout_s: float = 30.0

    def __init__(self, config: Mapping[str, Any], cluster: str) -> None:
        self.config = config
        self.cluster = cluster
        self._lock = threading.Lock()
        self._state = "new"
        self._watches: set[WatchHandle] = set()
        self._keys: dict[str, StateKey] = {}

    # ----------------------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Connect to the store. A no-op when already started.

        Raises:
            StateManagerError: the store cannot be reached, or the manager was closed.
        """
        with self._lock:
            if self._state == "closed":
                raise StateManagerError(f"{self._describe()} cannot start again after close()")
            if self._state == "new":
                self._start()
                self._state = "started"

    def close(self) -> None:
        """Cancel every watch, drop this manager's ephemeral nodes and disconnect. Idempotent."""
        with self._lock:
            was_started = self._state == "started"
            self._state = "closed"
            watches = list(self._watches)
        for handle in watches:
            handle.cancel()
        if was_started:
            self._close()

    def add_key(self, key: StateKey) -> None:
        """Hold topology ``key.topology``'s `StateKey` from now on: its nodes are written
        sealed and read only when their MAC checks (see the class's docstring). Callable
        before or after :meth:`start`; a second key for the same topology replaces the first.

        Raises:
            StateManagerError: the store refused what the key needs (a ZooKeeper login).
        """
        with self._lock:
            self._keys[key.topology] = key
            started = self._state == "started"
        if started:
            self._key_added(key)

    def key_of(self, name: str) -> StateKey | None:
        """The `StateKey` of topology ``name`` this manager holds, or None."""
        return self._keys.get(name)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------- topologies

    def set_topology(self, name: str, topology: topology_pb2.Topology) -> None:
        """Create or overwrite ``topologies/<name>``: its existence means the topology exists."""
        self._set(Kind.TOPOLOGY, name, topology)

    def get_topology(self, name: str) -> topology_pb2.Topology | None:
        """The logical plan of topology ``name``, or None."""
        return self._read(Kind.TOPOLOGY, name, topology_pb2.Topology)

    def delete_topology(self, name: str) -> None:
        """Delete ``topologies/<name>``."""
        self._remove(Kind.TOPOLOGY, name)

    def list_topologies(self) -> list[str]:
        """The names of the topologies that have a ``topologies/`` node, sorted."""
        self._require_started()
        return sorted(self._children(Kind.TOPOLOGY.value))

    # ----------------------------------------------------------------------------- packing plans

    def set_packing_plan(self, name: str, plan: packing_plan_pb2.PackingPlan) -> None:
        """Create or overwrite ``packingplans/<name>``."""
        self._set(Kind.PACKING_PLAN, name, plan)

    def get_packing_plan(self, name: str) -> packing_plan_pb2.PackingPlan | None:
        """The packing plan of topology ``name``, or None."""
        return self._read(Kind.PACKING_PLAN, name, packing_plan_pb2.PackingPlan)

    def delete_packing_plan(self, name: str) -> None:
        """Delete ``packingplans/<name>``."""
        self._remove(Kind.PACKING_PLAN, name)

    # ----------------------------------------------------------------------------- physical plans

    def set_physical_plan(self, name: str, plan: physical_plan_pb2.PhysicalPlan) -> None:
        """Create or overwrite ``pplans/<name>``."""
        self._set(Kind.PHYSICAL_PLAN, name, plan)

    def get_physical_plan(self, name: str) -> physical_plan_pb2.PhysicalPlan | None:
        """The physical plan of topology ``name``, or None."""
        return self._read(Kind.PHYSICAL_PLAN, name, physical_plan_pb2.PhysicalPlan)

    def delete_physical_plan(self, name: str) -> None:
        """Delete ``pplans/<name>``."""
        self._remove(Kind.PHYSICAL_PLAN, name)

    # ----------------------------------------------------------------------------- execution state

    def set_execution_state(self, name: str, state: execution_state_pb2.ExecutionState) -> None:
        """Create or overwrite ``executionstate/<name>``."""
        self._set(Kind.EXECUTION_STATE, name, state)

    def get_execution_state(self, name: str) -> execution_state_pb2.ExecutionState | None:
        """The execution state of topology ``name``, or None."""
        return self._read(Kind.EXECUTION_STATE, name, execution_state_pb2.ExecutionState)

    def delete_execution_state(self, name: str) -> None:
        """Delete ``executionstate/<name>``."""
        self._remove(Kind.EXECUTION_STATE, name)

    # ----------------------------------------------------------------------------- tmanager

    def set_tmanager_location(self, name: str, location: tmanager_pb2.TManagerLocation) -> None:
        """Create or overwrite the ephemeral ``tmanagers/<name>``, owned by this manager.

        Raises:
            StateManagerError: another live manager (session or process) owns the node.
        """
        self._set(Kind.TMANAGER_LOCATION, name, location)

    def get_tmanager_location(self, name: str) -> tmanager_pb2.TManagerLocation | None:
        """Where the tmanager of topology ``name`` listens, or None when none is alive."""
        return self._read(Kind.TMANAGER_LOCATION, name, tmanager_pb2.TManagerLocation)

    def delete_tmanager_location(self, name: str) -> None:
        """Delete ``tmanagers/<name>``, whoever owns it."""
        self._remove(Kind.TMANAGER_LOCATION, name)

    # ----------------------------------------------------------------------------- scheduler

    def set_scheduler_location(self, name: str, location: scheduler_pb2.SchedulerLocation) -> None:
        """Create or overwrite the ephemeral ``schedulers/<name>``, owned by this manager.

        Raises:
            StateManagerError: another live manager (session or process) owns the node.
        """
        self._set(Kind.SCHEDULER_LOCATION, name, location)

    def get_scheduler_location(self, name: str) -> scheduler_pb2.SchedulerLocation | None:
        """Where the scheduler of topology ``name`` is, or None when none is alive."""
        return self._read(Kind.SCHEDULER_LOCATION, name, scheduler_pb2.SchedulerLocation)

    def delete_scheduler_location(self, name: str) -> None:
        """Delete ``schedulers/<name>``, whoever owns it."""
        self._remove(Kind.SCHEDULER_LOCATION, name)

    # ----------------------------------------------------------------------------- checkpoints

    def set_stateful_checkpoints(
        self, name: str, checkpoints: ckptmgr_pb2.StatefulConsistentCheckpoints
    ) -> None:
        """Create or overwrite ``statefulcheckpoints/<name>`` (EFFECTIVELY_ONCE topologies):
        the globally consistent checkpoints, newest first."""
        self._set(Kind.STATEFUL_CHECKPOINTS, name, checkpoints)

    def get_stateful_checkpoints(
        self, name: str
    ) -> ckptmgr_pb2.StatefulConsistentCheckpoints | None:
        """The consistent checkpoints of topology ``name``, or None before the first."""
        return self._read(
            Kind.STATEFUL_CHECKPOINTS, name, ckptmgr_pb2.StatefulConsistentCheckpoints
        )

    def delete_stateful_checkpoints(self, name: str) -> None:
        """Delete ``statefulcheckpoints/<name>``."""
        self._remove(Kind.STATEFUL_CHECKPOINTS, name)

    # ----------------------------------------------------------------------------- by kind

    def read(self, kind: Kind | str, name: str) -> Message | None:
        """The message of node ``kind``/``name``, as the ``get_*`` method of ``kind`` reads it
        (checked when this manager holds the topology's key), or None when absent.

        Raises:
            StateManagerError: an unknown kind, an invalid name, a node that does not hold a
                valid message, or the store is unreachable.
            StateAuthenticationError: the node fails its authentication.
        """
        node_kind = _as_kind(kind)
        return self._read(node_kind, name, node_kind.message_type)

    def read_unverified(self, kind: Kind | str, name: str) -> Message | None:
        """The message of node ``kind``/``name`` without checking its MAC, even when this
        manager holds the topology's key (None when absent): for describing or deleting a
        topology whose nodes may be tampered with (``heron kill``). Never unpickle anything
        of it.

        Raises:
            StateManagerError: an unknown kind, an invalid name, a node that does not hold a
                valid message, or the store is unreachable.
        """
        self._require_started()
        node_kind = _as_kind(kind)
        path = self._path(node_kind, name)
        data = self._get(path)
        if data is None:
            return None
        return self._parse(path, unverified_payload(data), node_kind.message_type)

    # ----------------------------------------------------------------------------- watches

    def watch(self, kind: Kind | str, name: str, callback: WatchCallback) -> WatchHandle:
        """Call ``callback`` with the node's message now and whenever it changes.

        ``callback`` receives a message of ``kind``'s type, or None when the node is absent
        (deleted, or its ephemeral owner gone). It runs on a background thread, one call at a
        time per watch, and must not block for long. The first call has returned when
        ``watch`` returns. Later calls follow every change, but a burst of changes may be
        delivered as its last value only. An exception from ``callback`` is logged and the
        watch goes on. A later value that fails its authentication (a manager holding the
        topology's key) is logged as an ERROR naming the node and not delivered. Closing the
        manager cancels its watches.

        Args:
            kind: a :class:`Kind` or its directory name (``"pplans"``).
            name: the topology name.
            callback: see above.

        Raises:
            StateManagerError: an unknown kind, an invalid name, a node that does not hold a
                valid message, or no first value within :attr:`call_timeout_s`.
            StateAuthenticationError: the node fails its authentication now.
        """
        self._require_started()
        node_kind = _as_kind(kind)
        path = self._path(node_kind, name)
        # a corrupt or tampered node fails here, not later
        self._decode(node_kind, name, path, self._get(path))
        first = threading.Event()

        def deliver(data: bytes | None) -> None:
            try:
                message = self._decode(node_kind, name, path, data)
            except StateManagerError as exc:
                logger.error("watch on %s: not delivered: %s", self._location(path), exc)
                first.set()
                return
            try:
                callback(message)
            except Exception:
                logger.exception("watch on %s: callback %r failed", self._location(path), callback)
            finally:
                first.set()

        handle = WatchHandle(self._watch(path, deliver), self._watches.discard)
        with self._lock:
            registered = self._state == "started"
            if registered:
                self._watches.add(handle)
        if not registered:  # closed meanwhile
            handle.cancel()
            self._require_started()
        if not first.wait(self.call_timeout_s):
            handle.cancel()
            raise StateManagerError(
                f"watch on {self._location(path)}: no first value within {self.call_timeout_s:g} s"
            )
        return handle

    # ----------------------------------------------------------------------------- primitives

    @abstractmethod
    def _start(self) -> None:
        """Connect; raise :class:`StateManagerError` naming the store when it is unreachable."""

    @abstractmethod
    def _close(self) -> None:
        """Drop this manager's ephemeral nodes and disconnect; never raises."""

    @abstractmethod
    def _put(self, path: str, data: bytes, ephemeral: bool) -> None:
        """Create or overwrite the node at ``path`` (``<kind>/<name>``), creating parents.

        An ephemeral node belongs to this manager; if another live manager owns it, raise
        :class:`StateManagerError` and leave it unchanged.
        """

    @abstractmethod
    def _get(self, path: str) -> bytes | None:
        """The node's bytes, or None when absent (or ephemeral with its owner gone)."""

    @abstractmethod
    def _delete(self, path: str) -> None:
        """Delete the node whoever owns it; a no-op when it is absent."""

    @abstractmethod
    def _children(self, directory: str) -> list[str]:
        """The names of the persistent nodes in ``directory`` (``[]`` when it is absent)."""

    @abstractmethod
    def _watch(self, path: str, callback: Callable[[bytes | None], None]) -> Callable[[], None]:
        """Start calling ``callback`` on a background thread with the node's bytes (None when
        absent): once soon with the current value, then after every change.

        Return a function that stops the watch (idempotent, callable from inside
        ``callback``); after it returns, no new call of ``callback`` begins.
        """

    @abstractmethod
    def _location(self, path: str) -> str:
        """Where the node at ``path`` lives, for messages (a file path, a ZooKeeper URL)."""

    def _key_added(self, key: StateKey) -> None:  # noqa: B027 (optional)
        """Called by :meth:`add_key` on a started manager (and a backend's :meth:`_start`
        reads :attr:`_keys` itself): a backend with access control admits the key's holder
        here. The default does nothing."""

    # ----------------------------------------------------------------------------- helpers

    def _describe(self) -> str:
        return f"{type(self).__name__} of cluster {self.cluster!r}"

    def _require_started(self) -> None:
        if self._state != "started":
            done = "closed" if self._state == "closed" else "not started; call start() first"
            raise StateManagerError(f"{self._describe()} is {done}")

    def _path(self, kind: Kind, name: str) -> str:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise StateManagerError(
                f"invalid topology name {name!r} for a {kind.value}/ node: expected letters, "
                "digits, '_', '-' and '.', not starting with '.'"
            )
        return f"{kind.value}/{name}"

    def _set(self, kind: Kind, name: str, message: Message) -> None:
        self._require_started()
        path = self._path(kind, name)
        if not isinstance(message, kind.message_type):
            raise StateManagerError(
                f"{self._location(path)} holds a {kind.message_type.__name__}, "
                f"got a {type(message).__name__}"
            )
        data = message.SerializeToString()
        key = self._keys.get(name)
        if key is not None:
            data = key.seal.seal(path.encode(), data)
        self._put(path, data, kind.ephemeral)

    def _read(self, kind: Kind, name: str, message_type: type[M]) -> M | None:
        self._require_started()
        path = self._path(kind, name)
        message = self._decode(kind, name, path, self._get(path))
        assert message is None or isinstance(message, message_type)
        return message

    def _remove(self, kind: Kind, name: str) -> None:
        self._require_started()
        self._delete(self._path(kind, name))

    def _decode(self, kind: Kind, name: str, path: str, data: bytes | None) -> Message | None:
        """The message of node ``path`` (``kind``/``name``) from its bytes ``data``: opened
        with topology ``name``'s key when this manager holds it, else unchecked."""
        if data is None:
            return None
        key = self._keys.get(name)
        if key is None:
            return self._parse(path, unverified_payload(data), kind.message_type)
        try:
            payload = key.seal.open(path.encode(), data)
        except SealBroken as exc:
            raise StateAuthenticationError(self._refused(kind, name, path, exc)) from None
        return self._parse(path, payload, kind.message_type)

    def _refused(self, kind: Kind, name: str, path: str, why: SealBroken) -> str:
        """Why node ``path`` of topology ``name`` is refused, and what to do, for a message."""
        kill = f"heron kill {self.cluster} {name}"
        if why.unsealed:
            advice = (
                "it was submitted by a heron that did not authenticate state, or rewritten by "
                f"someone without the topology's key pair: kill it ({kill}) and submit it again"
            )
        else:
            advice = (
                "someone without the topology's key pair wrote it: kill the topology "
                f"({kill}) and check who can write to the state manager"
            )
        return (
            f"topology {name!r}: its {kind.what} node ({kind.value}/) at {self._location(path)} "
            f"fails authentication: {why}; nothing of it is used; {advice}"
        )

    def _parse(self, path: str, data: bytes, message_type: type[M]) -> M:
        message = message_type()
        try:
            message.ParseFromString(data)
        except DecodeError as exc:
            raise StateManagerError(
                f"{self._location(path)} does not hold a valid "
                f"{message_type.__name__} ({len(data)} bytes): {exc}"
            ) from exc
        return message


def _as_kind(kind: Kind | str) -> Kind:
    try:
        return Kind(kind)
    except ValueError:
        known = ", ".join(k.value for k in Kind)
        raise StateManagerError(f"unknown node kind {kind!r}; known: {known}") from None
