"""Logging set-up for daemon entry points: one format for every daemon, to stderr (the process
that starts a daemon redirects stderr to its log file), and its parser.

A record is one line ``<date> <time> <LEVEL> <logger> [topology=.. role=.. task=..] <message>``;
every further line of a record (a multi-line message, a traceback) starts with `CONTINUATION`.
Any other line of a log was written to stdout or stderr some other way (``print``, a child
process, Python's report of an uncaught exception, ``warnings``). `parse_record` tells them
apart, so that a reader can pick out what user code wrote (``heron_core.client``'s log
follower does).
"""

from __future__ import annotations

import faulthandler
import io
import logging
import re
import signal
import sys
from dataclasses import dataclass

__all__ = [
    "CONTINUATION",
    "LogRecordLine",
    "configure_daemon_logging",
    "daemon_formatter",
    "enable_stack_dumps",
    "parse_record",
]

CONTINUATION = "\t| "
"""What every line of a record after its first starts with."""

_RECORD = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>[A-Z]+) (?P<logger>\S+) "
    r"\[topology=\S* role=(?P<role>\S+) task=(?P<task>\S+)\] (?P<message>.*)"
)


class _DaemonFormatter(logging.Formatter):
    """The daemon format, with `CONTINUATION` before every line of a record but its first."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if "\n" not in text:
            return text
        return text.replace("\n", "\n" + CONTINUATION)


def daemon_formatter(topology: str, role: str, task: int | str = "-") -> logging.Formatter:
    """The formatter of a daemon's records (see the module and `configure_daemon_logging`).

    >>> record = logging.makeLogRecord({"name": "x", "levelname": "INFO", "msg": "a\\nb"})
    >>> daemon_formatter("wc", "stmgr", 1).format(record).split(" ", 2)[2]
    'INFO x [topology=wc role=stmgr task=1] a\\n\\t| b'
    """
    tag = f"topology={topology} role={role} task={task}".replace("%", "%%")
    return _DaemonFormatter(f"%(asctime)s %(levelname)s %(name)s [{tag}] %(message)s")


def configure_daemon_logging(topology: str, role: str, task: int | str = "-") -> None:
    """Send INFO and above to stderr as ``<time> <level> <logger> [topology=.. role=.. task=..]``.

    Call once, from a daemon's entry point only (library modules never configure logging).
    Whoever starts the daemon redirects its stderr to ``W/logs/<process>.log``.

    Args:
        topology: the topology's name.
        role: the process's role ("executor", "scheduler", "tmanager", ...).
        task: the task id or container, "-" when none applies.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(daemon_formatter(topology, role, task))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    enable_stack_dumps()


def enable_stack_dumps() -> None:
    """Make ``kill -USR1 <pid>`` print every thread's stack to stderr (a daemon's log): the
    way to see where a hung process is. Left alone if something else handles SIGUSR1 or
    stderr is not a file (captured by a test runner)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return
    if signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL:
        faulthandler.register(signal.SIGUSR1, all_threads=True)


@dataclass(frozen=True)
class LogRecordLine:
    """The first line of a record, parsed.

    Attributes:
        level: the level's name ("INFO", "WARNING", ...).
        logger: the logger's name.
        role: the daemon's role ("instance", "executor", ...).
        task: its task id or container ("-" when none applies).
        message: the first line of the message.
    """

    level: str
    logger: str
    role: str
    task: str
    message: str


def parse_record(line: str) -> LogRecordLine | None:
    """The record that ``line`` (without its line end) starts, or None for any other line.

    >>> parse_record("2024-05-01 12:00:00,001 WARNING heron_core.stmgr [topology=wc "
    ...              "role=stmgr task=1] slow").level
    'WARNING'
    >>> parse_record("hello from print()") is None
    True
    """
    match = _RECORD.fullmatch(line)
    if match is None:
        return None
    return LogRecordLine(**match.groupdict())
