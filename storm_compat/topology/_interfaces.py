"""The component interfaces of ``org.apache.storm.topology``."""

from __future__ import annotations

import abc
from typing import Any

from storm_compat.spout import ISpout
from storm_compat.task import IBolt, TopologyContext
from storm_compat.topology._basic import BasicOutputCollector
from storm_compat.topology._declarer import OutputFieldsDeclarer
from storm_compat.tuple import Tuple

__all__ = ["IBasicBolt", "IComponent", "IRichBolt", "IRichSpout"]


class IComponent(abc.ABC):
    """What every spout and bolt declares: its output streams and its own config."""

    @abc.abstractmethod
    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declare every stream the component emits on (called by ``createTopology``)."""

    @abc.abstractmethod
    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """Config for this component only (e.g. its tick frequency), or None."""


class IRichSpout(ISpout, IComponent):
    """A spout of a ``TopologyBuilder`` topology (subclass ``BaseRichSpout``)."""


class IRichBolt(IBolt, IComponent):
    """A bolt that acks and anchors by itself (subclass ``BaseRichBolt``)."""


class IBasicBolt(IComponent):
    """A bolt whose emits are anchored to its input and whose input is acked for it
    (subclass ``BaseBasicBolt``).

    Contract: after ``execute`` returns the input is acked; if it raises
    ``FailedException`` the input is failed (``ReportedFailedException`` is also reported);
    any other exception ends the task (its tuples then time out).
    """

    @abc.abstractmethod
    def prepare(self, topoConf: dict[str, Any], context: TopologyContext) -> None:
        """Called once, before any ``execute``."""

    @abc.abstractmethod
    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        """Process one input tuple (tick tuples included)."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Release resources (not guaranteed to be called)."""
