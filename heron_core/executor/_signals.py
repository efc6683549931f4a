"""Waiting for SIGTERM/SIGINT (and child exits) on the main thread without races."""

from __future__ import annotations

import os
import select
import signal
from types import FrameType, TracebackType

__all__ = ["StopSignals"]

_STOP = (signal.SIGTERM, signal.SIGINT)


class StopSignals:
    """While entered, SIGTERM and SIGINT only record a stop request and wake `wait`.

    Signal handlers do nothing but set a flag; a wakeup fd makes `wait` return as soon as
    any handled signal arrives, so no signal is lost between a check and a wait. Must be
    entered on the main thread. Previous handlers are restored on exit.

    Args:
        wake_on_child_exit: also wake `wait` on SIGCHLD.
        also_wake: more signals that only wake `wait` (the scheduler service's SIGHUP: a
            request is waiting for it).

    >>> with StopSignals() as stop:
    ...     stop.wait(0.0)
    ...     stop.requested
    False
    """

    def __init__(
        self, *, wake_on_child_exit: bool = False, also_wake: tuple[signal.Signals, ...] = ()
    ) -> None:
        child = (signal.SIGCHLD,) if wake_on_child_exit else ()
        self._signals = (*_STOP, *child, *also_wake)
        self.received: int | None = None
        self._fds: tuple[int, int] | None = None
        self._previous: dict[int, signal._HANDLER] = {}
        self._previous_fd = -1

    @property
    def requested(self) -> bool:
        """Whether SIGTERM or SIGINT arrived."""
        return self.received is not None

    @property
    def name(self) -> str:
        """The name of the signal received ("SIGTERM"), or "" when none arrived."""
        return "" if self.received is None else signal.Signals(self.received).name

    def __enter__(self) -> StopSignals:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._fds = (read_fd, write_fd)
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in self._signals}
        self._previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        signal.set_wakeup_fd(self._previous_fd)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        if self._fds is not None:
            for fd in self._fds:
                os.close(fd)
            self._fds = None

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum in _STOP:
            self.received = signum

    def wait(self, timeout: float) -> None:
        """Block up to ``timeout`` seconds, returning early when a handled signal arrives."""
        if self._fds is None:
            raise RuntimeError("StopSignals.wait called outside its 'with' block")
        read_fd = self._fds[0]
        if self.received is None and select.select([read_fd], [], [], max(timeout, 0.0))[0]:
            try:
                while os.read(read_fd, 512):
                    pass
            except BlockingIOError:
                pass
