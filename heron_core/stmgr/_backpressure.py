"""Back pressure of one stream manager, as a pure state machine (no sockets, no clock).

Heron's "spout back pressure": an outbox (the queue of frames a local instance's or a peer's
socket could not take yet) that grows above the high watermark *causes* back pressure until it
drains below the low watermark (the gap is the hysteresis). While this stream manager has at
least one cause it has *initiated* back pressure and tells every peer (a Start message when the
first cause appears, a Stop message when the last one goes). Local spouts are *throttled* (their
sockets are not read) while this stream manager has a cause or some peer announced a Start not
yet followed by a Stop.

Each input returns a `Transition`: what the caller must do now. The caller owns the sockets.

>>> bp = BackPressure(high_bytes=100, low_bytes=10)
>>> bp.queued("task-3", 150)
Transition(announce=True, throttle=True, changed=True)
>>> bp.queued("task-3", 50)  # between the watermarks: still a cause
Transition(announce=None, throttle=None, changed=False)
>>> bp.peer_started("stmgr-2")  # already throttled: only the set of announcers changed
Transition(announce=None, throttle=None, changed=True)
>>> bp.queued("task-3", 0)  # this stmgr is relieved, but a peer still holds the spouts back
Transition(announce=False, throttle=None, changed=True)
>>> bp.peer_stopped("stmgr-2")
Transition(announce=None, throttle=False, changed=True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["NO_CHANGE", "BackPressure", "Transition"]


@dataclass(frozen=True)
class Transition:
    """What an input requires of the stream manager.

    Attributes:
        announce: True: send Start to every peer; False: send Stop to every peer; None: send
            nothing.
        throttle: True: stop reading the local spouts; False: read them again; None: leave them.
        changed: the set of causes or of announcing peers changed (time-spent metrics follow it).
    """

    announce: bool | None = None
    throttle: bool | None = None
    changed: bool = False


NO_CHANGE = Transition()


class BackPressure:
    """The back-pressure state of one stream manager.

    Args:
        high_bytes: queued bytes above which an outbox causes back pressure.
        low_bytes: queued bytes below which it no longer does.

    Raises:
        ValueError: ``low_bytes`` is not below ``high_bytes``, or is negative.
    """

    __slots__ = ("_announcers", "_causes", "high_bytes", "low_bytes")

    def __init__(self, high_bytes: int, low_bytes: int) -> None:
        if not 0 <= low_bytes < high_bytes:
            raise ValueError(
                f"back pressure watermarks: the low watermark ({low_bytes} bytes) must be "
                f"at least 0 and below the high watermark ({high_bytes} bytes)"
            )
        self.high_bytes = high_bytes
        self.low_bytes = low_bytes
        self._causes: set[str] = set()
        self._announcers: set[str] = set()

    @property
    def initiated(self) -> bool:
        """Some outbox of this stream manager causes back pressure."""
        return bool(self._causes)

    @property
    def throttled(self) -> bool:
        """Local spouts are not read: back pressure initiated here or announced by a peer."""
        return bool(self._causes or self._announcers)

    @property
    def causes(self) -> frozenset[str]:
        """The outboxes above the high watermark since they last dropped below the low one."""
        return frozenset(self._causes)

    @property
    def announcers(self) -> frozenset[str]:
        """The peers whose last message was a Start."""
        return frozenset(self._announcers)

    def queued(self, outbox: str, queued_bytes: int) -> Transition:
        """Outbox ``outbox`` now holds ``queued_bytes`` (call it whenever that changes)."""
        causes = self._causes
        if queued_bytes > self.high_bytes:
            if outbox in causes:
                return NO_CHANGE
            return self._update(causes.add, outbox)
        if queued_bytes < self.low_bytes and outbox in causes:
            return self._update(causes.discard, outbox)
        return NO_CHANGE

    def closed(self, outbox: str) -> Transition:
        """Outbox ``outbox`` is gone (its frames with it): it causes nothing any more."""
        if outbox not in self._causes:
            return NO_CHANGE
        return self._update(self._causes.discard, outbox)

    def peer_started(self, peer: str) -> Transition:
        """Peer ``peer`` announced back pressure."""
        if peer in self._announcers:
            return NO_CHANGE
        return self._update(self._announcers.add, peer)

    def peer_stopped(self, peer: str) -> Transition:
        """Peer ``peer`` announced the end of its back pressure, or is gone."""
        if peer not in self._announcers:
            return NO_CHANGE
        return self._update(self._announcers.discard, peer)

    def greets(self, peer: str) -> bool:
        """A connection to ``peer`` was (re)made: must it hear a Start now?"""
        return bool(self._causes)

    def _update(self, change: Callable[[str], None], item: str) -> Transition:
        initiated, throttled = self.initiated, self.throttled
        change(item)
        now_initiated, now_throttled = self.initiated, self.throttled
        return Transition(
            announce=now_initiated if now_initiated != initiated else None,
            throttle=now_throttled if now_throttled != throttled else None,
            changed=True,
        )
