"""A spout task's trees in flight: every root leaves exactly once."""

from __future__ import annotations

from heron_core.instance._acking import InFlight


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_complete_returns_only_roots_in_flight_and_each_once() -> None:
    clock = Clock()
    flight = InFlight(clock)
    flight.add(1, "a", "default")
    clock.now = 101.0
    flight.add(2, "b", "other")
    assert flight.complete([2, 7, 1]) == [("b", "other", 101.0), ("a", "default", 100.0)]
    assert flight.complete([1, 2]) == [] and len(flight) == 0
    assert flight.failed(1) is None


def test_expired_yields_the_oldest_first_and_reset_restarts_the_timeout() -> None:
    clock = Clock()
    flight = InFlight(clock)
    for root in (1, 2, 3):
        flight.add(root, f"m{root}", "default")
        clock.now += 1.0
    flight.reset(1)  # now the youngest
    clock.now += 2.5
    assert list(flight.expired(3.0)) == [("m2", "default"), ("m3", "default")]
    assert flight.failed(1) == ("m1", "default") and len(flight) == 0
