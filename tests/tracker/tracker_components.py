"""The topology the tracker tests watch: a spout of numbers, a bolt with a user metric that
reports an error every 20 tuples and prints a marker line to its log."""

from __future__ import annotations

import time
from typing import Any

from heron_core.api import Bolt, Spout, Tuple
from heron_core.api.metrics import CountMetric

MARKER = "tracker-test bolt ready"
"""Printed by each `ReportingBolt` task when it starts (its log file holds it)."""

USER_METRIC = "seen-count"
"""The user metric `ReportingBolt` registers."""


LIMIT = 2000
"""How many numbers `NumberSpout` emits, so that the counts settle and can be compared."""


class NumberSpout(Spout):
    """Emits 0, 1, ..., LIMIT - 1 unreliably, one every 5 ms, then nothing."""

    outputs = ["n"]

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.n = 0

    def next_tuple(self) -> None:
        time.sleep(0.005)
        if self.n < LIMIT:
            self.emit([self.n])
            self.n += 1


class ReportingBolt(Bolt):
    """Counts tuples in the user metric `USER_METRIC`; reports ``ValueError("tuple <n> is
    bad")`` for every 20th tuple (handled, so the task goes on)."""

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.context = context
        self.seen = CountMetric()
        context.register_metric(USER_METRIC, self.seen, 1)
        print(MARKER, flush=True)

    def process(self, tup: Tuple) -> None:
        self.seen.incr()
        n = tup.values[0]
        if n % 20 == 0:
            try:
                raise ValueError(f"tuple {n} is bad")
            except ValueError as exc:
                self.context.report_error(exc)
