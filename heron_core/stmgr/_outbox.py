"""Outgoing sockets of a stream manager and the frames each could not take yet.

A socket that cannot take a message now gets it queued in its outbox, in order; nothing is
dropped. Every change of an outbox's queued bytes is reported to the `BackPressure` machine,
and what it answers is handed to the stream manager's ``react`` callback.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence

import zmq

from heron_core.network import ACKS, DATA
from heron_core.stmgr._backpressure import BackPressure, Transition

__all__ = ["Outbox", "Outboxes"]

log = logging.getLogger(__name__)

_DATA_KINDS = (DATA, ACKS)


class Outbox:
    """One outgoing socket (a local task's or a peer's), its queued frames and its counters
    of the current metrics interval (reset by whoever reads them)."""

    __slots__ = (
        "ack_batches",
        "batches",
        "frames",
        "name",
        "nbytes",
        "polled",
        "queued_bytes",
        "readable",
        "socket",
    )

    def __init__(self, socket: zmq.Socket[bytes], name: str, readable: bool) -> None:
        self.socket = socket
        self.name = name
        self.readable = readable  # poll it for input (instances; not spouts under back pressure)
        self.frames: deque[Sequence[bytes]] = deque()
        self.queued_bytes = 0
        self.polled = 0  # the zmq poll flags it is registered with
        self.batches = 0  # data batches routed to it
        self.nbytes = 0  # their payload bytes
        self.ack_batches = 0  # acking batches routed to it


class Outboxes:
    """Every outbox of one stream manager, registered with its poller.

    Args:
        owner: the stream manager's id, in log lines.
        poller: the stream manager's poller.
        back_pressure: told of every change of an outbox's queued bytes.
        react: called with each `Transition` that changed something.
    """

    def __init__(
        self,
        owner: str,
        poller: zmq.Poller,
        back_pressure: BackPressure,
        react: Callable[[Transition], None],
    ) -> None:
        self._owner = owner
        self._poller = poller
        self._bp = back_pressure
        self._react = react
        self.by_socket: dict[zmq.Socket[bytes], Outbox] = {}

    def add(self, box: Outbox) -> Outbox:
        self.by_socket[box.socket] = box
        self.update_poll(box)
        return box

    def update_poll(self, box: Outbox) -> None:
        """(Un)register ``box`` for input (if readable) and output (if it holds frames)."""
        flags = (zmq.POLLIN if box.readable else 0) | (zmq.POLLOUT if box.frames else 0)
        if flags == box.polled:
            return
        if not flags:
            self._poller.unregister(box.socket)
        elif not box.polled:
            self._poller.register(box.socket, flags)
        else:
            self._poller.modify(box.socket, flags)
        box.polled = flags

    def send(self, box: Outbox, frames: Sequence[bytes]) -> None:
        """Send ``frames`` after whatever ``box`` holds; never blocks."""
        if not box.frames:
            try:
                box.socket.send_multipart(frames, zmq.NOBLOCK, copy=False)
                return
            except zmq.Again:
                pass
        box.frames.append(frames)
        box.queued_bytes += len(frames[-1])
        if len(box.frames) == 1:
            self.update_poll(box)
        transition = self._bp.queued(box.name, box.queued_bytes)
        if transition.changed:  # more bytes queued: ``box`` became a cause
            log.info(
                "%s: back pressure: %d bytes queued for %s", self._owner, box.queued_bytes, box.name
            )
            self._react(transition)

    def send_first(self, box: Outbox, frames: Sequence[bytes]) -> None:
        """Send a control message ahead of any queued data, so that it is never stuck behind
        the backlog."""
        try:
            box.socket.send_multipart(frames, zmq.NOBLOCK)
        except zmq.Again:
            box.frames.appendleft(frames)
            box.queued_bytes += len(frames[-1])
            self.update_poll(box)

    def drain(self, box: Outbox) -> None:
        """Send what ``box`` holds, as far as its socket takes it."""
        frames = box.frames
        while frames:
            try:
                box.socket.send_multipart(frames[0], zmq.NOBLOCK, copy=False)
            except zmq.Again:
                break
            box.queued_bytes -= len(frames.popleft()[-1])
        if not frames:
            self.update_poll(box)
        transition = self._bp.queued(box.name, box.queued_bytes)
        if transition.changed:
            self._react(transition)

    def drop_data(self) -> int:
        """Drop the tuple and ack batches every outbox holds (a rollback: they belong to the
        run before it); control messages stay. Returns how many were dropped."""
        dropped = 0
        for box in self.by_socket.values():
            kept = deque(f for f in box.frames if f[0] not in _DATA_KINDS)
            dropped += len(box.frames) - len(kept)
            box.frames = kept
            box.queued_bytes = sum(len(f[-1]) for f in kept)
            self.update_poll(box)
            transition = self._bp.queued(box.name, box.queued_bytes)
            if transition.changed:
                self._react(transition)
        return dropped

    def close(self, box: Outbox) -> None:
        """Close ``box``'s socket, dropping what it holds."""
        if box.polled:
            self._poller.unregister(box.socket)
        self.by_socket.pop(box.socket, None)
        box.socket.close(linger=0)
        transition = self._bp.closed(box.name)
        if transition.changed:
            self._react(transition)

    def close_all(self) -> None:
        for box in list(self.by_socket.values()):
            box.socket.close(linger=0)
        self.by_socket.clear()
