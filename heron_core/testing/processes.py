"""Helpers for tests that start real processes: wait on a condition with a deadline, and make
sure nothing a test started outlives it.

>>> wait_until(lambda: True, "nothing")
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import psutil

__all__ = [
    "PipeLines",
    "isolated_home",
    "processes_mentioning",
    "run_command",
    "wait_until",
]

_STACKS_S = 5.0
"""How long a hung command gets to print its stacks before it is killed."""


def wait_until(
    predicate: Callable[[], object], what: str, timeout: float = 120.0, interval: float = 0.05
) -> None:
    """Poll ``predicate`` every ``interval`` seconds until it is true.

    Raises:
        TimeoutError: naming ``what``, after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def processes_mentioning(path: Path) -> list[psutil.Process]:
    """Live (not zombie) processes with ``path`` in their command line: every daemon of a
    topology whose heron home or working directory is under ``path``."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        argv = process.info.get("cmdline") or []
        if process.info.get("status") != psutil.STATUS_ZOMBIE and any(str(path) in a for a in argv):
            found.append(process)
    return found


@contextlib.contextmanager
def isolated_home(root: Path, failed: Callable[[], bool]) -> Iterator[Path]:
    """A heron home ``root/home`` for one test. Afterwards every process still mentioning
    ``root`` is killed by pid, every log under ``root`` is printed if ``failed()`` or anything
    was left behind, and leftovers fail the test (AssertionError)."""
    yield root / "home"
    leftovers = processes_mentioning(root)
    for process in leftovers:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(leftovers, timeout=30)
    if failed() or leftovers:
        for log in sorted(root.rglob("*.log")):
            print(f"===== {log} =====\n{log.read_text(errors='replace')}")
    assert not leftovers, f"processes outlived the test: {[p.pid for p in leftovers]}"


class PipeLines:
    """The lines a child process writes to a pipe (``Popen(..., stdout=PIPE, text=True)``),
    collected by a daemon thread as they come, so that the pipe never fills up.

    >>> import io
    >>> lines = PipeLines(io.StringIO("a 1\\nb 2\\n"))
    >>> lines.join(5.0)
    ['a 1', 'b 2']
    >>> lines.match(r"b \\d")
    ['b 2']
    """

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None, "the process was not started with this pipe"
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def match(self, pattern: str) -> list[str]:
        """The lines so far that match ``pattern`` whole."""
        return [line for line in list(self.lines) if re.fullmatch(pattern, line)]

    def join(self, timeout: float) -> list[str]:
        """Wait up to ``timeout`` seconds for the pipe to close; every line read."""
        self._thread.join(timeout)
        return self.lines


def run_command(
    argv: Sequence[str], *, timeout: float, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True, ...)``, but a hang is shown, not
    just timed out, and a sleep the machine lost is ended.

    A command still running after half of ``timeout`` gets SIGUSR1 once: every ``heron``
    command and daemon then prints all its threads' stacks to stderr (see
    ``heron_core._logging.enable_stack_dumps``), and the signal ends any sleep whose timer
    the machine failed to fire. That happens on this project's test machines: the
    hypervisor stalls one virtual CPU for tens of seconds while the other runs (the kernel
    logs "workqueue lockup - pool cpus=1 ... stuck for 38s"), and a process asleep with its
    timer on that CPU does not wake until something else wakes it (CI saw ``heron sparse
    run -t 20`` asleep in a 0.2 s ``select`` for 220 s, which SIGUSR1 ended). A command that
    then ends by itself is returned as usual, the stacks in its stderr. A real hang does not
    end on a signal: after ``timeout`` seconds the process gets SIGUSR1 again, then SIGKILL,
    and the error carries what it wrote.

    Raises:
        TimeoutError: with the command, its stdout and its stderr (stacks included).
    """
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout / 2)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)
            try:
                out, err = proc.communicate(timeout=timeout / 2)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGUSR1)
                try:
                    out, err = proc.communicate(timeout=_STACKS_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    out, err = proc.communicate()
                raise TimeoutError(
                    f"{' '.join(map(str, argv))} did not end within {timeout:g} s (it got "
                    f"SIGUSR1 after {timeout / 2:g} s and again at the end); it was killed.\n"
                    f"--- stdout ---\n{out}\n--- stderr (with every thread's stack) ---\n{err}"
                ) from None
            print(
                f"note: {' '.join(map(str, argv))} was still running after {timeout / 2:g} s; "
                f"it got SIGUSR1 and then ended by itself (exit {proc.returncode}); its stacks "
                f"at the signal are in its stderr:\n{err}"
            )
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
