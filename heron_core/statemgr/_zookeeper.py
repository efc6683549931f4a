"""The ZooKeeper state manager (kazoo): znodes at ``<root>/<kind>/<name>``."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    BadVersionError,
    KazooException,
    NodeExistsError,
    NoNodeError,
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


class ZooKeeperStateManager(StateManager):
    """State in ZooKeeper, for topologies spread over machines.

    Config: ``heron.statemgr.connection.string`` (``host:port,...``; default
    ``127.0.0.1:2181``), ``heron.statemgr.root.path`` (an absolute znode path; default
    ``/heron``; as in Heron the cluster is not part of the path: each cluster's config names its
    own root), ``heron.statemgr.zookeeper.session.timeout.ms`` (30000) and
    ``heron.statemgr.zookeeper.connection.timeout.ms`` (10000).

    Ephemeral kinds are ephemeral znodes of this manager's session. :meth:`start` gives up
    after the connection timeout; every later call after the session timeout
    (:attr:`call_timeout_s`). Once the session is lost (expired), its ephemeral nodes are gone
    and every call raises :class:`StateManagerError`: build a new manager.

    >>> sm = ZooKeeperStateManager({"heron.statemgr.root.path": "/prod"}, "spark")
    >>> sm.hosts, sm.root
    ('127.0.0.1:2181', '/prod')
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
        self._client: Any = None  # a started KazooClient
        self._lost = False

    # ----------------------------------------------------------------------------- primitives

    def _start(self) -> None:
        try:
            client = KazooClient(
                hosts=self.hosts,
                timeout=self.call_timeout_s,
                connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            )

            def on_state(state: str) -> None:
                if state == KazooState.LOST and client is self._client:
                    self._lost = True

            client.add_listener(on_state)
            client.start(timeout=self._connection_timeout_s)
        except (KazooException, KazooTimeoutError, ValueError) as exc:
            raise StateManagerError(
                f"cannot connect to ZooKeeper at {self.hosts!r} ({_HOSTS_KEY}) within "
                f"{self._connection_timeout_s:g} s: {type(exc).__name__}: {exc}"
            ) from exc
        self._client = client

    def _close(self) -> None:
        try:
            self._client.stop()
            self._client.close()
        except KazooException as exc:
            logger.warning("closing the ZooKeeper session to %s: %s", self.hosts, exc)

    def _put(self, path: str, data: bytes, ephemeral: bool) -> None:
        client = self._connected(path)
        znode = self._znode(path)
        while True:  # repeats only when a concurrent create or delete won a race
            if not ephemeral:
                try:
                    self._wait(path, client.set_async(znode, data))
                    return
                except NoNodeError:
                    pass
            try:
                self._wait(
                    path, client.create_async(znode, data, ephemeral=ephemeral, makepath=True)
                )
                return
            except NodeExistsError:
                if not ephemeral:
                    continue
            try:
                _, stat = self._wait(path, client.get_async(znode))
                session = client.client_id[0] if client.client_id else 0
                if stat.ephemeralOwner != session:
                    raise StateManagerError(
                        f"{self._location(path)} is owned by another live ZooKeeper session "
                        f"(0x{stat.ephemeralOwner:x}; this one is 0x{session:x}): a second owner "
                        "must not take it over"
                    )
                self._wait(path, client.set_async(znode, data, version=stat.version))
                return
            except (NoNodeError, BadVersionError):
                continue

    def _get(self, path: str) -> bytes | None:
        try:
            data, _ = self._wait(path, self._connected(path).get_async(self._znode(path)))
        except NoNodeError:
            return None
        return data

    def _delete(self, path: str) -> None:
        with contextlib.suppress(NoNodeError):
            self._wait(path, self._connected(path).delete_async(self._znode(path)))

    def _children(self, directory: str) -> list[str]:
        client = self._connected(directory)
        try:
            return list(self._wait(directory, client.get_children_async(self._znode(directory))))
        except NoNodeError:
            return []

    def _watch(self, path: str, callback: Callable[[bytes | None], None]) -> Callable[[], None]:
        client = self._connected(path)
        stopped = threading.Event()

        def on_data(data: bytes | None, stat: Any, event: Any) -> bool | None:
            if stopped.is_set():
                return False  # tells kazoo to drop the watch
            callback(None if stat is None else data)
            return None

        def register() -> None:
            # kazoo reads the node (retrying while disconnected) and makes the first call
            # here, off the caller's thread; later calls come on kazoo's event thread.
            try:
                client.DataWatch(self._znode(path), on_data)
            except Exception:
                logger.exception("cannot watch %s", self._location(path))

        threading.Thread(target=register, name=f"statemgr-watch-{path}", daemon=True).start()
        return stopped.set

    def _location(self, path: str) -> str:
        return f"zookeeper://{self.hosts}{self._znode(path)}"

    # ----------------------------------------------------------------------------- helpers

    def _znode(self, path: str) -> str:
        return f"{self.root}/{path}"

    def _connected(self, path: str) -> Any:
        if self._lost:
            raise self._lost_error(path)
        return self._client

    def _lost_error(self, path: str) -> StateManagerError:
        return StateManagerError(
            f"{self._location(path)}: the ZooKeeper session of this state manager was lost "
            "(expired), and its ephemeral nodes with it; build a new state manager"
        )

    def _wait(self, path: str, result: Any) -> Any:
        """The result of a kazoo async call, waiting at most :attr:`call_timeout_s`.

        Raises:
            NoNodeError, NodeExistsError, BadVersionError: for the caller to handle.
            StateManagerError: anything else (no answer in time, connection or session lost;
                a lost session makes every later call raise too).
        """
        try:
            return result.get(timeout=self.call_timeout_s)
        except (NoNodeError, NodeExistsError, BadVersionError):
            raise
        except SessionExpiredError as exc:
            self._lost = True
            raise self._lost_error(path) from exc
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


def _milliseconds(config: Mapping[str, Any], key: str, default: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{key} must be a positive integer (milliseconds), got {value!r}")
    return value
