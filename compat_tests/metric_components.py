"""Storm components that register metrics and report errors (shipped as topology code, so
this module imports nothing but the facade)."""

from __future__ import annotations

from typing import Any

from storm_compat.metric.api import (
    AssignableMetric,
    CombinedMetric,
    CountMetric,
    ICombiner,
    MeanReducer,
    MultiCountMetric,
    MultiReducedMetric,
    ReducedMetric,
)
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import OutputFieldsDeclarer
from storm_compat.topology.base import BaseRichBolt
from storm_compat.tuple import Tuple


class Max(ICombiner):
    def identity(self) -> Any:
        return 0

    def combine(self, a: Any, b: Any) -> Any:
        return max(a, b)


class Seen:
    """An IMetric by duck typing: how many inputs so far (never reset, a gauge)."""

    def __init__(self) -> None:
        self.seen = 0

    def getValueAndReset(self) -> int:
        return self.seen


class MetricsBolt(BaseRichBolt):
    """Registers each of Storm's metric kinds; reports every tenth number as an error."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self.count = context.registerMetric("count", CountMetric(), 1)
        self.parity = context.registerMetric("parity", MultiCountMetric(), 1)
        self.mean = context.registerMetric("mean", ReducedMetric(MeanReducer()), 1)
        self.means = context.registerMetric("means", MultiReducedMetric(MeanReducer()), 1)
        self.peak = context.registerMetric("peak", CombinedMetric(Max()), 1)
        self.last = context.registerMetric("last", AssignableMetric(-1), 1)
        self.reduced = context.registerMetric("reduced", MeanReducer(), 1)  # wrapped for us
        self.seen = context.registerMetric("seen", Seen(), 1)

    def execute(self, input: Tuple) -> None:
        n = input.getInteger(0)
        key = "even" if n % 2 == 0 else "odd"
        self.count.incr()
        self.parity.scope(key).incrBy(1)
        self.mean.update(n)
        self.means.scope(key).update(n)
        self.peak.update(n)
        self.last.setValue(n)
        self.reduced.update(n)
        self.seen.seen += 1
        if n % 10 == 0:
            try:
                raise ValueError(f"round number {n}")
            except ValueError as exc:
                self.collector.reportError(exc)
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        pass
