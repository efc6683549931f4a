"""Starting and stopping child processes so that none outlives its parent."""

from __future__ import annotations

import ctypes
import logging
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["describe_exit", "die_with_parent", "spawn", "stop_processes"]

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child before exec: ask Linux to SIGKILL this process when its parent thread dies.

    A last resort against orphans (the parent normally stops its children itself); a no-op
    where ``prctl`` is unavailable.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def spawn(
    argv: Sequence[str],
    log_path: Path,
    cwd: Path,
    *,
    new_session: bool = False,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in ``cwd`` with stdout and stderr appended to ``log_path``.

    The child has no stdin and gets `die_with_parent`: the thread calling this must live as
    long as the child should. With ``new_session`` it also leads a new session (signals for
    this process's terminal or process group do not reach it). ``pass_fds`` are descriptors
    the child inherits under the same numbers.

    Raises:
        OSError: the program cannot be started.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as out:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            preexec_fn=die_with_parent,
            start_new_session=new_session,
            pass_fds=tuple(pass_fds),
        )


def describe_exit(returncode: int) -> str:
    """``"exit status 3"`` or ``"signal SIGKILL"`` for a Popen return code.

    >>> describe_exit(3), describe_exit(-9)
    ('exit status 3', 'signal SIGKILL')
    """
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


def stop_processes(procs: Mapping[str, subprocess.Popen[bytes]], grace_secs: float) -> None:
    """SIGTERM every live process, wait up to ``grace_secs``, SIGKILL the rest, reap all.

    Args:
        procs: the processes by name (for the log).
        grace_secs: how long they get between SIGTERM and SIGKILL, together.
    """
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_secs
    for name, proc in procs.items():
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            log.warning(
                "%s (pid %d) did not stop within %.1f s of SIGTERM: SIGKILL",
                name,
                proc.pid,
                grace_secs,
            )
            proc.kill()
            proc.wait()
