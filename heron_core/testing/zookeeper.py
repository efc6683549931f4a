"""A real, throw-away ZooKeeper server for tests.

:class:`ZooKeeperServer` runs Debian's ZooKeeper (``apt-get install zookeeper``: the jars under
``/usr/share/java`` and Java) as ``java ... QuorumPeerMain zoo.cfg``, standalone, on a free
loopback port with a temporary data directory and the admin server disabled.

>>> with ZooKeeperServer() as server:
...     server.connection_string.startswith("127.0.0.1:")
True

:meth:`ZooKeeperServer.stop_process` and a second :meth:`~ZooKeeperServer.start` restart the
server on the same port with the same data; :meth:`ZooKeeperServer.expire_session` ends a
client's session as kazoo's own test harness does, and :meth:`ZooKeeperServer.session_of`
finds the session another process holds.
"""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Self

import psutil
from kazoo.client import KazooClient

from heron_core.network import free_port

__all__ = [
    "INSTALL_HINT",
    "ZOOKEEPER_JAR",
    "ZooKeeperServer",
    "ZooKeeperServerError",
    "session_password",
]

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
"""Where Debian's ``libzookeeper-java`` puts the server (its manifest lists the other jars)."""

# log4j 1.2 and its slf4j binding (dependencies of libzookeeper-java): the server logs
# nothing without them.
_LOGGING_JARS = (Path("/usr/share/java/slf4j-log4j12.jar"), Path("/usr/share/java/log4j-1.2.jar"))

INSTALL_HINT = (
    "install ZooKeeper and Java with `apt-get install zookeeper` "
    "(Debian/Ubuntu; CI's .ci/run does it)"
)

_LOG4J = """\
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] %m%n
"""


class ZooKeeperServerError(RuntimeError):
    """The server cannot start: ZooKeeper or Java is missing, or it died or never served."""


class ZooKeeperServer:
    """One standalone ZooKeeper server process, started by :meth:`start`.

    ``tickTime`` is 500 ms, so sessions may be as short as 1 s (and at most 60 s).
    :meth:`stop` always ends the process (SIGTERM, then SIGKILL) and removes its files;
    :meth:`stop_process` only ends the process, so that :meth:`start` restarts it.

    Args:
        java: the ``java`` executable; default: the one on ``PATH``.
        zookeeper_jar: the server jar; default :data:`ZOOKEEPER_JAR`.
        startup_timeout_s: how long :meth:`start` waits for the server to serve.
        host: the local address the client port binds (and the connection string names);
            another host's processes reach the server only when it is not loopback.
    """

    def __init__(
        self,
        *,
        java: str | None = None,
        zookeeper_jar: Path = ZOOKEEPER_JAR,
        startup_timeout_s: float = 60.0,
        host: str = "127.0.0.1",
    ) -> None:
        self._java = java or shutil.which("java")
        self._host = host
        self._jar = zookeeper_jar
        self._startup_timeout_s = startup_timeout_s
        self._port = 0
        self._directory: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._final_log = ""

    @property
    def connection_string(self) -> str:
        """``<host>:<port>`` (``127.0.0.1:<port>`` by default), for
        ``heron.statemgr.connection.string`` or kazoo."""
        return f"{self._host}:{self._port}"

    @property
    def restart_connection_string(self) -> str:
        """`connection_string` naming the server twice, for a client that must keep its
        session through :meth:`stop_process` and :meth:`start`.

        The server binds its port before it runs; a reconnection landing in that window gets
        no answer (ZooKeeper 3.8 fails to close it: a NullPointerException in its log), and
        kazoo, like ZooKeeper's Java client, waits for a handshake for the session timeout
        divided by the number of hosts: the whole session with one. Named twice, that wait is
        half of it and the client connects again in time, as with a two-server ensemble."""
        return f"{self.connection_string},{self.connection_string}"

    @property
    def port(self) -> int:
        """The client port (0 before :meth:`start`)."""
        return self._port

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs (None before :meth:`start` and after a
        stop)."""
        return None if self._process is None else self._process.pid

    def start(self) -> None:
        """Start the server and return once it serves requests.

        After :meth:`stop_process`, the server starts again on the same port with the same
        data directory (its znodes and sessions; a session whose client reconnects within its
        timeout lives on). Otherwise it gets a free port and an empty data directory.

        Raises:
            ZooKeeperServerError: Java or ZooKeeper is not installed (the message says how to
                install them), or the server exited or did not serve within the startup
                timeout (the message holds its log).
        """
        missing = [
            what
            for what, found in (("java", self._java), (str(self._jar), self._jar.is_file()))
            if not found
        ]
        if missing:
            raise ZooKeeperServerError(
                f"cannot start a ZooKeeper server: {' and '.join(missing)} not found; "
                f"{INSTALL_HINT}"
            )
        assert self._java is not None
        if self._process is not None and self._process.poll() is None:
            raise ZooKeeperServerError(f"ZooKeeper on port {self._port} is already running")
        self.stop_process()  # one that died on its own: keep its port and data
        if self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="heron-zookeeper-"))
            self._configure(self._directory)
        conf = self._directory / "conf"
        jars = [self._jar, *(jar for jar in _LOGGING_JARS if jar.is_file())]
        self._log = open(self._directory / "zookeeper.log", "ab")  # noqa: SIM115 (stop closes)
        self._process = subprocess.Popen(
            [
                self._java,
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                "-cp",
                ":".join(str(path) for path in (conf, *jars)),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                str(conf / "zoo.cfg"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        try:
            self._wait_until_serving(self._process)
        except BaseException:
            self.stop()
            raise

    def _configure(self, directory: Path) -> None:
        """Write the config of a new server under ``directory`` and pick its port."""
        conf, data = directory / "conf", directory / "data"
        conf.mkdir()
        data.mkdir()
        self._port = free_port(self._host)
        (conf / "zoo.cfg").write_text(
            f"tickTime=500\ndataDir={data}\nclientPort={self._port}\n"
            f"clientPortAddress={self._host}\nmaxClientCnxns=0\n"
            "minSessionTimeout=1000\nmaxSessionTimeout=60000\n"
            "admin.enableServer=false\n4lw.commands.whitelist=srvr,ruok,cons\n"
            "forceSync=no\npreAllocSize=1024\n"
        )
        (conf / "log4j.properties").write_text(_LOG4J)

    def stop_process(self, sig: int = signal.SIGTERM) -> None:
        """End the server process by pid (``sig``, then SIGKILL after 10 s) and wait for it,
        keeping its port, data directory and log: :meth:`start` restarts it. Idempotent."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        """Kill the server by pid (SIGTERM, then SIGKILL after 10 s) and remove its files.

        Idempotent; :meth:`log_text` still answers afterwards.
        """
        self.stop_process()
        if self._directory is not None:
            self._final_log = self.log_text()
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def log_text(self) -> str:
        """Everything the server has logged so far."""
        if self._directory is None:
            return self._final_log
        try:
            return (self._directory / "zookeeper.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def session_of(self, pid: int) -> int:
        """The id of the ZooKeeper session that process ``pid`` holds on this server.

        Found from outside the process: the local port of its TCP connection to the client
        port, looked up in the server's ``cons`` four-letter word (which names each
        connection's session).

        Raises:
            ZooKeeperServerError: the process holds no session here, or more than one.
        """
        ports = {
            connection.laddr.port
            for connection in psutil.Process(pid).net_connections(kind="tcp")
            if connection.raddr
            and connection.raddr.port == self._port
            and connection.status == psutil.CONN_ESTABLISHED
        }
        sessions = {
            int(match["sid"], 16)
            for match in _CONNECTION.finditer(self._four_letter_word(b"cons").decode())
            if int(match["port"]) in ports and match["sid"]
        }
        if len(sessions) != 1:
            raise ZooKeeperServerError(
                f"process {pid} holds {len(sessions)} sessions on ZooKeeper port {self._port} "
                f"(its connections from ports {sorted(ports)}), expected one"
            )
        return sessions.pop()

    def expire_session(self, client_id: tuple[int, bytes] | int) -> None:
        """Make the server end a client's session as if the client had vanished.

        A second client joins the session and closes it, as kazoo's test harness does: the
        server deletes the session's ephemeral nodes, and the original client learns on its
        next reconnect that its session expired.

        Args:
            client_id: kazoo's ``KazooClient.client_id`` (session id and password), or just
                the session id (an ephemeral node's ``ephemeralOwner``: the session of another
                process), whose password is then derived as the server does
                (:func:`session_password`).
        """
        if isinstance(client_id, int):
            client_id = (client_id, session_password(client_id))
        twin = KazooClient(self.connection_string, client_id=client_id)
        try:
            twin.start(timeout=self._startup_timeout_s)
            twin.stop()
        finally:
            twin.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _wait_until_serving(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self._startup_timeout_s
        while b"Mode: standalone" not in self._four_letter_word(b"srvr"):
            try:
                code = process.wait(timeout=0.1)  # doubles as the pause between probes
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    raise ZooKeeperServerError(
                        f"ZooKeeper on port {self._port} did not serve within "
                        f"{self._startup_timeout_s:g} s; its log:\n{self.log_text()}"
                    ) from None
            else:
                raise ZooKeeperServerError(
                    f"ZooKeeper exited with code {code} before serving; its log:\n{self.log_text()}"
                )

    def _four_letter_word(self, word: bytes) -> bytes:
        try:
            with socket.create_connection((self._host, self._port), timeout=2) as connection:
                connection.sendall(word)
                return b"".join(iter(lambda: connection.recv(4096), b""))
        except OSError:
            return b""


# One line of `cons`: " /127.0.0.1:43414[1](queued=0,recved=1,sent=1,sid=0x10000b82da60000,...)"
_CONNECTION = re.compile(
    r"^\s*/[^\s\[]+:(?P<port>\d+)\[\d+\]\((?:[^)]*?sid=0x(?P<sid>[0-9a-f]+))?", re.M
)

_PASSWORD_SECRET = 0xB3415C00
_JAVA_RANDOM_MULTIPLIER = 0x5DEECE66D
_JAVA_RANDOM_MASK = (1 << 48) - 1


def session_password(session_id: int) -> bytes:
    """The password the ZooKeeper server gave session ``session_id``.

    The server does not draw it at random: ``ZooKeeperServer.generatePasswd`` fills 16 bytes
    from ``java.util.Random(session_id ^ 0xB3415C00)`` (so that any server of an ensemble can
    check it; unchanged from ZooKeeper 3.0 to 3.9). Knowing a session's id, which every
    ephemeral node shows as its ``ephemeralOwner``, a test can therefore join that session
    from outside the process that owns it (see :meth:`ZooKeeperServer.expire_session`)
    without that process disclosing anything.

    >>> session_password(0x10000ACED2E0000).hex()  # what a ZooKeeper 3.8 server answered
    '1074ddea5dfce5a16ecd64836e9486dd'
    """
    seed = ((session_id ^ _PASSWORD_SECRET) ^ _JAVA_RANDOM_MULTIPLIER) & _JAVA_RANDOM_MASK
    password = bytearray()
    while len(password) < 16:  # java.util.Random.nextBytes: little-endian ints of next(32)
        seed = (seed * _JAVA_RANDOM_MULTIPLIER + 0xB) & _JAVA_RANDOM_MASK
        word = seed >> 16
        for _ in range(min(4, 16 - len(password))):
            password.append(word & 0xFF)
            word >>= 8
    return bytes(password)
