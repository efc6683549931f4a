"""Logging set-up for daemon entry points: one format for every daemon, to stderr (the process
that starts a daemon redirects stderr to its log file)."""

from __future__ import annotations

import logging
import sys

__all__ = ["configure_daemon_logging"]


def configure_daemon_logging(topology: str, role: str, task: int | str = "-") -> None:
    """Send INFO and above to stderr as ``<time> <level> <logger> [topology=.. role=.. task=..]``.

    Call once, from a daemon's entry point only (library modules never configure logging).
    Whoever starts the daemon redirects its stderr to ``W/logs/<process>.log``.

    Args:
        topology: the topology's name.
        role: the process's role ("executor", "scheduler", "tmanager", ...).
        task: the task id or container, "-" when none applies.
    """
    tag = f"topology={topology} role={role} task={task}".replace("%", "%%")
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s %(levelname)s %(name)s [{tag}] %(message)s",
        stream=sys.stderr,
        force=True,
    )
