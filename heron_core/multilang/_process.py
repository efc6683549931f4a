"""One multilang subprocess: launch and handshake, writes, a reader thread, heartbeats, and what
happens when the subprocess dies or goes silent.

Threads: the caller's thread (the instance's one thread) writes and reads messages while it is
inside a host call. With ``reads_between_calls`` (a bolt) a daemon reader thread turns the
subprocess's stdout into messages on a queue all the time (stray output is logged there), and
a daemon heartbeat thread writes a heartbeat tuple every second while the caller is idle and
watches for silence. Without it (a spout, which Storm's ShellSpout only reads while awaiting
the answer to a command) the caller's thread reads the pipe itself during a call, and a daemon
thread only waits for the subprocess to exit: one thread hand-off less per round trip. A
failure seen by a background thread while the caller is idle is handed to ``on_idle_failure``
(by default: raised in the main thread, so the instance logs it and exits non-zero); while the
caller is busy, its next read raises instead.
"""

from __future__ import annotations

import _thread
import atexit
import collections
import contextlib
import itertools
import logging
import os
import queue
import re
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from heron_core.errors import UserCodeError
from heron_core.multilang._serializers import MessageTooLarge, Stray, serializer

__all__ = ["IdleFailureHandler", "ShellProcess", "raise_in_main_thread"]

_PYSTORM_RAISED = re.compile(r"Python \w+ raised\b")
"""The start of the ``error`` message of pystorm's ``raise_exception``, which sends a ``sync``
right after it ("sync up right away"): in a bolt that sync answers no heartbeat."""

log = logging.getLogger(__name__)

HEARTBEAT_STREAM = "__heartbeat"
HEARTBEAT_SECS = 1.0
"""How often an idle bolt's subprocess gets a heartbeat tuple (Storm's period)."""
_READ_CHUNK = 1 << 16
_STOP_GRACE_SECS = 2.0
_FAILED = object()

MAX_TUPLE_KEY = "heron.instance.max.tuple.bytes"
_ESCAPE_FACTOR = 6
"""JSON writes a character in at most 6 bytes (``\\u0001``), marshal in at least 1."""
_MESSAGE_ROOM = 1 << 20
"""Room in a message for what is not the tuple (command, stream, anchors, ids)."""


def max_message_bytes(max_tuple_bytes: int) -> int:
    """The most a subprocess may write as one message, given ``heron.instance.max.tuple.bytes``:
    room for any tuple under it in any serializer's escaping, so that a message over it
    carries a tuple over the limit.

    >>> max_message_bytes(1 << 20)
    7340032
    """
    return _ESCAPE_FACTOR * max_tuple_bytes + _MESSAGE_ROOM


IdleFailureHandler = Callable[[UserCodeError], None]
"""Called (from a background thread) with the error when the subprocess fails while the
caller is idle."""

_pending_errors: list[UserCodeError] = []


def _raise_pending(signum: int, frame: FrameType | None) -> None:
    if _pending_errors:
        raise _pending_errors.pop(0)


def _interrupt_main(error: UserCodeError) -> None:
    _pending_errors.append(error)
    _thread.interrupt_main(signal.SIGUSR2)


def raise_in_main_thread() -> IdleFailureHandler | None:
    """An idle-failure handler that raises the error in the main thread (at its next Python
    instruction), so a process whose main thread waits elsewhere (the instance's loop) fails
    like any user code; None when not called from the main thread (no handler can be
    installed there, and failures surface at the next host call instead).

    Installs a ``SIGUSR2`` handler; the signal itself is never sent.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    signal.signal(signal.SIGUSR2, _raise_pending)
    return _interrupt_main


class ShellProcess:
    """A subprocess speaking Storm's multilang protocol.

    Args:
        command: the argv.
        serializer_name: ``"json"`` or ``"msgpack"``.
        where: names the topology, component and task in messages.
        cwd: the subprocess's working directory.
        env: its environment.
        timeout_secs: how long it may stay silent while an answer is awaited (and, with
            heartbeats, at all) before it is considered dead (``topology.subprocess.timeout.secs``).
        on_idle_failure: see :data:`IdleFailureHandler`; None: failures while idle surface at
            the next call.
        max_tuple_bytes: ``heron.instance.max.tuple.bytes`` (None: no bound): an unfinished
            message past `max_message_bytes` of it fails the component naming the key (the
            reader never holds more).
        reads_between_calls: read the subprocess's output all the time (a reader thread:
            needed for heartbeats); False: only while the caller awaits an answer, on its own
            thread (output written between calls waits in the pipe until the next call).
    """

    def __init__(
        self,
        command: Sequence[str],
        serializer_name: str,
        *,
        where: str,
        cwd: Path,
        env: Mapping[str, str],
        timeout_secs: float,
        on_idle_failure: IdleFailureHandler | None,
        max_tuple_bytes: int | None = None,
        reads_between_calls: bool = True,
    ) -> None:
        self.command = tuple(command)
        self._reads_between_calls = reads_between_calls
        self.where = where
        self._serializer = serializer(serializer_name)
        self.max_tuple_bytes = max_tuple_bytes
        if max_tuple_bytes is not None:
            self._serializer.max_message_bytes = max_message_bytes(max_tuple_bytes)
        self._cwd = cwd
        self._env = dict(env)
        self.timeout_secs = timeout_secs
        self._on_idle_failure = on_idle_failure
        # the reader thread puts each read's messages as one list (or _FAILED)
        self._messages: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._unread: collections.deque[dict[str, Any]] = collections.deque()
        self._write_lock = threading.Lock()
        self._state = threading.Lock()
        self._stopped = threading.Event()
        self._busy = 0  # nesting depth of host calls (a bolt's serve() may run a tick inside one)
        self._closed = False
        self._failure: str | None = None
        self._heartbeats = 0
        self._heartbeat_ids = itertools.count(1)
        self._heartbeating = False
        self.answered = 0
        """Heartbeats answered by a ``sync`` that the caller has read (see :meth:`read`)."""
        self._strays = 0
        self._after_pystorm_error = False
        self.last_heard = time.monotonic()
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid_dir: str | None = None
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        """The subprocess's pid (None before launch)."""
        return None if self._proc is None else self._proc.pid

    @property
    def pid_dir(self) -> str | None:
        """The handshake's ``pidDir`` (removed at close; None before launch)."""
        return self._pid_dir

    def _label(self) -> str:
        return f"multilang subprocess {shlex.join(self.command)!r} (pid {self.pid})"

    # --- life cycle --------------------------------------------------------------------------
    def launch(self, conf: Mapping[str, Any], context: Mapping[str, Any]) -> int:
        """Start the subprocess and do the handshake; the pid it reports.

        Raises:
            UserCodeError: it cannot be started, or does not answer the handshake with its pid.
        """
        self._pid_dir = tempfile.mkdtemp(prefix="heron-multilang-pids-")
        try:
            self._proc = subprocess.Popen(
                list(self.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,
                # Its own process group, so terminal signals reach only the instance, which
                # stops it; not its own session: Linux then puts it in an autogroup of its own,
                # and on a loaded 2-core machine such a subprocess was seen runnable but not run
                # for over 30 s (the kernel's scheduler, 6.18), which failed it for silence.
                process_group=0,
            )
        except OSError as exc:
            shutil.rmtree(self._pid_dir, ignore_errors=True)
            raise UserCodeError(
                f"{self.where}: cannot start multilang subprocess {shlex.join(self.command)!r} "
                f"in {str(self._cwd)!r}: {exc}"
            ) from exc
        atexit.register(self.close)
        if self._reads_between_calls:
            self._reader = threading.Thread(
                target=self._read_loop, name=f"multilang-reader-{self.pid}", daemon=True
            )
        else:
            assert self._proc.stdout is not None
            self._poll = select.poll()
            self._poll.register(self._proc.stdout.fileno(), select.POLLIN)
            self._reader = threading.Thread(
                target=self._watch_exit, name=f"multilang-exit-{self.pid}", daemon=True
            )
        self._reader.start()
        log.info("%s: launched %s in %s", self.where, self._label(), self._cwd)
        self.write({"conf": dict(conf), "pidDir": self._pid_dir, "context": dict(context)})
        with self.busy():
            reply = self.read()
        pid = reply.get("pid")
        if not isinstance(pid, int):
            self._fail(f"answered the handshake with {reply!r}, expected {{'pid': <int>}}")
            raise self._error()
        return pid

    def start_heartbeats(self) -> None:
        """Switch to Storm's ShellBolt behaviour: a heartbeat tuple every second while the
        caller is idle, failure when the subprocess has sent nothing for ``timeout_secs``, and
        ``sync`` answers counted (see :meth:`write_with_heartbeat`)."""
        self._heartbeating = True
        threading.Thread(
            target=self._heartbeat_loop, name=f"multilang-heartbeat-{self.pid}", daemon=True
        ).start()

    def close(self) -> None:
        """Stop the subprocess: close its stdin (a well-behaved one exits), then terminate and
        kill it if it lingers. Idempotent; called at interpreter exit at the latest."""
        with self._state:
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self.close)
        self._stopped.set()
        proc = self._proc
        if proc is not None:
            # A writer blocked on a full pipe holds the lock: then skip to terminate/kill.
            if self._write_lock.acquire(timeout=_STOP_GRACE_SECS):
                try:
                    if proc.stdin is not None:
                        with contextlib.suppress(OSError, ValueError):
                            proc.stdin.close()
                finally:
                    self._write_lock.release()
            for stop in (None, proc.terminate, proc.kill):
                if stop is not None:
                    with contextlib.suppress(OSError):
                        stop()
                try:
                    proc.wait(_STOP_GRACE_SECS)
                    break
                except subprocess.TimeoutExpired:
                    continue
            if self._reader is not None:
                self._reader.join(_STOP_GRACE_SECS)
            if proc.stdout is not None and not (self._reader and self._reader.is_alive()):
                proc.stdout.close()
        if self._pid_dir is not None:
            shutil.rmtree(self._pid_dir, ignore_errors=True)

    # --- the caller's side ---------------------------------------------------------------------
    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """Mark the caller inside a host call (background failures then reach its reads).

        Raises:
            UserCodeError: the subprocess failed before or during the call.
        """
        with self._state:
            failed = self._failure is not None
            if not failed:
                self._busy += 1
        if failed:
            raise self._error()
        try:
            yield
        finally:
            with self._state:
                self._busy -= 1
                failed = self._failure is not None
        if failed:
            raise self._error()

    def write(self, message: object) -> None:
        """Send one message (a dict, or a list of task ids).

        Raises:
            TypeError: the message holds values the serializer cannot carry.
            UserCodeError: the subprocess is gone.
        """
        data = self._serializer.encode(message)
        with self._write_lock:
            self._write(data)

    def encode_tuple(
        self, tuple_id: str, component: str | None, stream: str, task: int, values: Any
    ) -> bytes:
        """The tuple message ``{"id", "comp", "stream", "task", "tuple"}`` as the serializer
        writes it.

        Raises:
            TypeError, ValueError: ``values`` holds values the serializer cannot carry.
        """
        return self._serializer.encode_tuple(tuple_id, component, stream, task, values)

    def write_with_heartbeat(self, data: bytes = b"") -> int:
        """Send the encoded messages ``data`` and a heartbeat tuple right after them, in one
        write; the heartbeat's number. A subprocess answers heartbeats with ``sync`` in order,
        so once :attr:`answered` reaches that number it has handled everything sent before.

        Raises:
            UserCodeError: the subprocess is gone.
        """
        with self._write_lock:
            data += self._heartbeat()
            number = self._heartbeats
            self._write(data)
        return number

    def _heartbeat(self) -> bytes:
        self._heartbeats += 1
        heartbeat: dict[str, Any] = {
            "id": str(next(self._heartbeat_ids)),
            "comp": None,
            "stream": HEARTBEAT_STREAM,
            "task": -1,
            "tuple": [],
        }
        return self._serializer.encode(heartbeat)

    def read(self) -> dict[str, Any]:
        """The next protocol message, waiting at most ``timeout_secs``. With heartbeats on,
        a ``sync`` answers the oldest heartbeat not yet answered (idle ones included): reading
        it adds one to :attr:`answered`.

        Raises:
            UserCodeError: the subprocess exited, went silent or sent undecodable output.
        """
        unread = self._unread
        if not unread and not self._reads_between_calls:
            self._read_pipe()
        elif not unread:
            try:
                item = self._messages.get(timeout=self.timeout_secs)
            except queue.Empty:
                self._fail(
                    f"sent nothing for {self.timeout_secs:g}s while an answer was awaited "
                    "(topology.subprocess.timeout.secs)"
                )
                raise self._error() from None
            if item is _FAILED:
                raise self._error()
            unread.extend(item)
        message = unread.popleft()
        if self._heartbeating and message.get("command") == "sync":
            self.answered += 1
        return message

    # --- internals -----------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        stdin = None if self._proc is None else self._proc.stdin
        try:
            if stdin is None:
                raise ValueError("not started")
            stdin.write(data)
            stdin.flush()
        except (OSError, ValueError) as exc:
            self._fail(self._exit_status() or f"cannot be written to ({exc})")
            raise self._error() from exc

    def _exit_status(self) -> str | None:
        """``"exited with status N"`` once the subprocess has exited (waiting a little)."""
        try:
            return (
                None
                if self._proc is None
                else f"exited with status {self._proc.wait(_STOP_GRACE_SECS)}"
            )
        except subprocess.TimeoutExpired:
            return None

    def _error(self) -> UserCodeError:
        return UserCodeError(f"{self.where}: {self._label()} {self._failure or 'was closed'}")

    def _fail(self, reason: str) -> None:
        with self._state:
            if self._failure is not None or self._closed:
                return
            self._failure = reason
            idle = not self._busy
        error = self._error()
        log.error("%s", error)
        if self._proc is not None:
            with contextlib.suppress(OSError):
                self._proc.kill()
        self._messages.put(_FAILED)
        if idle and self._on_idle_failure is not None:
            self._on_idle_failure(error)

    def _read_loop(self) -> None:
        """The reader thread (``reads_between_calls``): every read's messages, as one list, on
        the queue."""
        put = self._messages.put
        while (messages := self._read_once()) is not None:
            if messages:
                put(messages)

    def _read_pipe(self) -> None:
        """Read on the caller's thread (not ``reads_between_calls``) until a message is
        unread, waiting at most ``timeout_secs``.

        Raises:
            UserCodeError: the subprocess failed, exited, went silent or wrote undecodable
                output.
        """
        deadline = time.monotonic() + self.timeout_secs
        while not self._unread:
            if self._failure is not None:
                raise self._error()
            left = deadline - time.monotonic()
            if left <= 0 or not self._poll.poll(left * 1000):
                self._fail(
                    f"sent nothing for {self.timeout_secs:g}s while an answer was awaited "
                    "(topology.subprocess.timeout.secs)"
                )
                raise self._error()
            messages = self._read_once()
            if messages is None:
                raise self._error()
            self._unread.extend(messages)

    def _watch_exit(self) -> None:
        """The exit watcher (not ``reads_between_calls``): a subprocess that exits between
        calls fails the component then, not at the next call."""
        proc = self._proc
        assert proc is not None
        status = proc.wait()
        self._fail(f"exited with status {status}")

    def _read_once(self) -> list[dict[str, Any]] | None:
        """One read of the subprocess's stdout, blocking: its messages (stray output logged);
        None when the subprocess closed it or wrote what cannot be decoded (it is then
        failed)."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        try:
            data = os.read(proc.stdout.fileno(), _READ_CHUNK)
        except OSError:
            data = b""
        if not data:
            self._fail(self._exit_status() or "closed its stdout")
            return None
        try:
            items = self._serializer.decode(data)
        except MessageTooLarge as exc:
            self._fail(self._too_large(exc))
            return None
        except Exception as exc:
            self._fail(
                f"wrote output the {self._serializer.name} serializer cannot decode: {exc!r}"
            )
            return None
        messages = []
        for item in items:
            if isinstance(item, Stray):
                self._stray(item.text)
                continue
            if self._heartbeating:
                # Heartbeat answers are counted, so a sync that answers none must not be:
                # drop the one pystorm sends right after reporting an exception.
                command = item.get("command")
                if self._after_pystorm_error and command == "sync":
                    self._after_pystorm_error = False
                    continue
                self._after_pystorm_error = command == "error" and bool(
                    _PYSTORM_RAISED.match(str(item.get("msg", "")))
                )
            messages.append(item)
        if messages:
            self.last_heard = time.monotonic()
        return messages

    def _too_large(self, exc: MessageTooLarge) -> str:
        on = "" if exc.stream is None else f" (an emit on stream {exc.stream!r})"
        return (
            f"wrote a message{on} of over {exc.size} bytes, more than any tuple under "
            f"{MAX_TUPLE_KEY} ({self.max_tuple_bytes} bytes) takes in the "
            f"{self._serializer.name} serializer's encoding: it carries a tuple over "
            f"{MAX_TUPLE_KEY}, and is not read further"
        )

    def _stray(self, text: str) -> None:
        self._strays += 1
        if self._strays == 1:
            log.warning(
                "%s: %s wrote text that is not multilang protocol on its stdout; it is logged "
                "here and otherwise ignored (print to stderr instead)",
                self.where,
                self._label(),
            )
        for line in text.splitlines():
            log.info("%s: stdout of pid %s: %s", self.where, self.pid, line)

    def _heartbeat_loop(self) -> None:
        while not self._stopped.wait(HEARTBEAT_SECS):
            silent = time.monotonic() - self.last_heard
            if silent > self.timeout_secs:
                self._fail(
                    f"sent nothing for {silent:.0f}s, heartbeats included "
                    f"(topology.subprocess.timeout.secs={self.timeout_secs:g})"
                )
                return
            with self._state:
                if self._busy or self._failure is not None or self._closed:
                    continue
            try:
                with self._write_lock:
                    self._write(self._heartbeat())
            except UserCodeError:
                return
