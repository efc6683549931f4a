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
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.hosts import collect_hosts
from kazoo.retry import KazooRetry
from kazoo.security import ACL, READ_ACL_UNSAFE, make_digest_acl

from heron_core.config import setting
from heron_core.errors import ConfigurationError, StateManagerError
from heron_core.statemgr._seal import StateKey
from heron_core.statemgr._zk_auth import (
    AUTH_FILE_KEY,
    DigestCredential,
    load_credential,
    wider_grants,
)
from heron_core.statemgr.base import Kind, StateManager

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
_CREATE_ATTEMPTS = 5
"""How often a create makes its missing directory again before giving up."""

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
    ``heron.statemgr.zookeeper.connection.timeout.ms`` (10000) and
    ``heron.statemgr.zookeeper.auth.file`` (unset).

    Ephemeral kinds are ephemeral znodes of this manager's session. :meth:`start` gives up
    after the connection timeout (a ZooKeeper that is down or unreachable: one
    :class:`StateManagerError` naming the connection string, its key and the last attempt's
    reason); every later call after the session timeout (:attr:`call_timeout_s`).

    **Access control.** Without ``heron.statemgr.zookeeper.auth.file``, a topology's nodes
    written by a manager holding its `StateKey` (every daemon of the topology, and the CLI
    that submitted it) get two ACL entries: all permissions for the topology's own ZooKeeper
    digest identity (user ``heron-topology-<name>``, its password derived from the topology's
    secret: every holder of ``W/keys`` logs in as it, nobody else can), and reading for
    anyone (the tracker reads without the key). The root and kind directories keep
    ZooKeeper's open ACL, since topologies without a shared identity create and delete
    nodes in them: anyone reaching the server can still delete a topology's node and create
    one of that name (denial of service), but not change it in place, and a node so made
    carries no valid MAC, so no holder of the key uses it. A node written by a manager
    without the topology's key gets the open ACL. With the auth file, the key names a file
    holding ``user:password`` (owner-only,
    see :func:`~heron_core.statemgr._zk_auth.load_credential`): the manager logs in as that
    ZooKeeper digest user on every connection, and every node it creates (the root and kind
    directories, each topology's nodes, the ephemeral locations) gets one ACL entry, all
    permissions for that user. Another client can then neither read, change nor delete them,
    nor create nodes beside them; every daemon, the CLI and the tracker must be given the same
    file. :meth:`start` creates the root and kind directories and refuses (naming the keys) a
    root or directory that already exists with an ACL granting more than reading to someone
    else, because ZooKeeper lets whoever may delete under a directory delete its children.

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
        try:
            collect_hosts(self.hosts)
        except ValueError as exc:
            raise ConfigurationError(
                f"{_HOSTS_KEY} must be 'host:port,...' for the zookeeper state manager of "
                f"cluster {cluster!r}, got {self.hosts!r}: {exc}"
            ) from None
        root = str(config.get(_ROOT_KEY) or "/heron")
        if not root.startswith("/"):
            raise ConfigurationError(
                f"{_ROOT_KEY} must be an absolute ZooKeeper path for the zookeeper state "
                f"manager of cluster {cluster!r}, got {root!r}: set it to a znode path such "
                "as /heron in the cluster's config"
            )
        self.root = root.rstrip("/")
        self.call_timeout_s = _milliseconds(config, _SESSION_KEY) / 1000
        self._connection_timeout_s = _milliseconds(config, _CONNECTION_KEY) / 1000
        self._credential: DigestCredential | None = load_credential(config)
        self._kazoo_log = _KazooLog()
        if self._credential is not None:
            self._kazoo_log.hide(self._credential.password)
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
        credential = self._credential
        self._kazoo_log.last_problem = ""
        if credential is not None:
            auth_data = credential.auth_data
        else:
            auth_data = [self._digest_login(key) for key in list(self._keys.values())]
        client = KazooClient(
            hosts=self.hosts,
            timeout=self.call_timeout_s,
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            auth_data=auth_data or None,
            default_acl=[credential.acl] if credential else None,
            logger=self._kazoo_log,
        )
        client.add_listener(lambda state: self._on_state(client, state))
        self._client = client
        try:
            client.start(timeout=self._connection_timeout_s)
        except KazooTimeoutError:
            self._abandon(client)
            reason = self._kazoo_log.last_problem
            raise StateManagerError(
                f"cannot connect to ZooKeeper at {self.hosts!r} ({_HOSTS_KEY}) within "
                f"{self._connection_timeout_s:g} s ({_CONNECTION_KEY})"
                + (f"; the last attempt: {reason}" if reason else "")
                + "; is ZooKeeper running there, and does the connection string name it?"
            ) from None
        except KazooException as exc:  # the server refused the login (AUTH_FAILED)
            self._abandon(client)
            login = f" as the {credential.describe()}" if credential else ""
            raise StateManagerError(
                f"ZooKeeper at {self.hosts!r} ({_HOSTS_KEY}) refused the session{login}: "
                f"{type(exc).__name__}"
            ) from None
        if credential is not None:
            try:
                self._protect_directories(credential)
            except BaseException:
                self._abandon(client)
                raise

    def _digest_login(self, key: StateKey) -> tuple[str, str]:
        """kazoo's ``auth_data`` entry of ``key``'s digest identity (its password hidden from
        kazoo's log from now on)."""
        self._kazoo_log.hide(key.digest_password)
        return ("digest", f"{key.digest_user}:{key.digest_password}")

    def _key_added(self, key: StateKey) -> None:
        """Log in as the topology's digest identity (kazoo repeats it on every new
        connection), unless the auth file's user is the one every node admits."""
        if self._credential is not None:
            return
        scheme, login = self._digest_login(key)
        where = f"zookeeper://{self.hosts} (login as {key.digest_user})"
        self._call_at(where, self._client.add_auth_async, scheme, login)

    def _acl_of(self, path: str) -> list[ACL] | None:
        """The ACL of the node at ``path`` (``<kind>/<name>``) when this manager creates it:
        None (the client's default: the auth file user's, else open) unless this manager
        holds the topology's key and no auth file is set: then all permissions for the
        topology's digest identity and reading for anyone."""
        if self._credential is not None:
            return None
        key = self._keys.get(path.partition("/")[2])
        if key is None:
            return None
        owner = make_digest_acl(key.digest_user, key.digest_password, all=True)
        return [owner, *READ_ACL_UNSAFE]

    def _create(self, path: str, data: bytes, *, ephemeral: bool = False) -> None:
        """Create the node at ``path`` with its ACL (`_acl_of`); its kind directory, when
        missing, is made with the client's default ACL, never the node's (a directory with
        one topology's ACL would shut the others out).

        Raises:
            NodeExistsError: for the caller to handle.
            StateManagerError: as `_call`, or the directory vanished again and again.
        """
        client, znode = self._client, self._znode(path)
        acl = self._acl_of(path)
        for _ in range(_CREATE_ATTEMPTS):
            try:
                self._call(path, client.create_async, znode, data, acl=acl, ephemeral=ephemeral)
                return
            except NoNodeError:
                self._call(path, client.ensure_path_async, znode.rpartition("/")[0])
        raise StateManagerError(
            f"{self._location(path)}: its directory was deleted each time it was made again "
            f"({_CREATE_ATTEMPTS} times)"
        )

    def _abandon(self, client: Any) -> None:
        """Drop the client of a :meth:`_start` that failed (so that another may be tried)."""
        self._client = None
        self._connected.clear()
        self._sessions.clear()
        with contextlib.suppress(KazooException):
            client.stop()
            client.close()

    def _protect_directories(self, credential: DigestCredential) -> None:
        """Create the root and kind directories (with the credential's ACL, see
        :meth:`_start`) or check that the existing ones let no one else change what is
        under them.

        Raises:
            StateManagerError: one of them grants more than reading to someone else, or the
                credential may not read it (its message names the keys).
        """
        client = self._client
        directories = [(self.root or "/", "")] + [(self._znode(k.value), k.value) for k in Kind]
        for znode, path in directories:
            where = self._location(path) if path else f"zookeeper://{self.hosts}{znode}"
            try:
                acls, _ = self._call_at(where, client.get_acls_async, znode)
            except NoNodeError:
                with contextlib.suppress(NodeExistsError):
                    self._call_at(where, client.create_async, znode, b"", makepath=True)
                continue
            grants = wider_grants(acls, credential)
            if grants:
                raise StateManagerError(
                    f"{where} already exists with an ACL that lets others change or delete "
                    f"the nodes under it ({', '.join(grants)}), so the {credential.describe()} "
                    f"cannot protect them: point {_ROOT_KEY} at a path that does not exist "
                    "yet, or restrict this one to that user (zkCli.sh: addauth digest "
                    f"<user>:<password>, then setAcl -R {znode} auth::cdrwa)"
                )

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
                self._create(path, data)
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
        if client is not self._client:
            return  # the client of a start() that failed
        if self._closing.is_set():
            self._connected.clear()
            return
        if state == KazooState.CONNECTED:
            self._kazoo_log.connected_once = True
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
                self._create(path, data, ephemeral=True)
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
        """The result of ``method(*args, **kwargs)``, a kazoo ``*_async`` call on the node of
        ``path``, made again after a dropped connection or an expired session, within
        :attr:`call_timeout_s` in all.

        Raises:
            NoNodeError, NodeExistsError, BadVersionError: for the caller to handle.
            StateManagerError: anything else (no answer or no connection in time, the
                manager closed, no permission, an unexpected ZooKeeper error).
        """
        return self._call_at(self._location(path), method, *args, **kwargs)

    def _call_at(self, where: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """:meth:`_call`, naming the node ``where`` in its errors."""
        deadline = time.monotonic() + self.call_timeout_s
        while True:
            try:
                return method(*args, **kwargs).get(timeout=max(deadline - time.monotonic(), 0.0))
            except (NoNodeError, NodeExistsError, BadVersionError):
                raise
            except ConnectionClosedError as exc:
                raise StateManagerError(f"{where}: the state manager was closed") from exc
            except NoAuthError:
                raise StateManagerError(f"{where}: {self._refusal()}") from None
            except _RECONNECTABLE as exc:
                if not self._reconnected(deadline):
                    raise StateManagerError(
                        f"{where}: no connection to ZooKeeper within "
                        f"{self.call_timeout_s:g} s ({_SESSION_KEY}; last: "
                        f"{type(exc).__name__})"
                    ) from exc
            except KazooTimeoutError as exc:
                raise StateManagerError(
                    f"{where}: no answer from ZooKeeper within "
                    f"{self.call_timeout_s:g} s ({_SESSION_KEY})"
                ) from exc
            except KazooException as exc:
                detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                raise StateManagerError(f"{where}: the ZooKeeper call failed ({detail})") from exc

    def _refusal(self) -> str:
        """Why ZooKeeper answered NoAuth, and what to do, for a message."""
        if self._credential is None:
            return (
                "ZooKeeper refused the call (no permission): the node is protected by an ACL "
                "and this manager logs in as neither its topology (whose nodes admit the "
                "holders of its key pair, W/keys of the host that submitted it) nor a "
                f"configured user; run this where the topology's key pair is, or set "
                f"{AUTH_FILE_KEY} to the file holding the 'user:password' it was submitted with"
            )
        return (
            "ZooKeeper refused the call (no permission): the node's ACL does not admit the "
            f"{self._credential.describe()}; is the password right, and is it the user the "
            "topology was submitted with?"
        )

    def _reconnected(self, deadline: float) -> bool:
        """Wait until kazoo is connected again; False when ``deadline`` (monotonic) passed
        first or the manager is closing."""
        was_connected = self._connected.is_set()
        if not self._connected.wait(max(deadline - time.monotonic(), 0.0)):
            return False
        if was_connected:  # cut off but not yet told so: do not spin
            self._closing.wait(min(_RETRY_PAUSE_S, max(deadline - time.monotonic(), 0.0)))
        return not self._closing.is_set() and time.monotonic() < deadline


class _KazooLog(logging.LoggerAdapter[logging.Logger]):
    """The logger one manager gives kazoo (kazoo's own ``kazoo.client`` underneath).

    Until the first connection, kazoo logs a warning per failed attempt ("Connection dropped:
    socket connection error: Connection refused", "Cannot resolve ..."), a dozen while a
    server is down. Those go to DEBUG here, the last one kept as :attr:`last_problem` for
    the one error :meth:`ZooKeeperStateManager.start` raises. Once connected, kazoo's
    messages pass unchanged but for the passwords given to :meth:`hide` (the auth file's, the
    topologies' digest passwords), which kazoo's DEBUG line of each request sent would show in
    the login (``Auth(... auth='user:password')``): they read ``***``.

    >>> import io
    >>> out = io.StringIO()
    >>> handler = logging.StreamHandler(out)
    >>> kazoo_logger = logging.getLogger("kazoo.client")
    >>> kazoo_logger.addHandler(handler); kazoo_logger.setLevel(logging.DEBUG)
    >>> log = _KazooLog()
    >>> log.hide("s3cret")
    >>> log.debug("Sending request(xid=%s): %s", 1, "Auth(auth='heron:s3cret')")
    >>> log.warning("Connection dropped: %s", "refused")
    >>> out.getvalue().splitlines(), log.last_problem
    (["Sending request(xid=1): Auth(auth='heron:***')", 'Connection dropped: refused'], \
'Connection dropped: refused')
    >>> kazoo_logger.removeHandler(handler); kazoo_logger.setLevel(logging.NOTSET)
    """

    _NOT_A_REASON = ("Failed connecting to Zookeeper", "Transition to CONNECTING")

    def __init__(self) -> None:
        super().__init__(logging.getLogger("kazoo.client"), {})
        self._secrets: set[str] = set()
        self.connected_once = False
        self.last_problem = ""

    def hide(self, secret: str) -> None:
        """Show ``secret`` as ``***`` in every later message."""
        self._secrets.add(secret)

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        reason = not self.connected_once and logging.WARNING <= level < logging.ERROR
        if reason:
            level = logging.DEBUG
        if not reason and not self.isEnabledFor(level):
            return
        text = str(msg)
        with contextlib.suppress(TypeError, ValueError):
            text = text % args if args else text
        for secret in list(self._secrets):
            text = text.replace(secret, "***")
        if reason and not text.startswith(self._NOT_A_REASON):
            self.last_problem = text
        super().log(level, "%s", text, **kwargs)

    def warn(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """kazoo still calls the deprecated name once."""
        self.log(logging.WARNING, msg, *args, **kwargs)


def _milliseconds(config: Mapping[str, Any], key: str) -> int:
    value = setting(config, key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{key} must be a positive integer (milliseconds), got {value!r}")
    return value
