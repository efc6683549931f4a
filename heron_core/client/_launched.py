"""Scheduler services launched by this process, kept so that they can be reaped.

A dropped ``Popen`` of a live child warns, and an unreaped exited child stays a zombie; a
`kill` in the process that submitted reaps the service it launched.
"""

from __future__ import annotations

import subprocess

__all__ = ["reap", "remember"]

_LAUNCHED: dict[int, subprocess.Popen[bytes]] = {}


def remember(proc: subprocess.Popen[bytes]) -> None:
    """Keep ``proc`` until `reap` collects it."""
    _LAUNCHED[proc.pid] = proc


def reap(pid: int) -> None:
    """Wait for the launched process ``pid`` (a no-op for any other pid), and collect every
    launched process that has exited (a supervisor whose service ``pid`` was)."""
    proc = _LAUNCHED.pop(pid, None)
    if proc is not None:
        proc.wait()
    for other in list(_LAUNCHED.values()):
        if other.poll() is not None:
            del _LAUNCHED[other.pid]
