"""``python -m heron_core.scheduler._spark_janitor``: removes the containers' unpacked package
from a Spark executor's directory once that executor's JVM has exited.

A container task (`ContainerTask`) unpacks the container package, the topology's code and
CURVE key pair, into ``containers/<K>/`` of its executor's directory on the worker, which Spark
keeps after the application ends. The task cannot remove it itself: Spark kills its Python
worker with SIGKILL when the job is cancelled (a restart, ``heron kill``). So each task starts
this janitor for its executor's directory: it locks ``heron-janitor.lock`` there (a second
janitor of the same directory exits at once), detaches (a process of its own session whose
parent has exited, so that nothing waits for it), waits until the executor's JVM (pid and
start time, so a reused pid does not fool it) has exited, and then removes every container's
``code/`` and ``keys/`` under the directory (`remove_unpacked`), keeping ``logs/``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from heron_core.scheduler._package import remove_unpacked

__all__ = ["LOCK_NAME", "clean", "main"]

LOCK_NAME = "heron-janitor.lock"
_POLL_SECS = 0.5


def clean(directory: Path) -> list[Path]:
    """Remove the unpacked package of every container under executor directory ``directory``
    (``containers/<K>/code`` and ``keys``); return the container directories cleaned."""
    cleaned = sorted((directory / "containers").glob("*"))
    for container in cleaned:
        remove_unpacked(container)
    return cleaned


def _alive(pid: int, started: float) -> bool:
    """Whether the process ``pid`` that started at ``started`` (psutil's create time) runs."""
    try:
        process = psutil.Process(pid)
        return process.create_time() == started and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the janitor (see the module's docstring); returns 0 at once when another janitor
    holds the directory's lock."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else 'janitor'}")
    parser.add_argument("--directory", type=Path, required=True, help="the executor directory")
    parser.add_argument("--pid", type=int, required=True, help="the executor JVM's pid")
    parser.add_argument("--started", type=float, required=True, help="its psutil create time")
    args = parser.parse_args(argv)
    lock = os.open(args.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # this directory has its janitor
    if os.fork() > 0:
        os._exit(0)  # the task that started the janitor reaps this parent at once
    while _alive(args.pid, args.started):
        time.sleep(_POLL_SECS)
    cleaned = clean(args.directory)
    with contextlib.suppress(OSError):
        print(
            f"{time.strftime('%Y-%m-%d %H:%M:%S')} executor JVM {args.pid} exited: removed the "
            f"code and keys of {len(cleaned)} containers under {args.directory}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
