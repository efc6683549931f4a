"""CurveZMQ on every TCP socket: the topology's key pair and the `Transport` that applies it.

One key pair per topology is made at submit (`TopologyKeys.create` in ``W/keys``: a 0700
directory holding the public and secret certificate files, 0600) and shipped to every container
with the code. Every daemon holds the whole pair: a server socket (a stream manager's data port,
the topology manager's server and stats ports) authenticates with it and, through a ZAP handler,
admits only clients that present the same public key; a client socket (a stream manager's
connections to its peers and to the topology manager, the CLI's metrics and state requests)
presents the pair and checks the server's key. A peer without the secret key cannot finish the
handshake, so nothing it sends reaches a handler, let alone an unpickler. Every refused
handshake is logged by the daemon with the port it reached, and every connection's end with
the peer's address (`Transport.server` watches the socket's monitor events). Every socket a
`Transport` secures reads no frame over ``heron.network.max.frame.bytes``: zmq drops a peer
that announces a bigger one before allocating its buffer.

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
import hashlib
import hmac
import logging
import os
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zmq
import zmq.auth

from heron_core.config import setting
from heron_core.errors import ConfigurationError
from heron_core.network._framing import DEFAULT_MAX_FRAME_BYTES, MAX_FRAME_KEY, max_frame_bytes

if TYPE_CHECKING:
    from zmq.auth.thread import ThreadAuthenticator

__all__ = ["CURVE_KEY", "KEYS_DIR", "TopologyKeys", "Transport", "curve_enabled"]

CURVE_KEY = "heron.network.curve.enabled"
KEYS_DIR = "keys"
"""The key pair's directory in a topology's working directory W (shipped to every container)."""

_CERT = "topology"
_HKDF_SALT = b"heron topology keys"
_ZAP_DOMAIN = "heron"
_WATCH_POLL_MS = 250
_LOG_EVERY_S = 10.0
_LINES_PER_WINDOW = 20
_WATCHED = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED
_REFUSED = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)

log = logging.getLogger(__name__)


def curve_enabled(config: Mapping[str, Any]) -> bool:
    """Whether the topology whose config is ``config`` secures its TCP sockets (the default)."""
    return bool(setting(config, CURVE_KEY))


@dataclass(frozen=True)
class TopologyKeys:
    """A topology's CURVE key pair (Z85 text, 40 bytes each). Its ``repr`` leaves the secret
    out, so a log line or a traceback that shows the pair never shows the secret.

    >>> TopologyKeys(b"p" * 40, b"s" * 40)
    TopologyKeys(public=b'pppppppppppppppppppppppppppppppppppppppp')
    """

    public: bytes
    secret: bytes = field(repr=False)

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

    def derive(self, label: bytes) -> bytes:
        """A 32-byte key for one use of this pair, named by ``label`` (``b"heron state v1"``):
        HKDF-SHA256 (RFC 5869) of the secret key with ``label`` as its info, so that no two
        uses share a key and none reveals the secret.

        >>> keys = TopologyKeys(b"p" * 40, b"s" * 40)
        >>> one, two = keys.derive(b"heron state v1"), keys.derive(b"heron checkpoint v1")
        >>> len(one), one == two, one == keys.derive(b"heron state v1")
        (32, False, True)
        """
        # extract, then the first (and only) block of expand: 32 bytes is one SHA-256 output
        pseudo_random = hmac.new(_HKDF_SALT, self.secret, hashlib.sha256).digest()
        return hmac.new(pseudo_random, label + b"\x01", hashlib.sha256).digest()


class _Throttle:
    """True at most ``burst`` times per `_LOG_EVERY_S`: a peer that retries must not flood
    the log."""

    def __init__(self, burst: int = 1) -> None:
        self._burst = burst
        self._start = -_LOG_EVERY_S
        self._count = 0

    def due(self) -> bool:
        now = time.monotonic()
        if now - self._start >= _LOG_EVERY_S:
            self._start, self._count = now, 0
        self._count += 1
        return self._count <= self._burst


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


def _peer_of(fd: int) -> str:
    """``host:port`` of the TCP connection on descriptor ``fd`` (zmq's, looked at through a
    duplicate), or a placeholder when it is already gone."""
    try:
        with socket.socket(fileno=os.dup(fd)) as view:
            address = view.getpeername()
    except OSError:
        return f"an unknown peer (descriptor {fd})"
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)


class _ConnectionWatch(threading.Thread):
    """Logs, from one server socket's monitor events, every refused handshake and the start
    and end of every connection, naming the peer (its address, read when the connection was
    accepted: a connection that ends before this thread reads that event is from "an unknown
    peer").

    A connection zmq drops itself (a frame over the size limit, bytes that are not ZMTP) and
    one the peer closes give the same event, so the log line names both causes.
    """

    def __init__(
        self,
        monitor: zmq.Socket[bytes],
        owner: str,
        what: str,
        max_frame_bytes: int,
        secure: bool,
    ) -> None:
        super().__init__(name=f"connections-{what}", daemon=True)
        # imported here, as ThreadAuthenticator is in Transport.server: pyzmq's monitor module
        # imports zmq.asyncio, hence asyncio, which a process with no server socket never needs
        from zmq.utils.monitor import recv_monitor_message

        self._receive = recv_monitor_message
        self._monitor = monitor
        self._handshake = "CURVE handshake with the topology's key" if secure else "ZMTP handshake"
        self._owner = owner
        self._what = what
        self._limit = max_frame_bytes
        self._stopping = threading.Event()
        self._throttle = _Throttle()
        self._lines = _Throttle(burst=_LINES_PER_WINDOW)
        self._peers: dict[int, str] = {}
        self.refused = 0
        self.ended = 0

    def run(self) -> None:
        try:
            while not self._stopping.is_set():
                if not self._monitor.poll(_WATCH_POLL_MS):
                    continue
                self.on_event(self._receive(self._monitor))
        except zmq.ZMQError as exc:  # the context is going away
            log.debug("%s: connection watch of %s ended: %s", self._owner, self._what, exc)
        finally:
            self._monitor.close(linger=0)

    def on_event(self, event: Mapping[str, Any]) -> None:
        """Note one monitor event (``event``, ``value`` (a descriptor), ``endpoint``)."""
        kind, fd = event["event"], int(event["value"])
        if kind & zmq.EVENT_ACCEPTED:
            peer = self._peers[fd] = _peer_of(fd)
            if self._lines.due():
                log.info(
                    "%s: accepted a connection from %s to its %s", self._owner, peer, self._what
                )
        elif kind & _REFUSED:
            self.refused += 1
            if self._throttle.due():
                log.warning(
                    "%s: refused a connection to its %s (%s): the peer did not complete the "
                    "%s; nothing it sent was read (%d refused so far)",
                    self._owner,
                    self._what,
                    bytes(event["endpoint"]).decode(errors="replace"),
                    self._handshake,
                    self.refused,
                )
        elif kind & zmq.EVENT_DISCONNECTED:
            self.ended += 1
            peer = self._peers.pop(fd, f"an unknown peer (descriptor {fd})")
            if self._lines.due():
                log.info(
                    "%s: the connection from %s to its %s ended: closed by the peer, or "
                    "dropped here for a frame over %d bytes (%s) or bytes that are not ZMTP "
                    "(%d ended so far; at most %d lines about connections per %g s)",
                    self._owner,
                    peer,
                    self._what,
                    self._limit,
                    MAX_FRAME_KEY,
                    self.ended,
                    _LINES_PER_WINDOW,
                    _LOG_EVERY_S,
                )

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
        max_frame_bytes: the largest frame every socket it secures reads (zmq drops a peer
            announcing a bigger one before allocating it); ``heron.network.max.frame.bytes``.
    """

    def __init__(
        self,
        context: zmq.Context[zmq.Socket[bytes]],
        keys: TopologyKeys | None,
        owner: str,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        self._context = context
        self.keys = keys
        self._owner = owner
        self.max_frame_bytes = max_frame_bytes
        self._auth: ThreadAuthenticator | None = None
        self._watches: list[_ConnectionWatch] = []

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
        limit = max_frame_bytes(config)
        if not curve_enabled(config):
            return cls(context, None, owner, limit)
        return cls(context, TopologyKeys.load(working_dir / KEYS_DIR), owner, limit)

    @property
    def secure(self) -> bool:
        """Whether sockets get CURVE."""
        return self.keys is not None

    def server(self, sock: zmq.Socket[bytes], what: str) -> zmq.Socket[bytes]:
        """Make ``sock`` (not yet bound) a CURVE server that admits only the topology's key
        and reads no frame over `max_frame_bytes`, and log every refused handshake and every
        connection's end (with the peer) on it; ``what`` names it (``"data port"``)."""
        sock.setsockopt(zmq.MAXMSGSIZE, self.max_frame_bytes)
        watch = _ConnectionWatch(
            sock.get_monitor_socket(_WATCHED | _REFUSED),
            self._owner,
            what,
            self.max_frame_bytes,
            self.keys is not None,
        )
        watch.start()
        self._watches.append(watch)
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
            # imported here: a process with no CURVE server (a metrics manager, an executor)
            # never loads pyzmq's authenticator and the asyncio it imports (about 30 ms)
            from zmq.auth.thread import ThreadAuthenticator

            self._auth = ThreadAuthenticator(self._context, log=log.getChild("zap"))
            self._auth.start()
            admit = _OnlyTopology(self.keys.public, self._owner)
            self._auth.configure_curve_callback(_ZAP_DOMAIN, admit)
        sock.curve_server = True
        sock.curve_publickey = self.keys.public
        sock.curve_secretkey = self.keys.secret
        sock.zap_domain = _ZAP_DOMAIN.encode()
        return sock

    def client(self, sock: zmq.Socket[bytes]) -> zmq.Socket[bytes]:
        """Make ``sock`` (not yet connected) present the topology's key pair, accept only a
        server that holds it, and read no frame over `max_frame_bytes`."""
        sock.setsockopt(zmq.MAXMSGSIZE, self.max_frame_bytes)
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
