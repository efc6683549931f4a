"""The ZooKeeper state manager (kazoo): znodes at ``<root>/<kind>/<name>``."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    BadVersionError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from heron_core.errors import ConfigurationError, StateManagerError
from heron_core.statemgr.base import StateManager

__all__ = ["ZooKeeperStateManager"]

logger = logging.getLogger(__name__)

_HOSTS_KEY = "heron.statemgr.connection.string"
_ROOT_KEY = "heron.statemgr.root.path"
_SESSION_KEY = "heron.statemgr.zookeeper.session.timeout.ms"
_CONNECTION_KEY = "heron.statemgr.zookeeper.connection.timeout.ms"

_RETRY_PAUSE_S = 0.05
"""Pause before asking again when a call was cut off although the client reads as connected."""
_RESTORE_RETRY_S = 1.0
"""Pause between two passes of restoring ephemeral nodes when one pass could not finish."""

# Errors of a call cut off by a dropped connection or an expired session: kazoo reconnects
# (in a new session after an expiry) and the call is asked again.
_RECONNECTABLE = (ConnectionLoss, OperationTimeoutError, SessionExpiredError)


class _OwnedByAnother(StateManagerError):
    """An ephemeral node belongs to another live session (so it must not be taken over)."""


class ZooKeeperStateManager(StateManager):
    """State in ZooKeeper, for topologies spread over machines.

    Config: ``heron.statemgr.connection.string`` (``host:port,...``; default
    ``127.0.0.1:2181``), ``heron.statemgr.root.path`` (an absolute znode path; default
    ``/heron``; as in Heron the cluster is not part of the path: each cluster's config names its
    own root), ``heron.statemgr.zookeeper.session.timeout.ms`` (30000) and
    ``heron.statemgr.zookeeper.connection.timeout.ms`` (10000).

    Ephemeral kinds are ephemeral znodes of this manager's session. :meth:`start` gives up
    after the connection timeout; every later call after the session timeout
    (:attr:`call_timeout_s`).

    The manager outlives its ZooKeeper sessions; nothing needs to be rebuilt:

    * a dropped connection (a server restarting, a network blip) is re-established by kazoo
      in the same session; a call cut off meanwhile is asked again once connected, and raises
      :class:`StateManagerError` only when that has not happened within :attr:`call_timeout_s`;
    * when the server expires the session (the client was cut off for longer than the session
      timeout, or the session was closed from outside), ZooKeeper deletes its ephemeral nodes.
      kazoo then opens a new session, and a background thread of the manager creates again,
      in it, every ephemeral node this manager set and did not delete since (the tmanager's or
      the scheduler's location). A node that another live session created meanwhile is left
      to that owner and forgotten here (logged as an ERROR): a second owner is never ousted;
    * watches go on across reconnections and sessions (kazoo reads the node again on every
      new connection).

    The same node deleted by *another* manager while this one's session lives (``kill``) is
    not recreated then; it would be after a later expiry of this manager's session, so an
    owner that must stay away deletes its node through its own manager or closes it.

    >>> sm = ZooKeeperStateManager({"heron.statemgr.root.path": "/prod"}, "spark")
    >>> sm.hosts, sm.root, sm.session_id
    ('127.0.0.1:2181', '/prod', None)
    """

    def __init__(self, config: Mapping[str, Any], cluster: str) -> None:
        super().__init__(config, cluster)
        self.hosts = str(config.get(_HOSTS_KEY) or "127.0.0.1:2181")
        root = str(config.get(_ROOT_KEY) or "/heron")
        if not root.startswith("/"):
            raise ConfigurationError(
                f"{_ROOT_KEY} must be an absolute ZooKeeper path for the zookeeper state "
                f"manager of cluster {cluster!r}, got {root!r}"
            )
        self.root = root.rstrip("/")
        self.call_timeout_s = _milliseconds(config, _SESSION_KEY, 30000) / 1000
        self._connection_timeout_s = _milliseconds(config, _CONNECTION_KEY, 10000) / 1000
        self._client: Any = None  # a started KazooClient, the same one for the manager's life
        self._connected = threading.Event()  # set while kazoo reads as connected
        self._suspended = False  # the connection dropped (the session may live on)
        self._closing = threading.Event()
        self._sessions: list[int] = []  # every session id this manager had, the current last
        # The ephemeral nodes this manager set and did not delete (path -> data), restored
        # after a session expiry. The lock is held across every ephemeral write, delete and
        # restore, so that a restore never revives a node its owner has just deleted.
        self._ephemerals: dict[str, bytes] = {}
        self._ephemeral_lock = threading.Lock()
        self._restore_lock = threading.Lock()  # guards the two fields below
        self._restore_needed = False
        self._restorer: threading.Thread | None = None

    @property
    def session_id(self) -> int | None:
        """The id of the current ZooKeeper session (the ``ephemeralOwner`` of this manager's
        ephemeral nodes), or None before the first connection. It changes after an expiry."""
        return self._sessions[-1] if self._sessions else None

    # ----------------------------------------------------------------------------- primitives

    def _start(self) -> None:
        try:
            client = KazooClient(
                hosts=self.hosts,
                timeout=self.call_timeout_s,
                connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            )
            client.add_listener(lambda state: self._on_state(client, state))
            client.start(timeout=self._connection_timeout_s)
        except (KazooException, KazooTimeoutError, ValueError) as exc:
            raise StateManagerError(
                f"cannot connect to ZooKeeper at {self.hosts!r} ({_HOSTS_KEY}) within "
                f"{self._connection_timeout_s:g} s: {type(exc).__name__}: {exc}"
            ) from exc
        self._client = client

    def _close(self) -> None:
        self._closing.set()
        self._connected.clear()
        try:
            self._client.stop()
            self._client.close()
        except KazooException as exc:
            logger.warning("closing the ZooKeeper session to %s: %s", self.hosts, exc)

    def _put(self, path: str, data: bytes, ephemeral: bool) -> None:
        if ephemeral:
            with self._ephemeral_lock:
                self._create_ephemeral(path, data)
                self._ephemerals[path] = data
            return
        client, znode = self._client, self._znode(path)
        while True:  # repeats only when a concurrent create or delete won a race
            try:
                self._call(path, client.set_async, znode, data)
                return
            except NoNodeError:
                pass
            try:
                self._call(path, client.create_async, znode, data, makepath=True)
                return
            except NodeExistsError:
                continue

    def _get(self, path: str) -> bytes | None:
        client, znode = self._client, self._znode(path)
        try:
            data, _ = self._call(path, client.get_async, znode)
        except NoNodeError:
            return None
        return data

    def _delete(self, path: str) -> None:
        client, znode = self._client, self._znode(path)
        with self._ephemeral_lock:
            self._ephemerals.pop(path, None)
            with contextlib.suppress(NoNodeError):
                self._call(path, client.delete_async, znode)

    def _children(self, directory: str) -> list[str]:
        client, znode = self._client, self._znode(directory)
        try:
            return list(self._call(directory, client.get_children_async, znode))
        except NoNodeError:
            return []

    def _watch(self, path: str, callback: Callable[[bytes | None], None]) -> Callable[[], None]:
        client = self._client
        stopped = threading.Event()

        def on_data(data: bytes | None, stat: Any, event: Any) -> bool | None:
            if stopped.is_set():
                return False  # tells kazoo to drop the watch
            callback(None if stat is None else data)
            return None

        def register() -> None:
            # kazoo reads the node (retrying while disconnected) and makes the first call
            # here, off the caller's thread; later calls come on kazoo's event thread, also
            # after a reconnection or a new session (kazoo reads the node again then).
            try:
                client.DataWatch(self._znode(path), on_data)
            except Exception:
                logger.exception("cannot watch %s", self._location(path))

        threading.Thread(target=register, name=f"statemgr-watch-{path}", daemon=True).start()
        return stopped.set

    def _location(self, path: str) -> str:
        return f"zookeeper://{self.hosts}{self._znode(path)}"

    # ----------------------------------------------------------------------------- sessions

    def _on_state(self, client: Any, state: str) -> None:
        """kazoo's connection listener: runs on kazoo's connection thread, must not block."""
        if self._closing.is_set():
            self._connected.clear()
            return
        if state == KazooState.CONNECTED:
            session = client.client_id[0] if client.client_id else 0
            if session not in self._sessions:
                if self._sessions:
                    logger.info("ZooKeeper at %s: new session 0x%x", self.hosts, session)
                self._sessions.append(session)
            elif self._suspended:
                logger.info("ZooKeeper at %s: reconnected in session 0x%x", self.hosts, session)
            self._suspended = False
            self._connected.set()
            with self._restore_lock:
                if self._restore_needed and self._restorer is None:
                    self._restorer = threading.Thread(
                        target=self._restore_loop, name="statemgr-restore", daemon=True
                    )
                    self._restorer.start()
        elif state == KazooState.SUSPENDED:
            self._connected.clear()
            self._suspended = True
            logger.warning(
                "ZooKeeper at %s: connection lost; reconnecting (session 0x%x lives on if "
                "back within %g s)",
                self.hosts,
                self.session_id or 0,
                self.call_timeout_s,
            )
        else:  # LOST: the session expired (a closed client was handled above)
            self._connected.clear()
            if not self._sessions:
                return  # never connected: start() is failing
            with self._restore_lock:
                self._restore_needed = True
            logger.warning(
                "ZooKeeper at %s: session 0x%x expired and its ephemeral nodes with it (%s); "
                "reconnecting in a new session to create them again",
                self.hosts,
                self.session_id or 0,
                ", ".join(sorted(self._ephemerals)) or "none",
            )

    def _restore_loop(self) -> None:
        """Restore the ephemeral nodes until a pass finishes with no new expiry meanwhile."""
        while True:
            with self._restore_lock:
                if self._closing.is_set() or not self._restore_needed:
                    self._restorer = None
                    return
                self._restore_needed = False
            if not self._restore_all():
                with self._restore_lock:
                    self._restore_needed = True
                self._closing.wait(_RESTORE_RETRY_S)

    def _restore_all(self) -> bool:
        """Create every recorded ephemeral node in the current session; False when one could
        not be reached (to be tried again)."""
        restored: list[str] = []
        complete = True
        with self._ephemeral_lock:
            for path, data in list(self._ephemerals.items()):
                if self._closing.is_set():
                    return True
                try:
                    self._create_ephemeral(path, data)
                except _OwnedByAnother as exc:
                    del self._ephemerals[path]
                    logger.error("not restoring %s after the session expired: %s", path, exc)
                except StateManagerError as exc:
                    complete = False
                    if not self._closing.is_set():
                        logger.warning("restoring %s: %s; trying again", path, exc)
                else:
                    restored.append(path)
        if restored:
            logger.info(
                "ZooKeeper at %s: created %s again in session 0x%x",
                self.hosts,
                ", ".join(restored),
                self.session_id or 0,
            )
        return complete

    def _create_ephemeral(self, path: str, data: bytes) -> None:
        """Create (or overwrite) ``path`` as an ephemeral node of the current session.

        Raises:
            _OwnedByAnother: another live session owns the node.
            StateManagerError: ZooKeeper did not answer in time.
        """
        client, znode = self._client, self._znode(path)
        while True:  # repeats only when a concurrent create, delete or expiry won a race
            try:
                self._call(path, client.create_async, znode, data, ephemeral=True, makepath=True)
                return
            except NodeExistsError:
                pass
            try:
                _, stat = self._call(path, client.get_async, znode)
                session = self.session_id
                if stat.ephemeralOwner != session:
                    if stat.ephemeralOwner in self._sessions:
                        continue  # read before our previous session's expiry deleted it
                    raise _OwnedByAnother(
                        f"{self._location(path)} is owned by another live ZooKeeper session "
                        f"(0x{stat.ephemeralOwner:x}; this one is 0x{session or 0:x}): a "
                        "second owner must not take it over"
                    )
                self._call(path, client.set_async, znode, data, version=stat.version)
                return
            except (NoNodeError, BadVersionError):
                continue

    # ----------------------------------------------------------------------------- helpers

    def _znode(self, path: str) -> str:
        return f"{self.root}/{path}"

    def _call(self, path: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """The result of ``method(*args, **kwargs)``, a kazoo ``*_async`` call, made again
        after a dropped connection or an expired session, within :attr:`call_timeout_s` in all.

        Raises:
            NoNodeError, NodeExistsError, BadVersionError: for the caller to handle.
            StateManagerError: anything else (no answer or no connection in time, the
                manager closed, an unexpected ZooKeeper error).
        """
        deadline = time.monotonic() + self.call_timeout_s
        while True:
            try:
                return method(*args, **kwargs).get(timeout=max(deadline - time.monotonic(), 0.0))
            except (NoNodeError, NodeExistsError, BadVersionError):
                raise
            except ConnectionClosedError as exc:
                raise StateManagerError(
                    f"{self._location(path)}: the state manager was closed"
                ) from exc
            except _RECONNECTABLE as exc:
                if not self._reconnected(deadline):
                    raise StateManagerError(
                        f"{self._location(path)}: no connection to ZooKeeper within "
                        f"{self.call_timeout_s:g} s ({_SESSION_KEY}; last: "
                        f"{type(exc).__name__})"
                    ) from exc
            except KazooTimeoutError as exc:
                raise StateManagerError(
                    f"{self._location(path)}: no answer from ZooKeeper within "
                    f"{self.call_timeout_s:g} s ({_SESSION_KEY})"
                ) from exc
            except KazooException as exc:
                detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                raise StateManagerError(
                    f"{self._location(path)}: the ZooKeeper call failed ({detail})"
                ) from exc

    def _reconnected(self, deadline: float) -> bool:
        """Wait until kazoo is connected again; False when ``deadline`` (monotonic) passed
        first or the manager is closing."""
        was_connected = self._connected.is_set()
        if not self._connected.wait(max(deadline - time.monotonic(), 0.0)):
            return False
        if was_connected:  # cut off but not yet told so: do not spin
            self._closing.wait(min(_RETRY_PAUSE_S, max(deadline - time.monotonic(), 0.0)))
        return not self._closing.is_set() and time.monotonic() < deadline


def _milliseconds(config: Mapping[str, Any], key: str, default: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{key} must be a positive integer (milliseconds), got {value!r}")
    return value
