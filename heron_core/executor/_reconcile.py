"""The executor's control loop as pure functions: a restart policy, exits, and the diff.

Nothing here touches a process or a clock: callers pass ``now`` (any monotonic seconds), so
the policy and the diff are tested instantly.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from heron_core.errors import ConfigurationError
from heron_core.executor._processes import ProcessSpec

__all__ = ["Action", "ProcessRecord", "RestartPolicy", "Verb", "reconcile", "record_exit"]

_INITIAL = "heron.executor.restart.backoff.initial.secs"
_MAX = "heron.executor.restart.backoff.max.secs"
_ATTEMPTS = "heron.executor.restart.max.attempts"
_MAX_DOUBLINGS = 64  # 2 ** 64 exceeds any sensible max/initial ratio; more would overflow


@dataclass(frozen=True)
class RestartPolicy:
    """Exponential back-off for processes that die, and when to give up.

    The n-th consecutive crash of a process delays its restart by
    ``min(initial_secs * 2 ** (n - 1), max_secs)``. A run that lasted at least ``max_secs``
    ends a crash streak (the next crash counts as the first). After ``max_attempts``
    restarts in one streak, the next crash makes the executor give up.

    >>> policy = RestartPolicy(initial_secs=1.0, max_secs=5.0, max_attempts=3)
    >>> [policy.delay(n) for n in (1, 2, 3, 4)]
    [1.0, 2.0, 4.0, 5.0]
    """

    initial_secs: float
    max_secs: float
    max_attempts: int

    def __post_init__(self) -> None:
        if self.initial_secs < 0 or self.max_secs < self.initial_secs or self.max_attempts < 0:
            raise ConfigurationError(
                f"restart policy: expected 0 <= initial_secs <= max_secs and max_attempts >= 0, "
                f"got initial_secs={self.initial_secs}, max_secs={self.max_secs}, "
                f"max_attempts={self.max_attempts}"
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> RestartPolicy:
        """The policy set by the ``heron.executor.restart.*`` keys of a resolved config.

        Raises:
            ConfigurationError: a key is missing or the values are inconsistent.
        """
        try:
            return cls(float(config[_INITIAL]), float(config[_MAX]), int(config[_ATTEMPTS]))
        except KeyError as exc:
            raise ConfigurationError(
                f"restart policy: config key {exc.args[0]!r} is missing from the topology config"
            ) from None

    def delay(self, crashes: int) -> float:
        """Seconds to wait before restarting a process after its ``crashes``-th crash (>= 1)."""
        return min(
            self.initial_secs * 2.0 ** min(max(crashes - 1, 0), _MAX_DOUBLINGS), self.max_secs
        )


@dataclass(frozen=True)
class ProcessRecord:
    """What the executor knows about one process it started.

    Attributes:
        spec: the spec the process was started from.
        pid: the running process's pid, or None once it has exited.
        started_at: when it was last started.
        crashes: crashes in the current streak (see `RestartPolicy`).
        restart_at: while not running, the earliest time it may be started again.
    """

    spec: ProcessSpec
    pid: int | None
    started_at: float
    crashes: int = 0
    restart_at: float = 0.0

    @property
    def running(self) -> bool:
        """Whether the process is alive (not yet reaped)."""
        return self.pid is not None


def record_exit(
    record: ProcessRecord, now: float, policy: RestartPolicy, *, expected: bool
) -> ProcessRecord:
    """The record after its process exited at ``now``.

    Args:
        record: the record of the running process.
        now: the time of the exit.
        policy: the restart policy.
        expected: the executor stopped the process itself (its stream manager restarted, or
            its spec changed): not a crash, it may restart at once.

    >>> policy = RestartPolicy(1.0, 8.0, 3)
    >>> rec = ProcessRecord(ProcessSpec("p", ("true",)), pid=7, started_at=100.0)
    >>> after = record_exit(rec, 101.0, policy, expected=False)
    >>> after.pid, after.crashes, after.restart_at
    (None, 1, 102.0)
    """
    if expected:
        return replace(record, pid=None, restart_at=now)
    streak = record.crashes if now - record.started_at < policy.max_secs else 0
    crashes = streak + 1
    return replace(record, pid=None, crashes=crashes, restart_at=now + policy.delay(crashes))


class Verb(enum.Enum):
    """What to do with one process."""

    START = "start"
    KILL = "kill"
    KEEP = "keep"
    WAIT = "wait"
    GIVE_UP = "give up"


@dataclass(frozen=True)
class Action:
    """One decision of `reconcile`.

    Attributes:
        verb: what to do.
        name: the process it concerns.
        reason: why, for the log.
        at: for WAIT, the time the restart is due (None: waiting for a dependency).
    """

    verb: Verb
    name: str
    reason: str = ""
    at: float | None = None


def _kill_reason(
    spec: ProcessSpec, record: ProcessRecord, records: Mapping[str, ProcessRecord]
) -> str | None:
    if record.spec != spec:
        return "its command line changed"
    if spec.depends_on is None:
        return None
    dep = records.get(spec.depends_on)
    if dep is None or not dep.running:
        return f"{spec.depends_on} is not running"
    if dep.started_at > record.started_at:
        return f"{spec.depends_on} restarted"
    return None


def reconcile(
    desired: Mapping[str, ProcessSpec],
    records: Mapping[str, ProcessRecord],
    now: float,
    policy: RestartPolicy,
) -> list[Action]:
    """Diff the desired processes against the known ones.

    Returns one action per desired process (in ``desired`` order), then a KILL per running
    process that is no longer desired:

    * running, same spec, its dependency running and not restarted since: KEEP;
    * running otherwise: KILL (it is restarted once it has exited);
    * not running, crashed more than ``policy.max_attempts`` times in a row: GIVE_UP;
    * not running, its dependency down: WAIT (``at`` None);
    * not running, its back-off not over: WAIT until ``restart_at``;
    * otherwise (never started, or due): START.

    >>> policy = RestartPolicy(1.0, 8.0, 3)
    >>> desired = {"stmgr-1": ProcessSpec("stmgr-1", ("s",)),
    ...            "task": ProcessSpec("task", ("t",), depends_on="stmgr-1")}
    >>> [(a.verb.value, a.name) for a in reconcile(desired, {}, 0.0, policy)]
    [('start', 'stmgr-1'), ('wait', 'task')]
    """
    actions: list[Action] = []
    for name, spec in desired.items():
        record = records.get(name)
        if record is not None and record.running:
            reason = _kill_reason(spec, record, records)
            actions.append(
                Action(Verb.KEEP, name) if reason is None else Action(Verb.KILL, name, reason)
            )
            continue
        dep = records.get(spec.depends_on) if spec.depends_on is not None else None
        if record is not None and record.crashes > policy.max_attempts:
            reason = (
                f"it crashed {record.crashes} times in a row (limit {policy.max_attempts} restarts)"
            )
            actions.append(Action(Verb.GIVE_UP, name, reason))
        elif spec.depends_on is not None and (dep is None or not dep.running):
            actions.append(Action(Verb.WAIT, name, f"waiting for {spec.depends_on}"))
        elif record is not None and now < record.restart_at:
            actions.append(Action(Verb.WAIT, name, "back-off", at=record.restart_at))
        else:
            actions.append(Action(Verb.START, name))
    for name, record in records.items():
        if name not in desired and record.running:
            actions.append(Action(Verb.KILL, name, "no longer in the packing plan"))
    return actions
