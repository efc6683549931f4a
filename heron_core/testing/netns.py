"""Throw-away "hosts" for tests that run a topology across machines: Linux network namespaces.

:class:`HostNetwork` makes N network namespaces, each with ``lo`` up and one address in
TEST-NET-1 (``192.0.2.0/24``, RFC 5737: documentation only), and joins them to the root
namespace with a Linux bridge that holds the gateway address. When the kernel cannot make a
bridge, it falls back to one veth pair per namespace with host routes through the root
namespace (IP forwarding on there while the network exists, restored after). No other address
range is touched. The machine itself may sit in TEST-NET-1 (the CI VMs do: ``eth0`` is
``192.0.2.2/24`` behind ``192.0.2.1``), so the network takes a block of it that no address,
route or neighbour of the root namespace uses (the highest free /28, neither the first nor
the last); its routes are more specific than the machine's ``/24``.

Processes run on a host with ``ip netns exec NAME ...`` (:meth:`Host.command`); they share the
machine's file systems and pid namespace, so a test still finds and ends them by pid. Needs
root and iproute2 (:func:`netns_unavailable`). Every name starts with :data:`PREFIX` and the
creating process's pid, so that :func:`remove_leftovers` can clear what a crashed earlier run
left (its namespaces, the processes still inside them, its links) without touching a live
run; a lock file serialises the networks of concurrent test sessions.

>>> host = Host("hrn41-0-a", "192.0.2.225")
>>> host.command(["hostname", "-I"])
['ip', 'netns', 'exec', 'hrn41-0-a', 'hostname', '-I']
>>> _owner_pid("hrn41-0br"), _owner_pid("eth0")
(41, None)
>>> str(free_block(3, [ipaddress.IPv4Network("192.0.2.2/32")]))
'192.0.2.224/28'
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import ipaddress
import itertools
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, Self, TypeVar

import psutil

__all__ = [
    "PREFIX",
    "SUBNET",
    "Host",
    "HostNetwork",
    "Mode",
    "NetworkError",
    "free_block",
    "listening_addresses",
    "namespace_of",
    "netns_unavailable",
    "remove_leftovers",
]

SUBNET = ipaddress.IPv4Network("192.0.2.0/24")
"""TEST-NET-1, the only range the hosts' and the gateway's addresses come from."""

PREFIX = "hrn"
"""How every namespace and link name of a :class:`HostNetwork` starts (then the pid)."""

Mode = Literal["auto", "bridge", "veth"]
"""How a :class:`HostNetwork` joins its hosts (see its ``mode`` argument)."""

_NETNS_DIR = Path("/run/netns")
_LOCK_FILE = Path("/run/lock/heron-test-netns.lock")
_IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")
_CLONE_NEWNET = 0x40000000
_OWNER = re.compile(rf"^{PREFIX}(\d+)-")
_PROBE_TIMEOUT_S = 10.0
_KILL_WAIT_S = 10.0
_MAX_HOSTS = 12
_IFNAMSIZ = 15
_MIN_BLOCK_PREFIX = 28
_sequence = itertools.count()

T = TypeVar("T")


class NetworkError(RuntimeError):
    """The network cannot be made or does not carry traffic; the message says which step."""


def netns_unavailable() -> str | None:
    """Why this machine cannot make a :class:`HostNetwork` (not root, no ``ip``), or None."""
    if os.geteuid() != 0:
        return "network namespaces need root (this test runs as root in CI)"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    return None


@dataclass(frozen=True)
class Host:
    """One network namespace of a :class:`HostNetwork`: a host of the test network.

    Attributes:
        name: the namespace's name (``ip netns list``).
        address: its only address besides loopback, in :data:`SUBNET`.
    """

    name: str
    address: str

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run on this host: ``ip netns exec <name> <argv>`` (``ip`` execs the
        command, so the process started is ``argv``'s own, with its pid)."""
        return ["ip", "netns", "exec", self.name, *argv]

    def pids(self) -> list[int]:
        """The pids of every live process in this namespace (``ip netns pids``), sorted."""
        result = _ip("netns", "pids", self.name, check=False)
        pids = (int(word) for word in result.stdout.split() if word.isdigit())
        return sorted(pid for pid in pids if _alive(pid))

    def socket(self, kind: socket.SocketKind = socket.SOCK_STREAM) -> socket.socket:
        """A new IPv4 socket in this namespace (a socket keeps the namespace it was made in,
        whichever thread uses it)."""
        return _in_namespace(self.name, lambda: socket.socket(socket.AF_INET, kind))


class HostNetwork:
    """``hosts`` network namespaces joined to the root namespace, made by :meth:`start`.

    Host ``i`` (0-based) is namespace ``<tag>-<letter>`` (``hrn<pid>-<n>-a``, ``-b``, ...)
    with the address ``i + 1`` of the block :meth:`start` picks (:func:`free_block`); the
    root namespace has the block's last usable address (:attr:`gateway`). :meth:`start`
    checks that every host reaches the gateway and every other host (TCP) before returning.
    :meth:`stop` ends any process still in a namespace (SIGKILL, by pid) and removes the
    namespaces, links and lock, even after a partial start.

    Args:
        hosts: how many namespaces (1 to 12).
        mode: ``"bridge"``, ``"veth"`` (pairs with host routes, IP forwarding on in the root
            namespace), or ``"auto"``: a bridge when the kernel makes one, else veth pairs.
        lock_timeout_s: how long :meth:`start` waits for another session's network to go.
    """

    def __init__(
        self, hosts: int = 2, *, mode: Mode = "auto", lock_timeout_s: float = 240.0
    ) -> None:
        if not 1 <= hosts <= _MAX_HOSTS:
            raise ValueError(f"hosts must be between 1 and {_MAX_HOSTS}, got {hosts}")
        self._count = hosts
        self._tag = f"{PREFIX}{os.getpid()}-{next(_sequence)}"
        if len(f"{self._tag}v{hosts - 1}") > _IFNAMSIZ:
            raise ValueError(f"link names would pass {_IFNAMSIZ} characters: {self._tag}")
        self._requested: Mode = mode
        self._mode: Mode = mode
        self._lock_timeout_s = lock_timeout_s
        self._lock: IO[bytes] | None = None
        self._forward_before: str | None = None
        self._links: list[str] = []
        self._made: list[Host] = []
        self._block: ipaddress.IPv4Network | None = None
        self._hosts: tuple[Host, ...] = ()

    @property
    def hosts(self) -> tuple[Host, ...]:
        """The hosts, in order (empty before :meth:`start`)."""
        return self._hosts

    @property
    def block(self) -> ipaddress.IPv4Network:
        """The block of :data:`SUBNET` the network uses.

        Raises:
            NetworkError: not started.
        """
        if self._block is None:
            raise NetworkError(f"the host network {self._tag} is not started")
        return self._block

    @property
    def gateway(self) -> str:
        """The root namespace's address on the network (the bridge's, or every veth's)."""
        return str(self.block.broadcast_address - 1)

    @property
    def mode(self) -> Mode:
        """``"bridge"`` or ``"veth"`` once started (what ``"auto"`` chose)."""
        return self._mode

    @property
    def tag(self) -> str:
        """How every namespace and link name of this network starts."""
        return self._tag

    def start(self) -> None:
        """Make the namespaces and links, and check that every host reaches every other.

        Raises:
            NetworkError: no free block, an ``ip`` command failed (the message holds its
                output), or a host cannot reach the gateway or another host.
        """
        self._take_lock()
        try:
            self._block = free_block(self._count)
            self._hosts = tuple(
                Host(f"{self._tag}-{_letters(i)}", str(self._block.network_address + i + 1))
                for i in range(self._count)
            )
            if self._requested in ("auto", "bridge"):
                try:
                    self._make_bridge()
                    self._mode = "bridge"
                except NetworkError:
                    if self._requested == "bridge":
                        raise
                    self._mode = "veth"
                    for link in self._links:
                        _ip("link", "del", link, check=False)
                    self._links = []
            if self._mode == "veth":
                self._forward_before = _IP_FORWARD.read_text().strip()
                _IP_FORWARD.write_text("1\n")
            for index, host in enumerate(self._hosts):
                self._add_host(index, host)
            self.check()
        except BaseException:
            self.stop()
            raise

    def _take_lock(self) -> None:
        _LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
        lock = open(_LOCK_FILE, "a+b")  # noqa: SIM115 (stop closes it)
        deadline = time.monotonic() + self._lock_timeout_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    lock.close()
                    raise NetworkError(
                        f"another test session held {_LOCK_FILE} (its {SUBNET} test network) "
                        f"for {self._lock_timeout_s:g} s"
                    ) from None
                time.sleep(0.2)
        self._lock = lock

    def _make_bridge(self) -> None:
        bridge = f"{self._tag}br"
        _ip("link", "add", bridge, "type", "bridge")
        self._links.append(bridge)
        _no_ipv6_link_local(bridge)
        _ip("addr", "add", f"{self.gateway}/{self.block.prefixlen}", "dev", bridge)
        _ip("link", "set", bridge, "up")

    def _add_host(self, index: int, host: Host) -> None:
        outside, inside = f"{self._tag}v{index}", f"{self._tag}n{index}"
        gateway, prefix = self.gateway, self.block.prefixlen
        _ip("netns", "add", host.name)
        self._made.append(host)
        _ip("-n", host.name, "link", "set", "lo", "up")
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", host.name)
        self._links.append(outside)
        _no_ipv6_link_local(outside)
        _no_ipv6_link_local(inside, host.name)
        if self._mode == "bridge":
            _ip("link", "set", outside, "master", f"{self._tag}br")
            _ip("-n", host.name, "addr", "add", f"{host.address}/{prefix}", "dev", inside)
        else:
            _ip("addr", "add", f"{gateway}/32", "dev", outside)
            _ip("-n", host.name, "addr", "add", f"{host.address}/32", "dev", inside)
        _ip("link", "set", outside, "up")
        _ip("-n", host.name, "link", "set", inside, "up")
        if self._mode == "veth":
            _ip("route", "add", f"{host.address}/32", "dev", outside)
            _ip("-n", host.name, "route", "add", f"{gateway}/32", "dev", inside)
            _ip("-n", host.name, "route", "add", str(self.block), "via", gateway, "dev", inside)

    def check(self) -> None:
        """Check over TCP that the root namespace and every host reach every host, and every
        host reaches the gateway.

        Raises:
            NetworkError: naming the pair that cannot connect.
        """
        sources: list[tuple[str, Callable[[], socket.socket]]] = [
            ("the root namespace", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        ]
        sources += [(f"host {h.name}", h.socket) for h in self.hosts]
        targets = [("the root namespace", self.gateway, sources[0][1])]
        targets += [(f"host {h.name}", h.address, h.socket) for h in self.hosts]
        for target_name, address, make in targets:
            with make() as listener:
                listener.bind((address, 0))
                listener.listen(len(sources))
                port = listener.getsockname()[1]
                for source_name, connect in sources:
                    if source_name == target_name:
                        continue
                    with connect() as client:
                        client.settimeout(_PROBE_TIMEOUT_S)
                        try:
                            client.connect((address, port))
                        except OSError as exc:
                            raise NetworkError(
                                f"{source_name} cannot reach {target_name} at {address}:{port} "
                                f"over the {self._mode} network: {exc} (with a bridge, "
                                "br_netfilter may send bridged packets through iptables' "
                                "FORWARD chain: see net.bridge.bridge-nf-call-iptables)"
                            ) from None
                    accepted, _ = listener.accept()
                    accepted.close()

    def stop(self) -> list[int]:
        """End every process left in the namespaces (SIGKILL by pid), then remove the
        namespaces, links and lock, and restore IP forwarding. Idempotent.

        Returns:
            the pids of the processes that were still in a namespace (callers that end their
            own processes expect none).
        """
        made, self._made = self._made, []
        killed = _kill_all(itertools.chain.from_iterable(host.pids() for host in made))
        for host in made:
            _ip("netns", "del", host.name, check=False)
        links, self._links = self._links, []
        for link in reversed(links):
            _ip("link", "del", link, check=False)
        if self._forward_before is not None:
            _IP_FORWARD.write_text(self._forward_before + "\n")
            self._forward_before = None
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None
        return killed

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def free_block(
    hosts: int, used: Iterable[ipaddress.IPv4Network] | None = None
) -> ipaddress.IPv4Network:
    """The block of :data:`SUBNET` for a network of ``hosts`` hosts and a gateway: the
    highest /28 (larger when the hosts need it) that overlaps nothing in ``used`` (default:
    the root namespace's IPv4 addresses, route destinations and gateways, and neighbours
    inside :data:`SUBNET`), never the first or last block (the subnet's own network and
    broadcast addresses).

    Raises:
        NetworkError: every block is in use.

    >>> str(free_block(2, [ipaddress.IPv4Network("192.0.2.224/27")]))
    '192.0.2.208/28'
    """
    bits = max(32 - _MIN_BLOCK_PREFIX, math.ceil(math.log2(hosts + 3)))
    taken = list(_root_networks() if used is None else used)
    candidates = list(SUBNET.subnets(new_prefix=32 - bits))[1:-1]
    for block in reversed(candidates):
        if not any(block.overlaps(network) for network in taken):
            return block
    raise NetworkError(
        f"no free /{32 - bits} block in {SUBNET} for {hosts} hosts: the root namespace uses "
        + ", ".join(sorted(str(n) for n in taken))
    )


def _root_networks() -> list[ipaddress.IPv4Network]:
    """What the root namespace uses inside :data:`SUBNET`: its addresses, its route
    gateways and destinations more specific than the subnet, and its neighbours."""
    words: list[str] = []
    for line in _ip("-4", "-o", "addr", "show", check=False).stdout.splitlines():
        parts = line.split()
        if "inet" in parts:
            words.append(parts[parts.index("inet") + 1].split("/")[0])
    for line in _ip("-4", "route", "show", "table", "all", check=False).stdout.splitlines():
        parts = line.split()
        words += [parts[i + 1] for i, word in enumerate(parts[:-1]) if word in ("via", "src")]
        if parts and parts[0] not in ("default", "broadcast", "local", "unreachable"):
            words.append(parts[0])
        elif len(parts) > 1 and parts[0] in ("local", "broadcast"):
            words.append(parts[1])
    words += [
        line.split()[0]
        for line in _ip("-4", "neigh", "show", check=False).stdout.splitlines()
        if line.strip()
    ]
    found = []
    for word in words:
        with contextlib.suppress(ValueError):
            network = ipaddress.IPv4Network(word, strict=False)
            if network.subnet_of(SUBNET) and network.prefixlen > SUBNET.prefixlen:
                found.append(network)
    return found


def remove_leftovers() -> list[str]:
    """Remove the namespaces (and the processes still in them) and links that a
    :class:`HostNetwork` of a process no longer alive left behind.

    Returns:
        the names removed.
    """
    removed = []
    listed = _ip("netns", "list", check=False).stdout.split("\n")
    for name in (line.split()[0] for line in listed if line.strip()):
        owner = _owner_pid(name)
        if owner is None or _alive(owner):
            continue
        _kill_all(Host(name, "").pids())
        _ip("netns", "del", name, check=False)
        removed.append(name)
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        link = line.split(":")[1].strip().split("@")[0] if line.count(":") >= 2 else ""
        owner = _owner_pid(link)
        if owner is not None and not _alive(owner):
            _ip("link", "del", link, check=False)
            removed.append(link)
    return removed


def namespace_of(pid: int) -> str | None:
    """The name of the named network namespace (under ``/run/netns``) process ``pid`` runs
    in; None for the root namespace, another one, or a process that is gone."""
    try:
        inode = os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None
    if not _NETNS_DIR.is_dir():
        return None
    for path in _NETNS_DIR.iterdir():
        with contextlib.suppress(OSError):
            if path.stat().st_ino == inode:
                return path.name
    return None


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """The ``(address, port)`` of every TCP socket process ``pid`` listens on, read from the
    process's own ``/proc/<pid>/net/tcp*`` (the tables of its network namespace; psutil reads
    the caller's). Empty for a process that is gone.
    """
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        with contextlib.suppress(OSError):
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
            for line in lines:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                    found.add(_decode_address(fields[1], family))
    return found


def _decode_address(text: str, family: socket.AddressFamily) -> tuple[str, int]:
    """``0100007F:1F90`` (the kernel's ``/proc/net/tcp`` notation) as ``("127.0.0.1", 8080)``.

    >>> _decode_address("0100007F:1F90", socket.AF_INET)
    ('127.0.0.1', 8080)
    """
    raw, port = text.split(":")
    packed = bytes.fromhex(raw)
    # The kernel prints each 32-bit word in host (little-endian) order.
    words = b"".join(packed[i : i + 4][::-1] for i in range(0, len(packed), 4))
    return socket.inet_ntop(family, words), int(port, 16)


def _in_namespace(name: str, make: Callable[[], T]) -> T:
    """``make()`` called in a fresh thread that first joins network namespace ``name``
    (``setns`` changes only the calling thread's namespace)."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(_NETNS_DIR / name, os.O_RDONLY)
            try:
                if libc.setns(fd, _CLONE_NEWNET) != 0:
                    errno = ctypes.get_errno()
                    raise OSError(errno, f"setns into {name}: {os.strerror(errno)}")
            finally:
                os.close(fd)
            results.append(make())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, name=f"netns-{name}")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        ["ip", *args], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
    )
    if check and result.returncode != 0:
        raise NetworkError(
            f"`ip {' '.join(args)}` failed with {result.returncode}: {result.stderr.strip()}"
        )
    return result


def _no_ipv6_link_local(link: str, namespace: str = "") -> None:
    """No IPv6 link-local address on ``link`` (the test network has IPv4 addresses only);
    a no-op on kernels without IPv6."""
    where = ("-n", namespace) if namespace else ()
    _ip(*where, "link", "set", "dev", link, "addrgenmode", "none", check=False)


def _owner_pid(name: str) -> int | None:
    match = _OWNER.match(name)
    return int(match.group(1)) if match else None


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _kill_all(pids: Iterable[int]) -> list[int]:
    """SIGKILL each pid, wait for them to go; the pids that were alive."""
    processes = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(pid)
            process.send_signal(signal.SIGKILL)
            processes.append(process)
    psutil.wait_procs(processes, timeout=_KILL_WAIT_S)
    return [process.pid for process in processes]


def _letters(index: int) -> str:
    """``a``, ``b``, ..., ``z``, ``ba``, ...: a short name for host ``index``.

    >>> [_letters(i) for i in (0, 1, 25, 26)]
    ['a', 'b', 'z', 'ba']
    """
    out = ""
    while True:
        out = chr(ord("a") + index % 26) + out
        index //= 26
        if index == 0:
            return out
