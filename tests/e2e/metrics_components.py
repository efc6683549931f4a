"""Components of the user-metrics end-to-end test (shipped as topology code)."""

from __future__ import annotations

from typing import Any

from heron_core.api import Bolt, Tuple
from heron_core.api.metrics import (
    CountMetric,
    MeanReducedMetric,
    MeanReducer,
    MultiCountMetric,
    MultiMeanReducedMetric,
    ReducedMetric,
)


class Running:
    """A user metric of its own kind (no metric_type: a gauge): the inputs seen so far."""

    def __init__(self) -> None:
        self.total = 0

    def get_value_and_reset(self) -> int:
        return self.total


class MetricBolt(Bolt):
    """Registers every heronpy metric class and a plain object; reports every tenth number."""

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self.context = context
        self.count = CountMetric()
        self.parity = MultiCountMetric()
        self.mean = MeanReducedMetric()
        self.means = MultiMeanReducedMetric()
        self.reduced = ReducedMetric(MeanReducer())
        self.running = Running()
        for name, metric in (
            ("count", self.count),
            ("parity", self.parity),
            ("mean", self.mean),
            ("means", self.means),
            ("reduced", self.reduced),
            ("running", self.running),
        ):
            context.register_metric(name, metric, 1)

    def process(self, tup: Tuple) -> None:
        n = tup.values[0]
        key = "even" if n % 2 == 0 else "odd"
        self.count.incr()
        self.parity.incr(key)
        self.mean.update(n)
        self.means.update(key, n)
        self.reduced.update(n)
        self.running.total += 1
        if n % 10 == 0:
            try:
                raise ValueError(f"number {n} is round")
            except ValueError as exc:
                self.context.report_error(exc)
