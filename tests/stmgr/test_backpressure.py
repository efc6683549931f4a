"""The stream manager's back-pressure state machine, on its own: no sockets, no clock."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heron_core.stmgr._backpressure import NO_CHANGE, BackPressure, Transition

HIGH, LOW = 100, 10


def test_an_outbox_between_the_watermarks_keeps_its_state() -> None:
    bp = BackPressure(HIGH, LOW)
    assert bp.queued("task-1", HIGH) == NO_CHANGE  # at the high watermark: not above it
    assert bp.queued("task-1", HIGH + 1) == Transition(announce=True, throttle=True, changed=True)
    assert bp.queued("task-1", LOW) == NO_CHANGE  # at the low watermark: not below it
    assert bp.initiated and bp.throttled and bp.causes == {"task-1"}
    assert bp.queued("task-1", LOW - 1) == Transition(announce=False, throttle=False, changed=True)
    assert bp.queued("task-1", 50) == NO_CHANGE  # rising again, but not above high
    assert not bp.throttled


def test_start_is_announced_once_for_many_causes_and_stop_after_the_last() -> None:
    bp = BackPressure(HIGH, LOW)
    assert bp.queued("task-1", 200).announce is True
    assert bp.queued("stmgr-2", 200) == Transition(changed=True)  # a second cause: no message
    assert bp.queued("task-1", 0) == Transition(changed=True)
    assert bp.closed("stmgr-2") == Transition(announce=False, throttle=False, changed=True)
    assert bp.closed("stmgr-2") == NO_CHANGE


def test_peers_throttle_the_spouts_until_every_one_stopped() -> None:
    bp = BackPressure(HIGH, LOW)
    assert bp.peer_started("stmgr-2") == Transition(throttle=True, changed=True)
    assert bp.peer_started("stmgr-2") == NO_CHANGE  # a repeated Start
    assert bp.peer_started("stmgr-3") == Transition(changed=True)
    assert bp.peer_stopped("stmgr-2") == Transition(changed=True)
    assert not bp.initiated and bp.throttled and bp.announcers == {"stmgr-3"}
    assert bp.peer_stopped("stmgr-3") == Transition(throttle=False, changed=True)
    assert bp.peer_stopped("stmgr-3") == NO_CHANGE  # a Stop without a Start


def test_a_new_peer_hears_start_only_while_this_stmgr_initiated_back_pressure() -> None:
    bp = BackPressure(HIGH, LOW)
    bp.peer_started("stmgr-2")
    assert not bp.greets("stmgr-4")  # throttled by a peer, but nothing to announce
    bp.queued("task-1", HIGH + 1)
    assert bp.greets("stmgr-4")


@pytest.mark.parametrize(("high", "low"), [(10, 10), (10, 11), (10, -1)])
def test_watermarks_out_of_order_are_refused(high: int, low: int) -> None:
    with pytest.raises(ValueError, match="low watermark"):
        BackPressure(high, low)


OUTBOXES = ["task-1", "task-2", "stmgr-2"]
PEERS = ["stmgr-2", "stmgr-3"]
events = st.lists(
    st.one_of(
        st.tuples(st.just("queued"), st.sampled_from(OUTBOXES), st.integers(0, 2 * HIGH)),
        st.tuples(st.just("closed"), st.sampled_from(OUTBOXES), st.just(0)),
        st.tuples(st.just("start"), st.sampled_from(PEERS), st.just(0)),
        st.tuples(st.just("stop"), st.sampled_from(PEERS), st.just(0)),
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(events)
def test_random_event_sequences_keep_the_invariants(
    sequence: list[tuple[str, str, int]],
) -> None:
    """Spouts are throttled iff some outbox here went above the high watermark and has not
    dropped below the low one since (nor closed), or some peer said Start and not Stop since;
    the announcements alternate Start/Stop and replay to whether this stmgr initiated it; the
    throttle outputs replay to the throttled state."""
    bp = BackPressure(HIGH, LOW)
    above: set[str] = set()  # the model
    started: set[str] = set()
    announced = throttled = False
    for kind, name, size in sequence:
        before = (set(above), set(started))
        if kind == "queued":
            transition = bp.queued(name, size)
            if size > HIGH:
                above.add(name)
            elif size < LOW:
                above.discard(name)
        elif kind == "closed":
            transition = bp.closed(name)
            above.discard(name)
        elif kind == "start":
            transition = bp.peer_started(name)
            started.add(name)
        else:
            transition = bp.peer_stopped(name)
            started.discard(name)
        assert transition.changed == ((above, started) != before)
        if transition.announce is not None:
            assert transition.announce != announced, "Start/Stop alternate"
            announced = transition.announce
        if transition.throttle is not None:
            assert transition.throttle != throttled, "throttle outputs are changes"
            throttled = transition.throttle
        assert bp.causes == above and bp.announcers == started
        assert bp.initiated == announced == bool(above)
        assert bp.throttled == throttled == bool(above or started)
