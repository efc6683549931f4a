"""Counters an instance keeps and publishes (names in heron_core/tmanager's contract)."""

from __future__ import annotations

import time
from collections import defaultdict

from heron_core.proto import metrics_pb2


class InstanceMetrics:
    """Cumulative counters and latency averages of one instance.

    Counters are bumped per batch, not per tuple, by the runtime.
    """

    def __init__(self, component: str, instance_id: str, index: int) -> None:
        self.counters: dict[str, int] = defaultdict(int)
        self._latency_sum: dict[str, float] = defaultdict(float)
        self._latency_n: dict[str, int] = defaultdict(int)
        self._publisher = metrics_pb2.MetricPublisher(
            component_name=component, instance_id=instance_id, instance_index=index
        )

    def add_latency(self, name: str, total_ms: float, count: int) -> None:
        self._latency_sum[name] += total_ms
        self._latency_n[name] += count

    def snapshot(self) -> metrics_pb2.MetricPublisherPublishMessage:
        message = metrics_pb2.MetricPublisherPublishMessage(
            publisher=self._publisher, timestamp=int(time.time() * 1000)
        )
        for name, value in self.counters.items():
            message.metrics.add(name=name, value=str(value))
        for name, total in self._latency_sum.items():
            n = self._latency_n[name]
            message.metrics.add(name=name, value=f"{total / n:.3f}" if n else "0")
        return message
