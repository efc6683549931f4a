"""Reading a running topology's metrics from its tmanager's stats port, per component."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import zmq

from heron_core.network import ProtocolError, decode, encode
from heron_core.proto import common_pb2, metrics_pb2, tmanager_pb2
from heron_core.statemgr import StateManager

__all__ = ["ComponentStats", "MetricsClient", "component_stats"]

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
        rate: throughput per second since the previous sample (0.0 for the first).
    """

    component: str
    is_spout: bool
    instances: int = 0
    emitted: int = 0
    executed: int = 0
    acked: int = 0
    failed: int = 0
    rate: float = 0.0

    @property
    def throughput(self) -> int:
        """The counter the rate is about: emitted for a spout, executed for a bolt."""
        return self.emitted if self.is_spout else self.executed


def _number(value: str) -> int:
    try:
        return int(float(value))
    except ValueError:
        return 0


def component_stats(
    components: Mapping[str, bool],
    messages: Iterable[metrics_pb2.MetricPublisherPublishMessage],
    previous: Sequence[ComponentStats] = (),
    elapsed: float = 0.0,
) -> list[ComponentStats]:
    """Sum the instances' cumulative counters per component, in ``components`` order.

    Args:
        components: component name -> is a spout, in display order.
        messages: the newest metrics message of each instance (a ``MetricsResponse``).
        previous: the result of the previous call, for the rates.
        elapsed: seconds since the previous call.

    >>> from heron_core.proto import metrics_pb2 as m
    >>> def msg(component, instance, **metrics):
    ...     return m.MetricPublisherPublishMessage(
    ...         publisher=m.MetricPublisher(component_name=component, instance_id=instance),
    ...         metrics=[m.MetricDatum(name=k, value=v) for k, v in metrics.items()])
    >>> first = component_stats({"word": True}, [msg("word", "a", **{"__emit-count/default": "5"})])
    >>> later = component_stats({"word": True}, [
    ...     msg("word", "a", **{"__emit-count/default": "25"}),
    ...     msg("word", "b", **{"__emit-count/default": "5"})], first, elapsed=2.0)
    >>> later[0].instances, later[0].emitted, later[0].rate
    (2, 30, 12.5)
    """
    totals = {name: dict.fromkeys(_COUNTERS.values(), 0) for name in components}
    instances = dict.fromkeys(components, 0)
    for message in messages:
        component = message.publisher.component_name
        if component not in totals:
            continue
        instances[component] += 1
        for datum in message.metrics:
            for prefix, counter in _COUNTERS.items():
                if datum.name.startswith(prefix):
                    totals[component][counter] += _number(datum.value)
    before = {s.component: s for s in previous}
    result = []
    for name, is_spout in components.items():
        counts = totals[name]
        throughput = counts["emitted" if is_spout else "executed"]
        old = before.get(name)
        rate = (throughput - old.throughput) / elapsed if old is not None and elapsed > 0 else 0.0
        result.append(
            ComponentStats(name, is_spout, instances[name], **counts, rate=max(rate, 0.0))
        )
    return result


class MetricsClient:
    """Asks a topology's tmanager (found through the state manager) for its metrics.

    Args:
        state: a started state manager.
        topology_name: the topology's name.
        timeout: seconds to wait for an answer.
    """

    def __init__(self, state: StateManager, topology_name: str, timeout: float = 2.0) -> None:
        self._state = state
        self._name = topology_name
        self._timeout_ms = int(timeout * 1000)
        self._context = zmq.Context()
        self._socket: zmq.Socket[bytes] | None = None
        self._endpoint = ""

    def fetch(self) -> list[metrics_pb2.MetricPublisherPublishMessage] | None:
        """The newest metrics message of every instance, or None when the tmanager is not
        (yet) known or did not answer in time. Never raises for an absent tmanager."""
        location = self._state.get_tmanager_location(self._name)
        if location is None:
            self._drop()
            return None
        endpoint = f"tcp://{location.host}:{location.stats_port}"
        if self._socket is None or endpoint != self._endpoint:
            self._drop()
            self._socket = self._context.socket(zmq.DEALER)
            self._socket.setsockopt(zmq.LINGER, 0)
            self._socket.connect(endpoint)
            self._endpoint = endpoint
        self._socket.send_multipart(encode(tmanager_pb2.MetricsRequest()))
        if not self._socket.poll(self._timeout_ms):
            self._drop()  # a late answer must not be read as the next one's
            return None
        try:
            response = decode(self._socket.recv_multipart())
        except ProtocolError as exc:
            log.warning("unreadable answer from the tmanager at %s: %s", endpoint, exc)
            return None
        if not isinstance(response, tmanager_pb2.MetricsResponse) or (
            response.status.status != common_pb2.OK
        ):
            log.warning("unexpected answer from the tmanager at %s: %s", endpoint, response)
            return None
        return list(response.messages)

    def _drop(self) -> None:
        if self._socket is not None:
            self._socket.close(linger=0)
            self._socket = None

    def close(self) -> None:
        """Close the socket and the zmq context. Idempotent."""
        self._drop()
        if not self._context.closed:
            self._context.term()
