"""What every streamparse test gets: the components' shared record emptied, and the process
state pystorm changes put back."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest
from sparse_components import Recording


@pytest.fixture(autouse=True)
def _isolation() -> Iterator[None]:
    """pystorm installs SIGUSR1 handlers and TicklessBatchingBolt renames the main thread; the
    test components record their calls in one class-wide list."""
    Recording.calls.clear()
    handler = signal.getsignal(signal.SIGUSR1)
    name = threading.main_thread().name
    yield
    signal.signal(signal.SIGUSR1, handler)
    threading.main_thread().name = name
