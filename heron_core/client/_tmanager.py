"""Requests to a running topology's tmanager on its stats port, over the topology's transport."""

from __future__ import annotations

import logging
from pathlib import Path

import zmq
from google.protobuf.message import Message

from heron_core.config import config_from_proto
from heron_core.errors import ConfigurationError
from heron_core.network import ProtocolError, Transport, decode, encode
from heron_core.statemgr import StateManager

__all__ = ["TManagerClient"]

log = logging.getLogger(__name__)


class TManagerClient:
    """Asks a topology's tmanager (found through the state manager) one request at a time.

    The stats port is a CURVE server (see `Transport`): the client presents the topology's key
    pair, read from ``keys/`` in the working directory the execution state names (the one
    made at submit on this host), unless the topology turned CURVE off.

    Args:
        state: a started state manager.
        topology_name: the topology's name.
        timeout: seconds to wait for an answer.
    """

    def __init__(self, state: StateManager, topology_name: str, timeout: float = 2.0) -> None:
        self._state = state
        self._name = topology_name
        self._timeout_ms = int(timeout * 1000)
        self._context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self._transport: Transport | None = None
        self._socket: zmq.Socket[bytes] | None = None
        self._endpoint = ""

    @property
    def endpoint(self) -> str:
        """The stats port asked last (``tcp://host:port``), or "" before the first request."""
        return self._endpoint

    def _secured(self) -> Transport:
        if self._transport is None:
            topology = self._state.get_topology(self._name)
            execution = self._state.get_execution_state(self._name)
            if topology is None or execution is None:
                raise ConfigurationError(f"topology {self._name!r} is not in the state manager")
            self._transport = Transport.for_topology(
                self._context,
                config_from_proto(topology.topology_config),
                Path(execution.working_directory),
                f"a client of topology {self._name!r}",
            )
        return self._transport

    def ask(self, request: Message, timeout: float | None = None) -> Message | None:
        """Send ``request`` and return the answer, or None when the tmanager is not (yet)
        known, did not answer within ``timeout`` seconds (default: the client's), or sent
        something unreadable (logged).

        Raises:
            ConfigurationError: the topology or its key pair cannot be found.
        """
        location = self._state.get_tmanager_location(self._name)
        if location is None:
            self._drop()
            return None
        endpoint = f"tcp://{location.host}:{location.stats_port}"
        if self._socket is None or endpoint != self._endpoint:
            self._drop()
            self._socket = self._secured().client(self._context.socket(zmq.DEALER))
            self._socket.setsockopt(zmq.LINGER, 0)
            self._socket.connect(endpoint)
            self._endpoint = endpoint
        self._socket.send_multipart(encode(request))
        wait_ms = self._timeout_ms if timeout is None else max(int(timeout * 1000), 1)
        if not self._socket.poll(wait_ms):
            self._drop()  # a late answer must not be read as the next one's
            return None
        try:
            return decode(self._socket.recv_multipart())
        except ProtocolError as exc:
            log.warning("unreadable answer from the tmanager at %s: %s", endpoint, exc)
            return None

    def _drop(self) -> None:
        if self._socket is not None:
            self._socket.close(linger=0)
            self._socket = None

    def close(self) -> None:
        """Close the socket, the transport and the zmq context. Idempotent."""
        self._drop()
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if not self._context.closed:
            self._context.term()
