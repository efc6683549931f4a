"""Limits of the uvicorn servers (``heron tracker``, ``heron ui``) against slow and idle clients.

uvicorn alone has no deadline for a client that connects and sends its request slowly or not
at all (its keep-alive timeout runs only between requests, and any byte cancels it), and no
bound on open connections (``limit_concurrency`` answers 503 but keeps every connection). So
a few hundred idle or trickling sockets would be held for as long as their clients like.
`limited_config` gives a server uvicorn's h11 protocol with these rules, fixed (the same on
both servers, whatever the bind address):

- **Request deadline**: a connection must deliver a whole request (its head, and its body if
  it has one) within `REQUEST_TIMEOUT_S` of its accept, or of the end of its previous response
  on a kept-alive connection; else it is closed unanswered. No deadline runs while a request
  is being answered (a route may take as long as it needs: a restart from the UI waits for the
  containers).
- **Stalled readers**: while a response waits on its client (more than 64 KiB of it buffered
  because the client reads nothing), the server must be able to write some of it to the
  socket every `STALL_TIMEOUT_S`, else the connection is dropped. A slow reader is not cut; a
  client that reads nothing for that long (its tab closed, its process stopped, an attacker)
  is. As nginx's ``send_timeout``: progress is a write to the socket, so a client that read
  a little of a large kernel buffer may be seen stalled for a while after it resumed.
- **Open connections**: at most `MAX_CONNECTIONS` at once. A new connection beyond takes the
  place of the one that has waited longest for its next request (idle on keep-alive, or
  sending its request slowly); when every open connection has a request being answered, the
  new one is closed at once. This is the Prometheus endpoint's rule
  (`heron_core.metricsmgr.sinks.prometheus`), decided here by `ConnectionBound`. The loop
  accepts a burst of connections (up to `BACKLOG`) before it decides about each, so for the
  length of one turn of the loop up to `MAX_CONNECTIONS` + `BACKLOG` sockets may be open.
- **Request head**: at most `MAX_HEAD_BYTES` (request line and headers, counted without
  optional whitespace); a larger one gets 400 and the connection is closed. (h11's own limit
  bounds only a head still incomplete: a whole larger head in one read, up to asyncio's
  256 KiB, would reach the app; `_HeadLimitedConnection` refuses it.)
- **Requests at once**: uvicorn answers 503 to a request while `MAX_REQUESTS` are being answered
  (a request whose client has gone counts until its route returns), so clients that send
  requests and hang up cannot pile up work without end.
- WebSocket upgrades are off (neither app has a WebSocket route), so no connection leaves these
  rules by switching protocol.

So a slow-loris or a connection flood costs the server a bounded number of sockets (each a few
KiB of buffers) and no threads; honest clients, which send their request at once, are answered
during and after it. The connections closed at these limits are logged (but not the idle ones
closed at the deadline: browsers keep such connections), the first at once and then at most
one line a minute with the counts.

Everything here runs on the server's one event loop thread (uvicorn's): the protocol callbacks,
the timers and `ConnectionBound`; nothing is locked.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from heron_core._connection_bound import Admission, ConnectionBound

__all__ = [
    "BACKLOG",
    "MAX_CONNECTIONS",
    "MAX_HEAD_BYTES",
    "MAX_REQUESTS",
    "REPORT_EVERY_S",
    "REQUEST_TIMEOUT_S",
    "STALL_TIMEOUT_S",
    "Admission",
    "ConnectionBound",
    "limited_config",
]

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 10
"""Seconds a connection has to deliver a whole request, from its accept or from the end of its
previous response (also uvicorn's keep-alive timeout: an idle connection is closed then)."""

STALL_TIMEOUT_S = 60
"""Seconds a response may wait on a client that reads none of it before the connection is
dropped."""

MAX_CONNECTIONS = 256
"""Connections open at once (well under the usual 1024 file descriptors of a process)."""

MAX_HEAD_BYTES = 16 << 10
"""The largest request head (request line and headers), in bytes."""

MAX_REQUESTS = 2 * MAX_CONNECTIONS
"""Requests answered at once, counting those whose client has gone (uvicorn's
``limit_concurrency``; it also counts open connections against it, so it stays above
`MAX_CONNECTIONS` + `BACKLOG`: the connection bound, not this one, decides about sockets)."""

BACKLOG = 128
"""The listen backlog, which is also how many connections the loop accepts in one go."""

REPORT_EVERY_S = 60.0
"""At most one log line about closed connections per this many seconds."""

_RECEIVING = (h11.IDLE, h11.SEND_BODY)
"""The client's h11 states while its request is not yet all received."""


class _Closings:
    """Counts the connections the limits close, by reason, and logs them: the first at once,
    then at most one line every `REPORT_EVERY_S` seconds with the counts since the last."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._counts: Counter[str] = Counter()
        self._logged_at = -REPORT_EVERY_S
        self._pending: asyncio.TimerHandle | None = None

    def note(self, loop: asyncio.AbstractEventLoop, reason: str) -> None:
        self._counts[reason] += 1
        if self._pending is None:
            delay = max(0.0, self._logged_at + REPORT_EVERY_S - loop.time())
            self._pending = loop.call_later(delay, self._log, loop)

    def _log(self, loop: asyncio.AbstractEventLoop) -> None:
        self._pending = None
        self._logged_at = loop.time()
        parts = ", ".join(f"{n} {reason}" for reason, n in self._counts.most_common())
        self._counts.clear()
        log.warning("%s closed connections at its limits: %s", self.server, parts)


_TIMED_OUT = f"sent part of a request but not all of it within {REQUEST_TIMEOUT_S} s"
_EVICTED = f"made room for a new one at {MAX_CONNECTIONS} open"
_REFUSED = f"refused at {MAX_CONNECTIONS} open, all being answered"
_STALLED = f"read nothing of a response for {STALL_TIMEOUT_S} s"


class _HeadLimitedConnection(h11.Connection):
    """h11's server side of a connection that refuses a request whose head is over
    `MAX_HEAD_BYTES` (h11 itself limits only the bytes it buffers while a head is incomplete)
    with the error uvicorn answers 400 to."""

    def __init__(self) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)

    def next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        event = super().next_event()
        if isinstance(event, h11.Request) and _head_size(event) > MAX_HEAD_BYTES:
            raise h11.RemoteProtocolError(
                f"the request head is over {MAX_HEAD_BYTES} bytes", error_status_hint=431
            )
        return event


def _head_size(request: h11.Request) -> int:
    """The bytes of ``request``'s head without optional whitespace: ``METHOD SP target SP
    HTTP/version CRLF``, ``name:value CRLF`` per header, the final CRLF."""
    line = len(request.method) + len(request.target) + len(request.http_version) + 9
    fields = sum(len(name) + len(value) + 3 for name, value in request.headers.raw_items())
    return line + fields + 2


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the module's rules; `limited_config` makes a subclass per
    server, whose `bound` and `closings` its connections share. Runs on the loop thread."""

    bound: ClassVar[ConnectionBound[LimitedH11Protocol]]
    closings: ClassVar[_Closings]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _HeadLimitedConnection()
        self._admitted = False
        self._request_timer: asyncio.TimerHandle | None = None
        self._stall_timer: asyncio.TimerHandle | None = None
        self._unsent = 0  # the write buffer's size when the stall timer was last armed
        self._started = False  # whether a byte of the awaited request came

    def connection_made(  # type: ignore[override]
        self, transport: asyncio.Transport
    ) -> None:
        admission = self.bound.admit(self)
        if admission.evicted is not None:
            admission.evicted._drop(_EVICTED)
        if not admission.admitted:
            self.transport = transport
            self.closings.note(self.loop, _REFUSED)
            transport.abort()
            return
        self._admitted = True
        super().connection_made(transport)
        self._await_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timers()
        self.bound.release(self)
        if self._admitted:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._started = True
        super().data_received(data)

    def handle_events(self) -> None:
        super().handle_events()
        if self._request_timer is not None and self.conn.their_state not in _RECEIVING:
            self._request_timer.cancel()
            self._request_timer = None
            self.bound.waiting(self, False)

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            # armed first: the super call may take a pipelined request already received,
            # whose handle_events disarms it
            self._await_request()
        super().on_response_complete()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall_timer is not None:
            self._stall_timer.cancel()
        self._unsent = self.transport.get_write_buffer_size()
        self._stall_timer = self.loop.call_later(STALL_TIMEOUT_S, self._check_stall)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None

    def _await_request(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
        self._request_timer = self.loop.call_later(REQUEST_TIMEOUT_S, self._request_timed_out)
        self._started = False
        self.bound.waiting(self, True)

    def _request_timed_out(self) -> None:
        self._request_timer = None
        if not self.transport.is_closing():
            if self._started:  # an idle connection's end is no news; a partial request's is
                self.closings.note(self.loop, _TIMED_OUT)
            self.transport.close()  # what is left of a response is still sent

    def _check_stall(self) -> None:
        self._stall_timer = None
        unsent = self.transport.get_write_buffer_size()
        if unsent < self._unsent:  # some was written: the client reads
            self._unsent = unsent
            self._stall_timer = self.loop.call_later(STALL_TIMEOUT_S, self._check_stall)
            return
        self.closings.note(self.loop, _STALLED)
        self.transport.abort()

    def _drop(self, reason: str) -> None:
        """End the connection at once (evicted: `bound` no longer counts it)."""
        self._stop_timers()
        self.closings.note(self.loop, reason)
        self.transport.abort()

    def _stop_timers(self) -> None:
        for timer in (self._request_timer, self._stall_timer):
            if timer is not None:
                timer.cancel()
        self._request_timer = self._stall_timer = None


def limited_config(app: Callable[..., Any], *, server: str, **options: Any) -> uvicorn.Config:
    """A `uvicorn.Config` serving ``app`` under the module's limits, with a connection bound
    of its own; ``server`` names it in the log (``"heron tracker"``). ``options`` are other
    `uvicorn.Config` arguments (logging, lifespan, ...); one that sets a limit is a
    ``TypeError`` (given twice).

    Serve it with `uvicorn.Server` (one server per config).
    """

    class Protocol(LimitedH11Protocol):
        bound = ConnectionBound[LimitedH11Protocol](MAX_CONNECTIONS)
        closings = _Closings(server)

    return uvicorn.Config(
        app,
        http=Protocol,
        ws="none",
        limit_concurrency=MAX_REQUESTS,
        timeout_keep_alive=REQUEST_TIMEOUT_S,
        backlog=BACKLOG,
        **options,
    )
