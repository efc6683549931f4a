"""The last exception a process reported in its log, for the status a crash leaves behind.

A Python process's log (``W/logs/<process>.log``) ends, when it crashed on an exception, with a
traceback: Python's own report of an uncaught exception, or a daemon record whose traceback
lines ``heron_core._logging`` prefixes with ``"\\t| "``. `last_exception` finds the newest one
in the log's tail and returns its exception line (``"ValueError: bad input"``) and the block.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LastException", "last_exception", "last_exception_in"]

TAIL_BYTES = 256 * 1024
"""How much of a log's end is searched."""

MAX_TRACEBACK_CHARS = 8192
"""The longest traceback kept (its end, where the exception is)."""

_START = "Traceback (most recent call last):"
_PREFIX = re.compile(r"^\t?\| ?")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(: .*)?$")


@dataclass(frozen=True)
class LastException:
    """An exception found in a log.

    Attributes:
        line: its type and message, as Python printed them (``"ValueError: bad input"``).
        traceback: the whole traceback, at most `MAX_TRACEBACK_CHARS` (its end).
    """

    line: str
    traceback: str


def _unprefixed(line: str) -> str:
    return _PREFIX.sub("", line, count=1)


def last_exception(text: str) -> LastException | None:
    """The newest traceback in ``text`` and its exception line, or None when there is none.

    >>> log = "\\n".join([
    ...     "2026-01-01 INFO started",
    ...     "2026-01-01 ERROR reported error",
    ...     "\\t| Traceback (most recent call last):",
    ...     '\\t|   File "bolt.py", line 3, in process',
    ...     "\\t|     raise ValueError('no')",
    ...     "\\t| ValueError: no",
    ...     "2026-01-01 INFO next record",
    ... ])
    >>> found = last_exception(log)
    >>> found.line
    'ValueError: no'
    >>> found.traceback.splitlines()[0], found.traceback.splitlines()[-1]
    ('Traceback (most recent call last):', 'ValueError: no')
    >>> last_exception("no traceback here") is None
    True
    """
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _unprefixed(line).strip() == _START]
    if not starts:
        return None
    block = [_START]
    for raw in lines[starts[-1] + 1 :]:
        line = _unprefixed(raw)
        if line.startswith((" ", "\t")):  # a frame, its source line or a caret marker
            block.append(line)
            continue
        if _EXCEPTION.match(line):
            block.append(line)
            kept = "\n".join(block)[-MAX_TRACEBACK_CHARS:]
            return LastException(line.strip(), kept)
        break
    return None


def last_exception_in(path: Path) -> LastException | None:
    """`last_exception` of the last `TAIL_BYTES` of the log at ``path``; None when the file
    is missing or unreadable."""
    try:
        with path.open("rb") as log_file:
            size = log_file.seek(0, os.SEEK_END)
            log_file.seek(max(size - TAIL_BYTES, 0))
            text = log_file.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return last_exception(text)
