"""The metrics sink interface: where a container's metrics manager sends what it receives.

A sink is named in ``heron.metrics.sinks`` (Heron's metrics_sinks.yaml shape) by a built-in
short name (``tmanager``, ``file``, ``prometheus``) or a ``package.module:Class`` path. The
metrics manager builds each sink once, hands it every message its instances and stream manager
publish, and calls `MetricsSink.flush` every ``flush-frequency-ms`` of its block. Every call is
made on the metrics manager's one thread; a sink that needs a thread of its own (an HTTP
server) starts it in its constructor and ends it in `MetricsSink.close`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from heron_core.errors import ConfigurationError
from heron_core.metricsmgr._types import MetricTypes
from heron_core.network import Transport
from heron_core.proto import metrics_pb2, tmanager_pb2

__all__ = ["COMMON_OPTIONS", "MetricsSink", "SinkContext", "check_options"]

COMMON_OPTIONS = frozenset({"class", "flush-frequency-ms"})
"""Options every sink block has; a sink names its own in `MetricsSink.OPTIONS`."""


@dataclass
class SinkContext:
    """What a sink may use of its metrics manager.

    Attributes:
        topology_name: the topology's name.
        topology_id: its id.
        cluster: the cluster it runs on.
        container: this container's id.
        working_dir: the container's working directory W.
        host: the address this container's daemons bind.
        config: the topology's config (fully defaulted).
        types: how each metric aggregates (`MetricTypes`).
        zmq_context: the metrics manager's zmq context, for sinks that open sockets.
        transport: the topology's transport (CURVE keys) for TCP sockets.
        tmanager_location: the newest tmanager location (None until known); a sink that talks
            to the tmanager reads it on every flush.
    """

    topology_name: str
    topology_id: str
    cluster: str
    container: int
    working_dir: Path
    host: str
    config: Mapping[str, Any]
    types: MetricTypes
    zmq_context: zmq.Context[zmq.Socket[bytes]]
    transport: Transport
    tmanager_location: Callable[[], tmanager_pb2.TManagerLocation | None]


class MetricsSink(ABC):
    """One sink. Subclasses take ``(name, options, context)`` and list their own options.

    Args:
        name: the sink's name in ``heron.metrics.sinks`` (``"file-sink"``), for messages.
        options: its block (``class`` and ``flush-frequency-ms`` included), already checked
            by `check_options`.
        context: the metrics manager's `SinkContext`.
    """

    OPTIONS: frozenset[str] = frozenset()
    """The options of its block beyond `COMMON_OPTIONS`; any other is refused at submit."""

    @classmethod
    def check(cls, kind: str, options: Mapping[str, Any]) -> None:
        """Refuse bad values of the sink's own options (called at submit, and again when the
        metrics manager starts); ``kind`` names the block in messages.

        Raises:
            ConfigurationError: naming the block, the option and the value.
        """
        return

    def __init__(self, name: str, options: Mapping[str, Any], context: SinkContext) -> None:
        self.name = name
        self.options = dict(options)
        self.context = context

    @abstractmethod
    def process(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        """Take one published message (values of one interval of one publisher). Must not
        block: keep it until `flush`."""

    @abstractmethod
    def flush(self) -> None:
        """Send or write what `process` took since the last flush."""

    def close(self) -> None:
        """Flush and release what the sink holds (threads, sockets, files). Called once."""
        self.flush()


def check_options(kind: str, cls: type[MetricsSink], options: Mapping[str, Any]) -> None:
    """Refuse a sink block with an option ``cls`` does not know, or a bad flush frequency.

    Args:
        kind: what names the block in messages (``"config key 'heron.metrics.sinks', sink
            'file-sink'"``).

    Raises:
        ConfigurationError: naming the block and the option.
    """
    unknown = sorted(set(options) - COMMON_OPTIONS - cls.OPTIONS)
    if unknown:
        known = ", ".join(sorted(COMMON_OPTIONS | cls.OPTIONS))
        raise ConfigurationError(f"{kind}: unknown option(s) {', '.join(unknown)}; known: {known}")
    flush = options.get("flush-frequency-ms", 1000)
    if isinstance(flush, bool) or not isinstance(flush, int) or flush <= 0:
        raise ConfigurationError(
            f"{kind}: flush-frequency-ms must be a positive integer, got {flush!r}"
        )
    cls.check(kind, options)
