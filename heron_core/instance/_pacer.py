"""When the instance's housekeeping is due: a flag a timer thread raises every flush interval.

User calls can take any time (a spout that sleeps 100 ms in ``next_tuple``, a bolt that waits on
a database in ``process``), so the instance loops cannot wait for a round of calls to end before
they send what was emitted, serve acks and timeouts, publish metrics or honour a stop request.
Reading the clock after every call would cost about 100 ns per tuple on the bolt path (a tenth
of a counting bolt's own work); reading this flag costs about 15. So a daemon thread raises
``due[0]`` every ``interval`` seconds, and the loops check it between any two user calls: when it
is up they stop calling user code, do what is due and lower it. As Storm's executors do with
the flush tuple their timer thread enqueues.

The thread only ever stores ``True`` into the flag; everything else happens on the instance
thread. While the instance thread runs Python code the thread needs the GIL for that store, so
the flag rises at most one switch interval (5 ms) late; while it sleeps or waits on a socket,
at once.

>>> pacer = Pacer(0.001)
>>> pacer.due
[False]
>>> pacer.start()
>>> import time
>>> deadline = time.monotonic() + 10
>>> while not pacer.due[0] and time.monotonic() < deadline:
...     time.sleep(0.001)
>>> pacer.due
[True]
>>> pacer.stop()
"""

from __future__ import annotations

import threading

__all__ = ["Pacer"]


class Pacer:
    """Raises ``due[0]`` every ``interval`` seconds from a daemon thread, once started.

    Args:
        interval: seconds between raises (the instance's flush interval); 0 or less keeps the
            flag up for good, so every check finds housekeeping due.
    """

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.due: list[bool] = [interval <= 0]
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start raising the flag (no-op for an interval of 0 or less, or when started)."""
        if self.interval <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="heron-pacer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        due, wait, interval = self.due, self._stopped.wait, self.interval
        while not wait(interval):
            due[0] = True

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent)."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
