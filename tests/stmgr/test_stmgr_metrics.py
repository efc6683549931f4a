"""The stream manager's metrics message: its effectively-once counts."""

from __future__ import annotations

from heron_core.stmgr._metrics import StMgrMetrics


def _values(stateful: tuple[int, int] | None) -> dict[str, str]:
    metrics = StMgrMetrics("stmgr-1", "127.0.0.1", [])
    message = metrics.collect(1.0, 1000, [], {}, 0, stateful)
    return {m.name: m.value for m in message.metrics}


def test_effectively_once_counts_are_published_only_for_a_stateful_topology() -> None:
    published = _values((7, 1))
    assert published["__dropped_during_restore"] == "7"
    assert published["__checkpoints_given_up"] == "1"
    plain = _values(None)
    assert "__dropped_during_restore" not in plain and "__checkpoints_given_up" not in plain
