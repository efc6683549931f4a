"""Bolt-side ack counting: process latency settles per batch, without a clock read per ack."""

from __future__ import annotations

import pytest

from heron_core.instance._anchoring import InputStats


def test_settle_counts_each_outcome_once_from_its_receipt_to_the_settle_time() -> None:
    stats = InputStats()
    for received in (10.0, 10.5):  # two acks of tuples received at 10.0 and 10.5
        stats.acked += 1
        stats.received_s += received
    stats.failed += 1
    stats.received_s += 11.0
    stats.settle(12.0)
    assert stats.settled == 3
    assert stats.process_s == pytest.approx(2.0 + 1.5 + 1.0)
    stats.settle(20.0)  # nothing new: nothing changes
    assert (stats.settled, stats.process_s) == (3, pytest.approx(4.5))
    stats.acked += 1
    stats.received_s += 19.0
    stats.settle(20.0)
    assert (stats.settled, stats.process_s) == (4, pytest.approx(5.5))
