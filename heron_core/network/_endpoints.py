"""The names of a stream manager's local (ipc) sockets, after its container's endpoint prefix
(``--local-endpoint``, e.g. ``ipc:///tmp/heron-<hash>-1/``)."""

from __future__ import annotations

__all__ = ["metrics_endpoint", "task_endpoint"]

_TASK = "task-"
_METRICS = "metrics"


def task_endpoint(prefix: str, task: int) -> str:
    """Task ``task``'s socket: its data, acks and control messages, both ways.

    >>> task_endpoint("ipc:///tmp/heron-1a2b-1/", 7)
    'ipc:///tmp/heron-1a2b-1/task-7'
    """
    return f"{prefix}{_TASK}{task}"


def metrics_endpoint(endpoint: str) -> str:
    """The metrics socket (every local task's metrics, in) of the stream manager whose prefix
    is ``endpoint``, or that serves the task socket ``endpoint``.

    >>> metrics_endpoint("ipc:///tmp/heron-1a2b-1/"), metrics_endpoint("ipc:///tmp/h-1/task-7")
    ('ipc:///tmp/heron-1a2b-1/metrics', 'ipc:///tmp/h-1/metrics')
    """
    prefix, found, task = endpoint.rpartition(_TASK)
    if found and task.isdigit():
        return prefix + _METRICS
    return endpoint + _METRICS
