"""``ISpout``: the interface of Storm's spouts (``org.apache.storm.spout.ISpout``)."""

from __future__ import annotations

import abc
from typing import Any

from storm_compat.spout._collector import SpoutOutputCollector
from storm_compat.task import TopologyContext

__all__ = ["ISpout"]


class ISpout(abc.ABC):
    """A source of tuples (see ``BaseRichSpout``).

    Contract: ``open`` is called once, first; then ``nextTuple``, ``ack``, ``fail``,
    ``activate`` and ``deactivate`` are called on one thread, never concurrently, and must
    not block. ``nextTuple`` is not called while the topology is deactivated or while the
    task's un-acked tuples reach ``topology.max.spout.pending``. ``ack``/``fail`` may name ids
    the spout no longer knows. ``close`` may be called at orderly shutdown.
    """

    @abc.abstractmethod
    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        """Called once with the effective config, the context and the collector to keep."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release resources (not guaranteed to be called)."""

    @abc.abstractmethod
    def activate(self) -> None:
        """The topology was activated: ``nextTuple`` calls resume."""

    @abc.abstractmethod
    def deactivate(self) -> None:
        """The topology was deactivated: no ``nextTuple`` until ``activate``."""

    @abc.abstractmethod
    def nextTuple(self) -> None:
        """Emit zero or more tuples; return at once when there is nothing to emit."""

    @abc.abstractmethod
    def ack(self, msgId: Any) -> None:
        """The tree of the tuple emitted with ``msgId`` completed."""

    @abc.abstractmethod
    def fail(self, msgId: Any) -> None:
        """The tree of the tuple emitted with ``msgId`` failed or timed out."""
