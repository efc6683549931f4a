"""Where a heronpy program's topology goes: ``build_and_submit()`` and ``Runner.run`` end here.

A heronpy program builds its topology under ``if __name__ == '__main__':`` and submits it.
``heron run FILE`` and ``heron submit local FILE`` run such a file as ``__main__`` inside
`recording`, and every builder passed to `submit` is kept for the loader, which builds the
plan the CLI then runs or submits. Outside a recording (the user ran ``python FILE``) there is
no Heron client to hand the topology to, so `submit` raises `SubmitOutsideHeronError` telling
the exact command instead: heronpy's own ``build_and_submit`` also refuses to run unless the
``heron`` client started the program.

>>> from heron_core.api import TopologyBuilder
>>> with recording() as submitted:
...     submit(TopologyBuilder("word_count"))
>>> [b.name for b in submitted]
['word_count']
>>> submit(TopologyBuilder("word_count"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
heronpy._submit.SubmitOutsideHeronError: topology 'word_count' was submitted outside the heron \
client; ...
"""

from __future__ import annotations

import shlex
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from heron_core.api import TopologyBuilder
from heron_core.errors import ConfigurationError

__all__ = ["SubmitOutsideHeronError", "recording", "submit"]

_lock = threading.Lock()
_recorded: list[TopologyBuilder] | None = None


class SubmitOutsideHeronError(ConfigurationError):
    """A heronpy program submitted its topology while no ``heron`` command was loading it."""


def submit(builder: TopologyBuilder) -> None:
    """Hand ``builder`` (carrying its topology name and config) to the ``heron`` client.

    Called by ``heronpy.api.topology.TopologyBuilder.build_and_submit`` and by the Streamlet
    ``Runner.run``. Returns normally while a loader is `recording` (the program goes on, as
    heronpy's does after a submission).

    Args:
        builder: the native builder of the topology; its ``name`` is the topology name.

    Raises:
        TypeError: ``builder`` is not a ``heron_core.api.TopologyBuilder``.
        SubmitOutsideHeronError: no ``heron run``/``heron submit`` is loading the program; the
            message gives the command to use.
    """
    if not isinstance(builder, TopologyBuilder):
        raise TypeError(
            f"heronpy submit expects a heron_core.api.TopologyBuilder, got {type(builder).__name__}"
        )
    with _lock:
        if _recorded is not None:
            _recorded.append(builder)
            return
    program = shlex.quote(sys.argv[0]) if sys.argv and sys.argv[0] else "FILE.py"
    raise SubmitOutsideHeronError(
        f"topology {builder.name!r} was submitted outside the heron client; a heronpy program "
        f"is started by heron: run it with 'heron run {program}' (in this process, until "
        f"interrupted) or 'heron submit local {program}' (as a local cluster topology)"
    )


@contextmanager
def recording() -> Iterator[list[TopologyBuilder]]:
    """Keep every builder passed to `submit` in the yielded list while the block runs.

    Recordings do not nest: a loader runs one program at a time.

    Raises:
        RuntimeError: a recording is already active.
    """
    global _recorded
    submitted: list[TopologyBuilder] = []
    with _lock:
        if _recorded is not None:
            raise RuntimeError("heronpy: a topology recording is already active")
        _recorded = submitted
    try:
        yield submitted
    finally:
        with _lock:
            _recorded = None
