"""Requests to a running topology's daemons over the topology's transport: its tmanager's
stats port (`TManagerClient`) and its containers' shells (`ShellClient`)."""

from __future__ import annotations

import logging
from pathlib import Path

import zmq
from google.protobuf.message import Message

from heron_core.config.codec import json_config_from_proto
from heron_core.errors import ConfigurationError
from heron_core.network import ProtocolError, Transport, decode, encode
from heron_core.proto import physical_plan_pb2
from heron_core.statemgr import StateManager

__all__ = ["ShellClient", "TManagerClient", "shell_endpoint"]

log = logging.getLogger(__name__)


class _TopologyClient:
    """One request at a time to daemons of a topology, a DEALER per endpoint.

    Every TCP port of the daemons is a CURVE server (see `Transport`): the client presents
    the topology's key pair, read from ``keys/`` in the working directory the execution state
    names (the one made at submit on this host), unless the topology turned CURVE off. It
    reads only the JSON values of the topology's config (never unpickles), so it serves a
    state manager without the topology's key too (the tracker's). Not thread-safe: one
    client per thread, or a lock.

    Args:
        state: a started state manager.
        topology_name: the topology's name.
        timeout: seconds to wait for an answer.
        who: what the client is, for log lines (``"a client"``).
    """

    def __init__(self, state: StateManager, topology_name: str, timeout: float, who: str) -> None:
        self._state = state
        self._name = topology_name
        self._timeout_ms = int(timeout * 1000)
        self._who = who
        self._context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self._transport: Transport | None = None
        self._sockets: dict[str, zmq.Socket[bytes]] = {}

    def _secured(self) -> Transport:
        if self._transport is None:
            topology = self._state.get_topology(self._name)
            execution = self._state.get_execution_state(self._name)
            if topology is None or execution is None:
                raise ConfigurationError(f"topology {self._name!r} is not in the state manager")
            self._transport = Transport.for_topology(
                self._context,
                json_config_from_proto(topology.topology_config),
                Path(execution.working_directory),
                f"{self._who} of topology {self._name!r}",
            )
        return self._transport

    def _ask(
        self, endpoint: str, what: str, request: Message, timeout: float | None
    ) -> Message | None:
        socket = self._sockets.get(endpoint)
        if socket is None:
            socket = self._secured().client(self._context.socket(zmq.DEALER))
            socket.setsockopt(zmq.LINGER, 0)
            socket.connect(endpoint)
            self._sockets[endpoint] = socket
        socket.send_multipart(encode(request))
        wait_ms = self._timeout_ms if timeout is None else max(int(timeout * 1000), 1)
        if not socket.poll(wait_ms):
            self._drop(endpoint)  # a late answer must not be read as the next one's
            return None
        try:
            return decode(socket.recv_multipart())
        except ProtocolError as exc:
            log.warning("unreadable answer from the %s at %s: %s", what, endpoint, exc)
            return None

    def _drop(self, endpoint: str) -> None:
        socket = self._sockets.pop(endpoint, None)
        if socket is not None:
            socket.close(linger=0)

    def close(self) -> None:
        """Close the sockets, the transport and the zmq context. Idempotent."""
        for endpoint in list(self._sockets):
            self._drop(endpoint)
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if not self._context.closed:
            self._context.term()


class TManagerClient(_TopologyClient):
    """Asks a topology's tmanager (found through the state manager) on its stats port.

    Args:
        state: a started state manager.
        topology_name: the topology's name.
        timeout: seconds to wait for an answer.
    """

    def __init__(self, state: StateManager, topology_name: str, timeout: float = 2.0) -> None:
        super().__init__(state, topology_name, timeout, "a client")
        self._endpoint = ""

    @property
    def endpoint(self) -> str:
        """The stats port asked last (``tcp://host:port``), or "" before the first request."""
        return self._endpoint

    def ask(self, request: Message, timeout: float | None = None) -> Message | None:
        """Send ``request`` and return the answer, or None when the tmanager is not (yet)
        known, did not answer within ``timeout`` seconds (default: the client's), or sent
        something unreadable (logged).

        Raises:
            ConfigurationError: the topology or its key pair cannot be found.
        """
        location = self._state.get_tmanager_location(self._name)
        if location is None:
            self._drop(self._endpoint)
            return None
        endpoint = f"tcp://{location.host}:{location.stats_port}"
        if endpoint != self._endpoint:
            self._drop(self._endpoint)  # a new tmanager: the old one will not answer
            self._endpoint = endpoint
        return self._ask(endpoint, "tmanager", request, timeout)


def shell_endpoint(plan: physical_plan_pb2.PhysicalPlan, container: int) -> str | None:
    """The shell port of ``container`` in ``plan`` (``tcp://host:port``), or None when the plan
    has no such container or its stream manager names no shell port.

    >>> plan = physical_plan_pb2.PhysicalPlan(
    ...     stmgrs=[physical_plan_pb2.StMgr(container_id=1, host_name="h", shell_port=9)])
    >>> shell_endpoint(plan, 1), shell_endpoint(plan, 2)
    ('tcp://h:9', None)
    """
    for stmgr in plan.stmgrs:
        if stmgr.container_id == container:
            return f"tcp://{stmgr.host_name}:{stmgr.shell_port}" if stmgr.shell_port else None
    return None


class ShellClient(_TopologyClient):
    """Asks the shells of a topology's containers (found in its physical plan, through the
    state manager): `metrics_pb2.ShellFileRequest`, ``ShellListRequest`` and
    ``ShellPidRequest``.

    Args:
        state: a started state manager.
        topology_name: the topology's name.
        timeout: seconds to wait for an answer.
    """

    def __init__(self, state: StateManager, topology_name: str, timeout: float = 2.0) -> None:
        super().__init__(state, topology_name, timeout, "a shell client")

    def endpoint(self, container: int) -> str | None:
        """The shell port of ``container`` in the stored physical plan, or None when there is
        no physical plan, no such container, or no shell port in it."""
        plan = self._state.get_physical_plan(self._name)
        return None if plan is None else shell_endpoint(plan, container)

    def ask(self, container: int, request: Message, timeout: float | None = None) -> Message | None:
        """Send ``request`` to ``container``'s shell and return the answer, or None when the
        shell is not (yet) known, did not answer within ``timeout`` seconds (default: the
        client's), or sent something unreadable (logged).

        Raises:
            ConfigurationError: the topology or its key pair cannot be found.
        """
        endpoint = self.endpoint(container)
        if endpoint is None:
            return None
        return self._ask(endpoint, "shell", request, timeout)
