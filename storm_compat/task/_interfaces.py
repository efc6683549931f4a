"""``IBolt``: the interface of Storm's rich bolts (``org.apache.storm.task.IBolt``)."""

from __future__ import annotations

import abc
from typing import Any

from storm_compat.task._collector import OutputCollector
from storm_compat.task._context import TopologyContext
from storm_compat.tuple import Tuple

__all__ = ["IBolt"]


class IBolt(abc.ABC):
    """A bolt that acks, fails and anchors by itself (see ``BaseRichBolt``).

    Contract: ``prepare`` is called once, before any ``execute``; ``execute`` is called for
    each input tuple (tick tuples included: check ``TupleUtils.isTick``), on one thread, and
    must ack or fail every input; ``cleanup`` may be called at orderly shutdown (not
    guaranteed).
    """

    @abc.abstractmethod
    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Called once with the effective config, the context and the collector to keep."""

    @abc.abstractmethod
    def execute(self, input: Tuple) -> None:
        """Process one input tuple."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Release resources (not guaranteed to be called)."""
