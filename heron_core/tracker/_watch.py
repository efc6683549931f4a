"""The tracker's view of the clusters: one thread per cluster keeps its state manager
connected, lists its topologies and watches the nodes of each, so that topologies appear,
change and disappear on their own."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from heron_core.client import ShellClient, TManagerClient
from heron_core.errors import HeronError
from heron_core.statemgr import Kind, StateManager, WatchHandle, create_state_manager
from heron_core.tracker._topology import TopologySnapshot

__all__ = ["Clients", "ClusterWatch", "Tracker"]

log = logging.getLogger(__name__)

_FIELDS = {
    Kind.TOPOLOGY: "topology",
    Kind.PACKING_PLAN: "packing_plan",
    Kind.PHYSICAL_PLAN: "physical_plan",
    Kind.EXECUTION_STATE: "execution_state",
    Kind.TMANAGER_LOCATION: "tmanager",
    Kind.SCHEDULER_LOCATION: "scheduler",
}

_JOIN_TIMEOUT_S = 2.0

StateManagerFactory = Callable[[Mapping[str, Any], str], StateManager]


class _Stopped(Exception):
    """The watch was closed while its thread was reaching the store."""


class Clients:
    """The tmanager and shell clients of one submission of a topology, each behind a lock
    (a zmq socket serves one thread at a time). Built on first use; closed when the topology
    disappears or is submitted again (new keys)."""

    def __init__(self, state: StateManager, name: str, timeout: float) -> None:
        self.lock = threading.Lock()
        self.tmanager = TManagerClient(state, name, timeout)
        self.shell = ShellClient(state, name, timeout)

    def close(self) -> None:
        """Close both clients (waits for a request in flight)."""
        with self.lock:
            self.tmanager.close()
            self.shell.close()


class _TopologyWatch:
    """The watches on the six nodes of one topology, folding each change into a snapshot."""

    def __init__(self, cluster: str, name: str) -> None:
        self.snapshot = TopologySnapshot(cluster, name)
        self._lock = threading.Lock()
        self._handles: list[WatchHandle] = []
        self._clients: Clients | None = None
        self._clients_id = ""

    def start(self, state: StateManager) -> None:
        for kind, field in _FIELDS.items():

            def update(message: Any, field: str = field) -> None:
                with self._lock:
                    self.snapshot = replace(self.snapshot, **{field: message})

            self._handles.append(state.watch(kind, self.snapshot.name, update))

    def clients(self, state: StateManager, timeout: float) -> Clients:
        with self._lock:
            snapshot_id = self.snapshot.topology_id
            stale = None
            if self._clients is not None and self._clients_id != snapshot_id:
                stale, self._clients = self._clients, None
            if self._clients is None:
                self._clients = Clients(state, self.snapshot.name, timeout)
                self._clients_id = snapshot_id
            clients = self._clients
        if stale is not None:
            stale.close()
        return clients

    def close(self) -> None:
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
        with self._lock:
            clients, self._clients = self._clients, None
        if clients is not None:
            clients.close()


class ClusterWatch:
    """Keeps one cluster's topologies up to date on a background thread.

    Every ``poll_interval`` seconds the thread lists the cluster's topologies; each new one
    gets a watch on each of its nodes (callbacks keep its `TopologySnapshot` current), each
    gone one is dropped. While the state manager cannot be reached (or its session is lost),
    the cluster has no topologies and the thread tries again every ``retry_interval`` seconds.

    Args:
        cluster: the cluster's name.
        config: its resolved config (the state manager's keys).
        poll_interval: seconds between two listings.
        retry_interval: seconds between two attempts to reach the state manager.
        timeout: seconds a tmanager or shell gets to answer.
        factory: builds the (unstarted) state manager; default `create_state_manager`.
    """

    def __init__(
        self,
        cluster: str,
        config: Mapping[str, Any],
        *,
        poll_interval: float = 1.0,
        retry_interval: float = 5.0,
        timeout: float = 3.0,
        factory: StateManagerFactory = create_state_manager,
    ) -> None:
        self.cluster = cluster
        self._config = config
        self._poll = poll_interval
        self._retry = retry_interval
        self._timeout = timeout
        self._factory = factory
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._state: StateManager | None = None
        self._watches: dict[str, _TopologyWatch] = {}
        self._problem = ""
        self._thread = threading.Thread(target=self._run, name=f"tracker-{cluster}", daemon=True)

    @property
    def problem(self) -> str:
        """Why the state manager cannot be reached now ("" while it can)."""
        return self._problem

    def start(self) -> None:
        """Start the background thread."""
        self._thread.start()

    def snapshots(self) -> list[TopologySnapshot]:
        """The snapshots of the topologies the cluster lists, visible or not, by name."""
        with self._lock:
            watches = sorted(self._watches.items())
        return [watch.snapshot for _, watch in watches]

    def clients(self, name: str) -> Clients | None:
        """The clients of topology ``name``, or None when it is not (or no longer) watched."""
        with self._lock:
            watch, state = self._watches.get(name), self._state
        if watch is None or state is None:
            return None
        return watch.clients(state, self._timeout)

    def stop(self) -> None:
        """Ask the thread to stop (returns at once)."""
        self._stop.set()

    def close(self, wait: float = _JOIN_TIMEOUT_S) -> None:
        """Stop the thread, every watch and the state manager. Idempotent.

        Waits at most ``wait`` seconds for the thread: one stuck reaching the store (a daemon
        thread) must not hold up an exit.
        """
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(wait)
        self._disconnect()

    # ----------------------------------------------------------------------------- the thread

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                state = self._connected()
                self._reconcile(state, state.list_topologies())
                self._problem = ""
                wait = self._poll
            except _Stopped:
                return
            except HeronError as exc:
                if str(exc) != self._problem:
                    log.warning(
                        "cluster %r: %s (retrying every %g s)", self.cluster, exc, self._retry
                    )
                self._problem = str(exc)
                self._disconnect()
                wait = self._retry
            except Exception as exc:  # a bug or an unexpected store error: keep trying
                log.exception("cluster %r: unexpected error while watching", self.cluster)
                self._problem = f"{type(exc).__name__}: {exc}"
                self._disconnect()
                wait = self._retry
            self._stop.wait(wait)

    def _connected(self) -> StateManager:
        if self._state is None:
            state = self._factory(self._config, self.cluster)
            try:
                state.start()
            except BaseException:
                state.close()
                raise
            with self._lock:
                if self._stop.is_set():  # closed while connecting: nobody else will close it
                    state.close()
                    raise _Stopped
                self._state = state
            log.info(
                "cluster %r: watching its state manager (%s)", self.cluster, type(state).__name__
            )
        return self._state

    def _reconcile(self, state: StateManager, names: list[str]) -> None:
        with self._lock:
            gone = [self._watches.pop(n) for n in list(self._watches) if n not in names]
            new = [n for n in names if n not in self._watches]
        for watch in gone:
            log.info("cluster %r: topology %r is gone", self.cluster, watch.snapshot.name)
            watch.close()
        for name in new:
            if self._stop.is_set():
                return
            watch = _TopologyWatch(self.cluster, name)
            try:
                watch.start(state)
            except BaseException:
                watch.close()
                raise
            with self._lock:
                stopped = self._stop.is_set()
                if not stopped:
                    self._watches[name] = watch
            if stopped:
                watch.close()
                return
            log.info("cluster %r: tracking topology %r", self.cluster, name)

    def _disconnect(self) -> None:
        with self._lock:
            watches, self._watches = list(self._watches.values()), {}
            state, self._state = self._state, None
        for watch in watches:
            watch.close()
        if state is not None:
            state.close()


class Tracker:
    """Watches the state managers of ``clusters`` (name -> resolved config).

    Args:
        clusters: the clusters, by name.
        **options: passed to each `ClusterWatch`.
    """

    def __init__(self, clusters: Mapping[str, Mapping[str, Any]], **options: Any) -> None:
        self.watches = {name: ClusterWatch(name, cfg, **options) for name, cfg in clusters.items()}

    @property
    def clusters(self) -> list[str]:
        """The names of the clusters, sorted."""
        return sorted(self.watches)

    def start(self) -> None:
        """Start watching every cluster (returns at once)."""
        for watch in self.watches.values():
            watch.start()

    def topologies(self) -> list[TopologySnapshot]:
        """Every visible topology of every cluster, by cluster then name."""
        return [
            snapshot
            for cluster in self.clusters
            for snapshot in self.watches[cluster].snapshots()
            if snapshot.visible
        ]

    def close(self) -> None:
        """Stop watching (waits at most a few seconds in all). Idempotent."""
        for watch in self.watches.values():
            watch.stop()
        deadline = time.monotonic() + _JOIN_TIMEOUT_S
        for watch in self.watches.values():
            watch.close(max(deadline - time.monotonic(), 0.0))
