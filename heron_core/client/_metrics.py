"""Reading a running topology's metrics from its tmanager's stats port, per component."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from heron_core.client._tmanager import TManagerClient
from heron_core.proto import common_pb2, metrics_pb2, tmanager_pb2
from heron_core.statemgr import StateManager

__all__ = ["ComponentStats", "MetricsClient", "RateMeter", "component_stats"]

log = logging.getLogger(__name__)

_COUNTERS = {
    "__emit-count/": "emitted",
    "__execute-count/": "executed",
    "__ack-count/": "acked",
    "__fail-count/": "failed",
}


@dataclass(frozen=True)
class ComponentStats:
    """Cumulative counters of one component, summed over its instances.

    Attributes:
        component: the component's name.
        is_spout: whether it is a spout (its throughput is what it emits) or a bolt (what it
            executes).
        instances: how many of its instances reported.
        emitted: tuples emitted, all streams.
        executed: tuples executed, all inputs.
        acked: tuples acked.
        failed: tuples failed.
        rate: throughput per second over each instance's latest metrics interval (see
            `RateMeter`; 0.0 without a meter).
        restarts: times its instances were started again (from the executors' status).
    """

    component: str
    is_spout: bool
    instances: int = 0
    emitted: int = 0
    executed: int = 0
    acked: int = 0
    failed: int = 0
    rate: float = 0.0
    restarts: int = 0

    @property
    def throughput(self) -> int:
        """The counter the rate is about: emitted for a spout, executed for a bolt."""
        return self.emitted if self.is_spout else self.executed


def _number(value: str) -> int:
    try:
        return int(float(value))
    except ValueError:
        return 0


@dataclass(frozen=True)
class _Sample:
    timestamp_ms: int
    count: int
    rate: float


class RateMeter:
    """Per-instance rates from the instances' own metrics messages.

    An instance publishes its cumulative counters every ``heron.metrics.export.interval.sec``,
    stamped with the time it took them; the stream manager and the topology manager pass the
    newest on with a delay of their own. A rate is therefore taken between two messages of
    the same instance, over the time between their stamps, never over the time between two
    reads of a client (two reads often see the same message, or messages a varying time
    apart). An instance's first message (also its first after a restart, when its counters
    start over) counts what it did in its first interval, ``first_interval`` seconds. The
    same message read again keeps its rate; an instance whose newest message is older than
    ``stale_after`` seconds (dead, or stuck in user code) counts 0.

    Args:
        first_interval: seconds an instance's first message covers (the export interval).
        stale_after: age in seconds past which an instance's message no longer counts
            (default: five export intervals, at least 5 s).
        clock: wall-clock seconds (the stamps are ``time.time()`` of the instances' host).

    >>> meter = RateMeter(first_interval=1.0, clock=lambda: 10.0)
    >>> meter.rate("word_1", 9_000, 500), meter.rate("word_1", 9_000, 500)
    (500.0, 500.0)
    >>> meter.rate("word_1", 9_500, 1_500)
    2000.0
    """

    def __init__(
        self,
        first_interval: float,
        stale_after: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._first = max(first_interval, 1e-3)
        self._stale_ms = 1000.0 * (
            stale_after if stale_after is not None else max(5.0, 5 * first_interval)
        )
        self._clock = clock
        self._samples: dict[str, _Sample] = {}

    def rate(self, instance: str, timestamp_ms: int, count: int) -> float:
        """The rate of ``instance`` whose newest message, stamped ``timestamp_ms``, holds the
        cumulative ``count``."""
        before = self._samples.get(instance)
        if before is not None and timestamp_ms == before.timestamp_ms and count == before.count:
            rate = before.rate
        elif before is None or count < before.count or timestamp_ms <= before.timestamp_ms:
            rate = count / self._first  # its first message, or its first since a restart
        else:
            rate = (count - before.count) * 1000.0 / (timestamp_ms - before.timestamp_ms)
        self._samples[instance] = _Sample(timestamp_ms, count, rate)
        if self._clock() * 1000.0 - timestamp_ms > self._stale_ms:
            return 0.0
        return rate


def component_stats(
    components: Mapping[str, bool],
    messages: Iterable[metrics_pb2.MetricPublisherPublishMessage],
    meter: RateMeter | None = None,
) -> list[ComponentStats]:
    """Sum the instances' cumulative counters per component, in ``components`` order, with
    the rates of ``meter`` (0.0 without one).

    Args:
        components: component name -> is a spout, in display order.
        messages: the newest metrics message of each instance (a ``MetricsResponse``).
        meter: the meter of the previous calls (one per topology run).

    >>> from heron_core.proto import metrics_pb2 as m
    >>> def msg(component, instance, at_ms, **metrics):
    ...     return m.MetricPublisherPublishMessage(
    ...         publisher=m.MetricPublisher(component_name=component, instance_id=instance),
    ...         timestamp=at_ms,
    ...         metrics=[m.MetricDatum(name=k, value=v) for k, v in metrics.items()])
    >>> meter = RateMeter(first_interval=1.0, clock=lambda: 3.0)
    >>> first = component_stats({"word": True}, [
    ...     msg("word", "a", 1_000, **{"__emit-count/default": "5"})], meter)
    >>> later = component_stats({"word": True}, [
    ...     msg("word", "a", 2_000, **{"__emit-count/default": "25"}),
    ...     msg("word", "b", 2_000, **{"__emit-count/default": "5"})], meter)
    >>> first[0].rate, (later[0].instances, later[0].emitted, later[0].rate)
    (5.0, (2, 30, 25.0))
    """
    totals = {name: dict.fromkeys(_COUNTERS.values(), 0) for name in components}
    instances = dict.fromkeys(components, 0)
    rates = dict.fromkeys(components, 0.0)
    for message in messages:
        component = message.publisher.component_name
        if component not in totals:
            continue
        instances[component] += 1
        mine = dict.fromkeys(_COUNTERS.values(), 0)
        for datum in message.metrics:
            for prefix, counter in _COUNTERS.items():
                if datum.name.startswith(prefix):
                    mine[counter] += _number(datum.value)
        for counter, value in mine.items():
            totals[component][counter] += value
        if meter is not None:
            throughput = mine["emitted" if components[component] else "executed"]
            rates[component] += meter.rate(
                message.publisher.instance_id, message.timestamp, throughput
            )
    return [
        ComponentStats(name, is_spout, instances[name], **totals[name], rate=rates[name])
        for name, is_spout in components.items()
    ]


class MetricsClient:
    """Asks a topology's tmanager (found through the state manager) for its metrics.

    Args:
        state: a started state manager.
        topology_name: the topology's name.
        timeout: seconds to wait for an answer.
    """

    def __init__(self, state: StateManager, topology_name: str, timeout: float = 2.0) -> None:
        self._tmanager = TManagerClient(state, topology_name, timeout)

    def fetch(self) -> list[metrics_pb2.MetricPublisherPublishMessage] | None:
        """The newest metrics message of every instance, or None when the tmanager is not
        (yet) known or did not answer in time. Never raises for an absent tmanager.

        Raises:
            ConfigurationError: the topology's key pair cannot be read.
        """
        response = self._tmanager.ask(tmanager_pb2.MetricsRequest())
        if response is None:
            return None
        if not isinstance(response, tmanager_pb2.MetricsResponse) or (
            response.status.status != common_pb2.OK
        ):
            where = self._tmanager.endpoint
            log.warning("unexpected answer from the tmanager at %s: %s", where, response)
            return None
        return list(response.messages)

    def close(self) -> None:
        """Close the connection. Idempotent."""
        self._tmanager.close()
