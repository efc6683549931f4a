"""The restart policy, exit bookkeeping and the reconcile diff, without processes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.errors import ConfigurationError
from heron_core.executor import (
    ProcessRecord,
    ProcessSpec,
    RestartPolicy,
    Verb,
    reconcile,
    record_exit,
)

POLICY = RestartPolicy(initial_secs=1.0, max_secs=8.0, max_attempts=3)
STMGR = ProcessSpec("stmgr-1", ("stmgr",))
TASK = ProcessSpec("task-1", ("task",), depends_on="stmgr-1")
DESIRED = {STMGR.name: STMGR, TASK.name: TASK}


def _verbs(records: dict[str, ProcessRecord], now: float = 100.0) -> dict[str, Verb]:
    return {a.name: a.verb for a in reconcile(DESIRED, records, now, POLICY)}


def _running(spec: ProcessSpec, started_at: float = 0.0, pid: int = 10) -> ProcessRecord:
    return ProcessRecord(spec, pid, started_at)


# --- policy --------------------------------------------------------------------------------


def test_backoff_doubles_up_to_the_maximum() -> None:
    assert [POLICY.delay(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


@given(
    initial=st.floats(0, 100),
    extra=st.floats(0, 100),
    crashes=st.integers(1, 10_000),
)
def test_backoff_is_monotonic_and_bounded(initial: float, extra: float, crashes: int) -> None:
    policy = RestartPolicy(initial, initial + extra, 5)
    assert initial <= policy.delay(crashes) <= initial + extra
    assert policy.delay(crashes) <= policy.delay(crashes + 1)


def test_policy_from_config_reads_the_executor_keys() -> None:
    config = {
        "heron.executor.restart.backoff.initial.secs": 0.5,
        "heron.executor.restart.backoff.max.secs": 4,
        "heron.executor.restart.max.attempts": 7,
    }
    assert RestartPolicy.from_config(config) == RestartPolicy(0.5, 4.0, 7)


def test_policy_from_config_names_a_missing_key() -> None:
    with pytest.raises(ConfigurationError, match=r"heron\.executor\.restart\.max\.attempts"):
        RestartPolicy.from_config(
            {
                "heron.executor.restart.backoff.initial.secs": 1.0,
                "heron.executor.restart.backoff.max.secs": 2.0,
            }
        )


def test_inconsistent_policy_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="initial_secs=5"):
        RestartPolicy(5.0, 1.0, 3)


# --- exits ---------------------------------------------------------------------------------


def test_crash_schedules_restart_after_backoff() -> None:
    record = record_exit(_running(TASK, started_at=10.0), 11.0, POLICY, expected=False)
    assert (record.pid, record.crashes, record.restart_at) == (None, 1, 12.0)
    again = record_exit(ProcessRecord(TASK, 11, 12.0, crashes=1), 13.0, POLICY, expected=False)
    assert (again.crashes, again.restart_at) == (2, 15.0)


def test_long_run_ends_the_crash_streak() -> None:
    old = ProcessRecord(TASK, 10, started_at=0.0, crashes=3)
    record = record_exit(old, POLICY.max_secs, POLICY, expected=False)
    assert (record.crashes, record.restart_at) == (1, POLICY.max_secs + 1.0)


def test_expected_exit_is_not_a_crash() -> None:
    old = ProcessRecord(TASK, 10, started_at=0.0, crashes=2)
    record = record_exit(old, 1.0, POLICY, expected=True)
    assert (record.pid, record.crashes, record.restart_at) == (None, 2, 1.0)


# --- reconcile -----------------------------------------------------------------------------


def test_fresh_container_starts_the_stmgr_and_waits_to_start_instances() -> None:
    actions = reconcile(DESIRED, {}, 0.0, POLICY)
    assert [(a.verb, a.name, a.at) for a in actions] == [
        (Verb.START, "stmgr-1", None),
        (Verb.WAIT, "task-1", None),
    ]


def test_instances_start_once_their_stmgr_runs() -> None:
    assert _verbs({"stmgr-1": _running(STMGR)}) == {"stmgr-1": Verb.KEEP, "task-1": Verb.START}


def test_healthy_processes_are_kept() -> None:
    records = {"stmgr-1": _running(STMGR), "task-1": _running(TASK, started_at=1.0, pid=11)}
    assert _verbs(records) == {"stmgr-1": Verb.KEEP, "task-1": Verb.KEEP}


def test_instances_are_killed_when_their_stmgr_dies() -> None:
    dead = record_exit(_running(STMGR), 50.0, POLICY, expected=False)
    records = {"stmgr-1": dead, "task-1": _running(TASK, started_at=1.0, pid=11)}
    actions = {a.name: a for a in reconcile(DESIRED, records, 50.0, POLICY)}
    assert actions["stmgr-1"].verb is Verb.WAIT
    assert actions["stmgr-1"].at == 51.0
    assert actions["task-1"].verb is Verb.KILL
    assert "stmgr-1 is not running" in actions["task-1"].reason


def test_instances_are_killed_when_their_stmgr_restarted_under_them() -> None:
    records = {"stmgr-1": _running(STMGR, started_at=5.0), "task-1": _running(TASK, 1.0, 11)}
    assert _verbs(records)["task-1"] is Verb.KILL


def test_dead_process_waits_for_its_backoff_then_starts() -> None:
    dead = record_exit(_running(STMGR), 50.0, POLICY, expected=False)
    assert _verbs({"stmgr-1": dead}, now=50.5)["stmgr-1"] is Verb.WAIT
    assert _verbs({"stmgr-1": dead}, now=51.0)["stmgr-1"] is Verb.START


def test_gives_up_after_max_attempts_restarts() -> None:
    within = ProcessRecord(STMGR, None, 0.0, crashes=POLICY.max_attempts, restart_at=0.0)
    assert _verbs({"stmgr-1": within})["stmgr-1"] is Verb.START
    beyond = ProcessRecord(STMGR, None, 0.0, crashes=POLICY.max_attempts + 1, restart_at=0.0)
    actions = {a.name: a for a in reconcile(DESIRED, {"stmgr-1": beyond}, 100.0, POLICY)}
    assert actions["stmgr-1"].verb is Verb.GIVE_UP
    assert "4 times in a row" in actions["stmgr-1"].reason


def test_zero_attempts_gives_up_on_the_first_crash() -> None:
    policy = RestartPolicy(1.0, 1.0, 0)
    dead = record_exit(_running(STMGR), 1.0, policy, expected=False)
    assert reconcile({"stmgr-1": STMGR}, {"stmgr-1": dead}, 99.0, policy)[0].verb is Verb.GIVE_UP


def test_changed_command_line_is_killed_and_undesired_process_too() -> None:
    changed = ProcessRecord(ProcessSpec("stmgr-1", ("old",)), 10, 0.0)
    stray = _running(ProcessSpec("gone", ("x",)), pid=12)
    actions = reconcile({"stmgr-1": STMGR}, {"stmgr-1": changed, "gone": stray}, 1.0, POLICY)
    assert [(a.verb, a.name) for a in actions] == [(Verb.KILL, "stmgr-1"), (Verb.KILL, "gone")]


@given(
    st.dictionaries(
        st.sampled_from(["stmgr-1", "task-1", "other"]),
        st.tuples(st.booleans(), st.floats(0, 100), st.integers(0, 10), st.floats(0, 200)),
    ),
    st.floats(0, 200),
)
def test_every_desired_process_gets_exactly_one_action(
    raw: dict[str, tuple[bool, float, int, float]], now: float
) -> None:
    specs = {**DESIRED, "other": ProcessSpec("other", ("o",))}
    records = {
        name: ProcessRecord(specs[name], 1 if alive else None, started, crashes, restart_at)
        for name, (alive, started, crashes, restart_at) in raw.items()
    }
    actions = reconcile(DESIRED, records, now, POLICY)
    names = [a.name for a in actions]
    assert len(names) == len(set(names))
    assert set(DESIRED) <= set(names)
    for action in actions:
        record = records.get(action.name)
        if action.verb in (Verb.KILL, Verb.KEEP):
            assert record is not None and record.running
        if action.verb is Verb.START:
            assert record is None or (not record.running and record.restart_at <= now)
            dep = DESIRED[action.name].depends_on
            assert dep is None or records[dep].running
