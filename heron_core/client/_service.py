"""Asking a submitted topology's scheduler service to do something (``heron restart``,
``heron update``): see ``heron_core.scheduler._requests``."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from heron_core.client._config import Progress
from heron_core.errors import SchedulerError
from heron_core.scheduler import RequestAnswer, read_answer, write_request
from heron_core.scheduler._requests import Request
from heron_core.statemgr import StateManager

__all__ = ["ask_scheduler_service"]

_POLL_S = 0.1


def ask_scheduler_service(
    state: StateManager,
    cluster: str,
    name: str,
    root: Path,
    request: Request,
    progress: Progress,
    what: str,
    deadline: float,
) -> RequestAnswer:
    """File ``request`` for topology ``name``'s scheduler service, wake it and wait for its
    answer until ``deadline`` (monotonic seconds); ``what`` names the request for the user.

    Raises:
        SchedulerError: no scheduler service (a topology of ``heron run``), one that is not on
            this machine, or no answer by the deadline.
    """
    location = state.get_scheduler_location(name)
    if location is None or not location.pid:
        raise SchedulerError(
            f"topology {name!r} on cluster {cluster!r} has no scheduler service to {what} it "
            "(a topology of 'heron run' is changed by running it again)"
        )
    path = write_request(root, request)
    progress(f"asking the scheduler of {name!r} (pid {location.pid}) to {what} it")
    try:
        os.kill(location.pid, signal.SIGHUP)
    except ProcessLookupError:
        path.unlink(missing_ok=True)
        raise SchedulerError(
            f"the scheduler service of {name!r} (pid {location.pid}) is not running on this "
            f"machine; {what} the topology from the machine that submitted it"
        ) from None
    while (answer := read_answer(path)) is None:
        if time.monotonic() > deadline:
            raise SchedulerError(
                f"the scheduler service of {name!r} (pid {location.pid}) did not take the "
                f"{what} request in time (see its log in {root / 'logs'})"
            )
        time.sleep(_POLL_S)
    return answer
