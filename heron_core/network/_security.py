"""CurveZMQ on every TCP socket: the topology's key pair and the `Transport` that applies it.

One key pair per topology is made at submit (`TopologyKeys.create` in ``W/keys``: a 0700
directory holding the public and secret certificate files, 0600) and shipped to every container
with the code. Every daemon holds the whole pair: a server socket (a stream manager's data port,
the topology manager's server and stats ports) authenticates with it and, through a ZAP handler,
admits only clients that present the same public key; a client socket (a stream manager's
connections to its peers and to the topology manager, the CLI's metrics and state requests)
presents the pair and checks the server's key. A peer without the secret key cannot finish the
handshake, so nothing it sends reaches a handler, let alone an unpickler. Every refused
handshake is logged by the daemon with the port it reached (`Transport.server` watches the
socket's monitor events).

``heron.network.curve.enabled=false`` turns this off for a topology (benchmarks on a trusted
host): the key pair is still made, the sockets are plain TCP and every daemon logs a warning.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     made = TopologyKeys.create(Path(tmp, "keys"))
...     loaded = TopologyKeys.load(Path(tmp, "keys"))
...     oct(Path(tmp, "keys").stat().st_mode & 0o777), loaded == made, len(loaded.public)
('0o700', True, 40)
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils.monitor import recv_monitor_message

from heron_core.errors import ConfigurationError

__all__ = ["CURVE_KEY", "KEYS_DIR", "TopologyKeys", "Transport", "curve_enabled"]

CURVE_KEY = "heron.network.curve.enabled"
KEYS_DIR = "keys"
"""The key pair's directory in a topology's working directory W (shipped to every container)."""

_CERT = "topology"
_ZAP_DOMAIN = "heron"
_WATCH_POLL_MS = 250
_LOG_EVERY_S = 10.0
_REFUSED = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)

log = logging.getLogger(__name__)


def curve_enabled(config: Mapping[str, Any]) -> bool:
    """Whether the topology whose config is ``config`` secures its TCP sockets (the default)."""
    return bool(config.get(CURVE_KEY, True))


@dataclass(frozen=True)
class TopologyKeys:
    """A topology's CURVE key pair (Z85 text, 40 bytes each)."""

    public: bytes
    secret: bytes

    @classmethod
    def create(cls, directory: Path) -> TopologyKeys:
        """Make a fresh pair in ``directory`` (created 0700; the certificate files 0600;
        whatever it held before is replaced) and return it."""
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.chmod(0o700)
        for old in directory.iterdir():
            old.unlink()
        old_mask = os.umask(0o077)
        try:
            public_file, secret_file = zmq.auth.create_certificates(directory, _CERT)
        finally:
            os.umask(old_mask)
        for path in (public_file, secret_file):
            Path(path).chmod(0o600)
        return cls.load(directory)

    @classmethod
    def load(cls, directory: Path) -> TopologyKeys:
        """The pair stored in ``directory`` by `create`.

        Raises:
            ConfigurationError: the files are missing, unreadable, or readable by others.
        """
        secret_file = directory / f"{_CERT}.key_secret"
        try:
            mode = secret_file.stat().st_mode
            if mode & 0o077:
                raise ConfigurationError(
                    f"the topology's secret key {secret_file} is readable by other users "
                    f"(mode {oct(mode & 0o777)}); it must be 0600"
                )
            public, secret = zmq.auth.load_certificate(secret_file)
        except (OSError, ValueError) as exc:
            raise ConfigurationError(
                f"cannot read the topology's key pair in {directory}: {exc}"
            ) from exc
        if secret is None:
            raise ConfigurationError(f"{secret_file} holds no secret key")
        return cls(public, secret)


class _Throttle:
    """True at most once per `_LOG_EVERY_S`: a peer that retries must not flood the log."""

    def __init__(self) -> None:
        self._last = -_LOG_EVERY_S

    def due(self) -> bool:
        now = time.monotonic()
        if now - self._last < _LOG_EVERY_S:
            return False
        self._last = now
        return True


class _OnlyTopology:
    """The ZAP credentials check: admits the topology's own public key, logs anyone else."""

    def __init__(self, public: bytes, owner: str) -> None:
        self._public = public  # ZAP hands the client's key over in Z85, as stored
        self._owner = owner
        self._throttle = _Throttle()

    def callback(self, domain: str, key: bytes) -> bool:
        if key == self._public:
            return True
        if self._throttle.due():
            log.warning("%s: refused a CURVE client with a foreign key", self._owner)
        return False


class _HandshakeWatch(threading.Thread):
    """Logs every refused handshake on one server socket (from its monitor events)."""

    def __init__(self, monitor: zmq.Socket[bytes], owner: str, what: str) -> None:
        super().__init__(name=f"handshakes-{what}", daemon=True)
        self._monitor = monitor
        self._owner = owner
        self._what = what
        self._stopping = threading.Event()
        self._throttle = _Throttle()
        self.refused = 0

    def run(self) -> None:
        try:
            while not self._stopping.is_set():
                if not self._monitor.poll(_WATCH_POLL_MS):
                    continue
                event = recv_monitor_message(self._monitor)
                if not event["event"] & _REFUSED:
                    continue
                self.refused += 1
                if self._throttle.due():
                    log.warning(
                        "%s: refused a connection to its %s (%s): the peer did not complete "
                        "the CURVE handshake with the topology's key; nothing it sent was read "
                        "(%d refused so far)",
                        self._owner,
                        self._what,
                        event["endpoint"].decode(errors="replace"),
                        self.refused,
                    )
        except zmq.ZMQError as exc:  # the context is going away
            log.debug("%s: handshake watch of %s ended: %s", self._owner, self._what, exc)
        finally:
            self._monitor.close(linger=0)

    def stop(self) -> None:
        self._stopping.set()
        self.join()


class Transport:
    """How one process secures its TCP sockets: with ``keys`` (CURVE), or not at all (None).

    A process makes one `Transport` per zmq context, calls `server` on each socket it binds on
    TCP and `client` on each it connects over TCP, and `close`s it before terminating the
    context (it owns the context's ZAP handler and the handshake watchers).

    Args:
        context: the process's zmq context.
        keys: the topology's key pair, or None for plain TCP (``heron.network.curve.enabled``
            is false; a warning is logged once per server socket).
        owner: who this process is, for log lines (``"topology 'wc' stmgr-1"``).
    """

    def __init__(
        self, context: zmq.Context[zmq.Socket[bytes]], keys: TopologyKeys | None, owner: str
    ) -> None:
        self._context = context
        self.keys = keys
        self._owner = owner
        self._auth: ThreadAuthenticator | None = None
        self._watches: list[_HandshakeWatch] = []

    @classmethod
    def for_topology(
        cls,
        context: zmq.Context[zmq.Socket[bytes]],
        config: Mapping[str, Any],
        working_dir: Path,
        owner: str,
    ) -> Transport:
        """The transport of the topology whose config is ``config`` and whose working
        directory (holding ``keys/``) is ``working_dir``.

        Raises:
            ConfigurationError: CURVE is on and the key pair cannot be read.
        """
        if not curve_enabled(config):
            return cls(context, None, owner)
        return cls(context, TopologyKeys.load(working_dir / KEYS_DIR), owner)

    @property
    def secure(self) -> bool:
        """Whether sockets get CURVE."""
        return self.keys is not None

    def server(self, sock: zmq.Socket[bytes], what: str) -> zmq.Socket[bytes]:
        """Make ``sock`` (not yet bound) a CURVE server that admits only the topology's key,
        and log every refused handshake on it; ``what`` names it (``"data port"``)."""
        if self.keys is None:
            log.warning(
                "%s: its %s is plain TCP (%s=false): any process that reaches it can send "
                "it messages",
                self._owner,
                what,
                CURVE_KEY,
            )
            return sock
        if self._auth is None:
            self._auth = ThreadAuthenticator(self._context, log=log.getChild("zap"))
            self._auth.start()
            admit = _OnlyTopology(self.keys.public, self._owner)
            self._auth.configure_curve_callback(_ZAP_DOMAIN, admit)
        sock.curve_server = True
        sock.curve_publickey = self.keys.public
        sock.curve_secretkey = self.keys.secret
        sock.zap_domain = _ZAP_DOMAIN.encode()
        watch = _HandshakeWatch(sock.get_monitor_socket(_REFUSED), self._owner, what)
        watch.start()
        self._watches.append(watch)
        return sock

    def client(self, sock: zmq.Socket[bytes]) -> zmq.Socket[bytes]:
        """Make ``sock`` (not yet connected) present the topology's key pair and accept only
        a server that holds it."""
        if self.keys is not None:
            sock.curve_serverkey = self.keys.public
            sock.curve_publickey = self.keys.public
            sock.curve_secretkey = self.keys.secret
        return sock

    @property
    def refused(self) -> int:
        """Handshakes refused so far on this process's server sockets."""
        return sum(w.refused for w in self._watches)

    def close(self) -> None:
        """Stop the handshake watchers and the ZAP handler. Idempotent; call before the
        context is terminated."""
        for watch in self._watches:
            watch.stop()
        self._watches.clear()
        if self._auth is not None:
            with contextlib.suppress(zmq.ZMQError):
                self._auth.stop()
            self._auth = None
