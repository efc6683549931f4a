"""The names of a stream manager's local (ipc) sockets, after its container's endpoint prefix
(``--local-endpoint``, e.g. ``ipc:///tmp/heron-k3x9q2ab/``, a private directory the executor
makes)."""

from __future__ import annotations

import socket

__all__ = ["free_port", "metrics_endpoint", "reserve_port", "task_endpoint"]

_TASK = "task-"
_METRICS = "metrics"


def task_endpoint(prefix: str, task: int) -> str:
    """Task ``task``'s socket: its data, acks and control messages, both ways.

    >>> task_endpoint("ipc:///tmp/heron-k3x9q2ab/", 7)
    'ipc:///tmp/heron-k3x9q2ab/task-7'
    """
    return f"{prefix}{_TASK}{task}"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` (a local address) right now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def reserve_port(host: str = "127.0.0.1") -> socket.socket:
    """A listening TCP socket on a port of ``host`` the kernel picked, inheritable by children.

    Unlike `free_port` there is no window in which another process can take the port: whoever
    holds the socket holds the port, and a child given its descriptor serves on it (ZeroMQ's
    ``USE_FD``) as often as it is restarted.

    >>> with reserve_port() as held:
    ...     held.getsockname()[1] > 0 and held.get_inheritable()
    True
    """
    listener = socket.socket()
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, 0))
        listener.listen(128)
        listener.set_inheritable(True)
    except OSError:
        listener.close()
        raise
    return listener


def metrics_endpoint(endpoint: str) -> str:
    """The metrics socket of the container whose endpoint prefix is ``endpoint``, or whose
    task socket is ``endpoint``: its metrics manager reads there what the instances and the
    stream manager publish.

    >>> metrics_endpoint("ipc:///tmp/heron-k3x9q2ab/"), metrics_endpoint("ipc:///tmp/h-1/task-7")
    ('ipc:///tmp/heron-k3x9q2ab/metrics', 'ipc:///tmp/h-1/metrics')
    """
    prefix, found, task = endpoint.rpartition(_TASK)
    if found and task.isdigit():
        return prefix + _METRICS
    return endpoint + _METRICS
