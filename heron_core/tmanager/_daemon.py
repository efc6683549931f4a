"""The tmanager daemon: start-up against the state manager, the poll loop, clean shutdown."""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import zmq
from google.protobuf.message import Message

from heron_core.config import REGISTRY, config_from_proto, setting
from heron_core.errors import (
    ConfigurationError,
    HeronError,
    StateManagerError,
    TopologyValidationError,
)
from heron_core.network import Transport, encode
from heron_core.proto import (
    ckptmgr_pb2,
    common_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    tmanager_pb2,
    topology_pb2,
)
from heron_core.statemgr import StateManager
from heron_core.tmanager._checkpointer import Checkpointer
from heron_core.tmanager._metrics_cache import MetricsCache, planned_instances
from heron_core.tmanager._registration import StMgrRegistry
from heron_core.tmanager._state_writes import PendingWrites
from heron_core.tmanager._stats_server import StatsServer
from heron_core.tmanager._stmgr_server import StMgrServer

logger = logging.getLogger(__name__)

T = TypeVar("T")

SILENCE_KEY = "heron.tmanager.stmgr.state.timeout.sec"
_PROBE_TIMEOUT_S = 1.0
_STATE_NAMES = set(topology_pb2.TopologyState.values())


class TManager:
    """The Topology Manager of one topology: one thread, one zmq poll loop.

    `run` loads the topology and packing plan from ``state`` (retrying up to
    ``startup_timeout`` seconds each), binds the server and stats ROUTER sockets on random
    ports of ``host`` (CURVE servers with the topology's key pair), writes the ephemeral
    ``TManagerLocation`` and serves until `stop`.
    It then closes its sockets (linger 0) and deletes its location node if that is still its
    own. It never starts or closes ``state``: its owner does.

    While serving, the state manager may fail for a while (a ZooKeeper server restarting, a
    session expiring) without stopping the tmanager: the physical plan and the run state are
    sent to the stream managers at once, and their writes to ``state`` are kept and made again
    until stored (`PendingWrites`); the location node, which an expired ZooKeeper session
    takes with it, is created again by the state manager in its new session (see
    `ZooKeeperStateManager`), so stream managers watching it find this tmanager again.

    Args:
        state: a started state manager.
        topology_name: the topology served; its stored logical plan must carry this name.
        topology_id: the id the stored logical plan must carry.
        working_dir: the topology's working directory here, holding its key pair (``keys/``)
            with which both ports are secured (see `Transport`).
        host: the address the ports are bound on and advertised with (a hostname is resolved
            for binding and advertised as given).
        clock: monotonic seconds; every deadline and heartbeat time is read from it.
        startup_timeout: seconds to wait for each start-up condition (topology, packing plan,
            a stale location node to go away).
        retry_interval: seconds between start-up attempts, and the first back-off of a
            failed write while serving.

    >>> import tempfile
    >>> from heron_core.statemgr import LocalFileSystemStateManager
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with LocalFileSystemStateManager({"heron.statemgr.root.path": tmp.name}, "local") as sm:
    ...     TManager(sm, "wc", "wc-1", working_dir=Path(tmp.name), startup_timeout=0).run()
    1
    >>> tmp.cleanup()
    """

    def __init__(
        self,
        state: StateManager,
        topology_name: str,
        topology_id: str,
        *,
        working_dir: Path,
        host: str = "127.0.0.1",
        clock: Callable[[], float] = time.monotonic,
        startup_timeout: float = 30.0,
        retry_interval: float = 0.5,
    ) -> None:
        self._state = state
        self._name = topology_name
        self._id = topology_id
        self._host = host
        self._clock = clock
        self._startup_timeout = startup_timeout
        self._retry_interval = retry_interval
        self._stopping = False
        self._working_dir = working_dir
        self._context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self._transport: Transport | None = None
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_writer.setblocking(False)
        self._sockets: list[zmq.Socket[bytes]] = []
        self._location: tmanager_pb2.TManagerLocation | None = None

    def stop(self) -> None:
        """Ask `run` to return 0 soon. Safe to call from a signal handler; idempotent."""
        self._stopping = True
        # OSError: the buffer is full (a wake-up is pending anyway) or the socket is closed.
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"\0")

    def wakeup_fd(self) -> int:
        """A descriptor whose write wakes the poll loop: give it to ``signal.set_wakeup_fd``,
        so that a signal arriving just before the loop blocks still wakes it (the Python-level
        handler that calls `stop` runs only once the loop's poll returns)."""
        return self._wake_writer.fileno()

    def run(self) -> int:
        """Serve until `stop`; return the exit status: 0 after `stop`, 1 after an error.

        Every `HeronError` (a topology or packing plan still missing after the timeout, a
        stored topology whose name or id does not match, an inconsistent packing plan, a
        location node held by another live tmanager, a failed write of the physical plan) is
        logged as one ERROR line naming the topology. The shutdown steps run in every case.
        Call it at most once per instance.
        """
        try:
            return self._run()
        except HeronError as exc:
            logger.error("tmanager of topology %r failed: %s", self._name, exc)
            return 1
        finally:
            self._shutdown()

    # --------------------------------------------------------------------------- start-up

    def _run(self) -> int:
        topology = self._wait_for("logical plan (topologies/)", self._state.get_topology)
        if topology is None:
            return 0
        if topology.name != self._name or topology.id != self._id:
            raise TopologyValidationError(
                self._name,
                None,
                f"the stored logical plan is topology {topology.name!r} with id {topology.id!r};"
                f" expected topology {self._name!r} with id {self._id!r}",
            )
        packing_plan = self._wait_for("packing plan (packingplans/)", self._state.get_packing_plan)
        if packing_plan is None:
            return 0
        return self._serve(topology, packing_plan)

    def _wait_for(self, what: str, fetch: Callable[[str], T | None]) -> T | None:
        """``fetch(name)`` once it is not None, or None if stopped meanwhile."""
        deadline = self._clock() + self._startup_timeout
        attempts = 0
        while not self._stopping:
            value = fetch(self._name)
            if value is not None:
                return value
            if self._clock() >= deadline:
                raise StateManagerError(
                    f"topology {self._name!r}: no {what} in the state manager after "
                    f"{self._startup_timeout:g} s; was the topology submitted?"
                )
            if attempts == 0:
                logger.info("waiting up to %g s for the %s", self._startup_timeout, what)
            attempts += 1
            self._sleep(self._retry_interval)
        return None

    def _sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less if `stop` is called."""
        poller = zmq.Poller()
        poller.register(self._wake_reader, zmq.POLLIN)
        poller.poll(math.ceil(seconds * 1000))

    def _bind(self, transport: Transport, what: str) -> tuple[zmq.Socket[bytes], int]:
        sock = transport.server(self._context.socket(zmq.ROUTER), what)
        sock.setsockopt(zmq.LINGER, 0)
        self._sockets.append(sock)
        try:
            return sock, sock.bind_to_random_port(f"tcp://{socket.gethostbyname(self._host)}")
        except (OSError, zmq.ZMQError) as exc:
            raise ConfigurationError(
                f"topology {self._name!r}: cannot bind the tmanager's ports on host "
                f"{self._host!r}: {exc}"
            ) from exc

    def _establish(self, location: tmanager_pb2.TManagerLocation) -> bool:
        """Write ``location`` unless another tmanager holds the node; False if stopped."""
        deadline = self._clock() + self._startup_timeout
        attempts = 0
        while not self._stopping:
            current = self._state.get_tmanager_location(self._name)
            if current is None:
                self._state.set_tmanager_location(self._name, location)
                self._location = location
                return True
            where = f"{current.host}, server port {current.server_port}"
            if self._answers(current):
                raise StateManagerError(
                    f"topology {self._name!r}: another live tmanager ({where}, id "
                    f"{current.topology_id!r}) owns the tmanager location node and answers on "
                    f"stats port {current.stats_port}; stop it first"
                )
            if self._clock() >= deadline:
                raise StateManagerError(
                    f"topology {self._name!r}: the tmanager location node still names {where}, "
                    f"which does not answer, after {self._startup_timeout:g} s; its owner's "
                    "session has not expired (delete the node to take over)"
                )
            if attempts == 0:
                logger.info("waiting for the stale tmanager location (%s) to expire", where)
            attempts += 1
            self._sleep(self._retry_interval)
        return False

    def _answers(self, location: tmanager_pb2.TManagerLocation) -> bool:
        """Whether a tmanager answers a metrics request on ``location``'s stats port."""
        probe = self._context.socket(zmq.DEALER)
        if self._transport is not None:
            self._transport.client(probe)
        try:
            probe.setsockopt(zmq.LINGER, 0)
            probe.connect(f"tcp://{location.host}:{location.stats_port}")
            probe.send_multipart(encode(tmanager_pb2.MetricsRequest()))
            return bool(probe.poll(math.ceil(_PROBE_TIMEOUT_S * 1000)))
        finally:
            probe.close(linger=0)

    # --------------------------------------------------------------------------- serving

    def _serve(
        self, topology: topology_pb2.Topology, packing_plan: packing_plan_pb2.PackingPlan
    ) -> int:
        registry = StMgrRegistry(topology, packing_plan)
        config = config_from_proto(topology.topology_config)
        key = REGISTRY[SILENCE_KEY]
        silence = key.check(setting(config, SILENCE_KEY), f"the topology config of {self._name!r}")
        cache = MetricsCache.from_config(
            config,
            topology_name=self._name,
            components=planned_instances(topology, packing_plan),
        )
        self._transport = transport = Transport.for_topology(
            self._context,
            config_from_proto(topology.topology_config),
            self._working_dir,
            f"the tmanager of topology {self._name!r}",
        )
        server_socket, server_port = self._bind(transport, "stream manager port")
        stats_socket, stats_port = self._bind(transport, "stats port")
        writes = PendingWrites(self._clock, retry_interval=self._retry_interval)
        checkpointer = None
        if config.get("topology.reliability.mode") == "EFFECTIVELY_ONCE":
            checkpointer = self._checkpointer(
                config, packing_plan, writes, lambda m: stmgrs.broadcast(m)
            )
        stmgrs = StMgrServer(
            server_socket, registry, cache, self._store_plan(writes), self._clock, checkpointer
        )

        def change_state(state: topology_pb2.TopologyState.ValueType) -> common_pb2.Status:
            return self._change_state(registry, stmgrs, writes, state)

        stats = StatsServer(stats_socket, cache, change_state)
        location = tmanager_pb2.TManagerLocation(
            topology_name=self._name,
            topology_id=self._id,
            host=self._host,
            server_port=server_port,
            stats_port=stats_port,
        )
        if not self._establish(location):
            return 0
        logger.info(
            "serving topology %r: stream managers on tcp://%s:%d, stats on tcp://%s:%d; %s",
            self._name,
            self._host,
            location.server_port,
            self._host,
            location.stats_port,
            registry.waiting,
        )
        poller = zmq.Poller()
        for readable in (stmgrs.socket, stats.socket, self._wake_reader):
            poller.register(readable, zmq.POLLIN)
        while not self._stopping:
            due = (
                registry.next_silence(silence),
                writes.next_due,
                None if checkpointer is None else checkpointer.next_deadline(),
            )
            deadlines = [d for d in due if d is not None]
            deadline = min(deadlines, default=None)
            wait_ms = None if deadline is None else math.ceil(1000 * (deadline - self._clock()))
            events = dict(poller.poll(None if wait_ms is None else max(wait_ms, 0)))
            if stmgrs.socket in events:
                stmgrs.on_readable()
            if stats.socket in events:
                stats.on_readable()
            if self._wake_reader in events:
                with contextlib.suppress(OSError):
                    self._wake_reader.recv(4096)  # wake-ups: stop() or a signal's byte
            if checkpointer is not None:
                checkpointer.tick()
            for sid in registry.newly_silent(self._clock(), silence):
                logger.warning("%s has sent no heartbeat for %g s", sid, silence)
            writes.flush()
        logger.info("stopping")
        if writes.pending:
            logger.warning("stopping with writes not stored: %s", ", ".join(writes.pending))
        return 0

    def _checkpointer(
        self,
        config: dict[str, Any],
        packing_plan: packing_plan_pb2.PackingPlan,
        writes: PendingWrites,
        broadcast: Callable[[Message], None],
    ) -> Checkpointer:
        """The checkpoints of an EFFECTIVELY_ONCE topology, starting from the stored consistent
        ones (none with ``topology.stateful.start.clean``)."""
        stored = None
        if not setting(config, "topology.stateful.start.clean"):
            stored = self._state.get_stateful_checkpoints(self._name)
        consistent = [] if stored is None else list(stored.consistent_checkpoints)

        def store(checkpoints: ckptmgr_pb2.StatefulConsistentCheckpoints) -> None:
            writes.put(
                f"statefulcheckpoints/{self._name}",
                lambda: self._state.set_stateful_checkpoints(self._name, checkpoints),
            )

        return Checkpointer(
            self._name,
            float(config["topology.stateful.checkpoint.interval.seconds"]),
            [i.task_id for c in packing_plan.containers for i in c.instances],
            packing_plan.id,
            consistent,
            int(config["heron.statefulstorage.max.checkpoints"]),
            broadcast,
            store,
            clock=self._clock,
        )

    def _store_plan(
        self, writes: PendingWrites
    ) -> Callable[[physical_plan_pb2.PhysicalPlan], None]:
        """How the stream manager server persists a new physical plan: through ``writes``."""

        def store(plan: physical_plan_pb2.PhysicalPlan) -> None:
            writes.put(
                f"pplans/{self._name}", lambda: self._state.set_physical_plan(self._name, plan)
            )

        return store

    def _change_state(
        self,
        registry: StMgrRegistry,
        stmgrs: StMgrServer,
        writes: PendingWrites,
        state: topology_pb2.TopologyState.ValueType,
    ) -> common_pb2.Status:
        """Activate (RUNNING) or deactivate (PAUSED): store the topology and the plan with the
        new state (or keep the writes for later, when the state manager fails), then
        re-broadcast the plan (before every stream manager has registered, the first plan
        carries it)."""
        name = topology_pb2.TopologyState.Name(state) if state in _STATE_NAMES else str(state)
        if state not in (topology_pb2.RUNNING, topology_pb2.PAUSED):
            return common_pb2.Status(
                status=common_pb2.NOTOK,
                message=f"topology {self._name!r}: cannot change to state {name}; "
                "expected RUNNING (activate) or PAUSED (deactivate)",
            )
        if registry.topology.state == state:
            already = (
                common_pb2.TOPOLOGY_ALREADY_ACTIVE
                if state == topology_pb2.RUNNING
                else common_pb2.TOPOLOGY_ALREADY_DEACTIVE
            )
            return common_pb2.Status(
                status=already, message=f"topology {self._name!r} is already {name}"
            )
        plan = registry.set_state(state)
        topology = registry.topology
        writes.put(
            f"topologies/{self._name}", lambda: self._state.set_topology(self._name, topology)
        )
        if plan is not None:
            self._store_plan(writes)(plan)
            stmgrs.send_plan(plan)
        logger.info("topology %r is now %s", self._name, name)
        later = " (stored once the state manager answers)" if writes.pending else ""
        return common_pb2.Status(
            status=common_pb2.OK, message=f"topology {self._name!r}: {name}{later}"
        )

    def _shutdown(self) -> None:
        for sock in self._sockets:
            sock.close(linger=0)
        if self._location is not None:
            try:
                if self._state.get_tmanager_location(self._name) == self._location:
                    self._state.delete_tmanager_location(self._name)
            except StateManagerError as exc:
                logger.warning("could not delete the tmanager location: %s", exc)
        if self._transport is not None:
            self._transport.close()
        self._context.term()
        self._wake_reader.close()
        self._wake_writer.close()
