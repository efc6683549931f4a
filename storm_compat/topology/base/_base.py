"""The base classes users subclass (Storm's ``org.apache.storm.topology.base``)."""

from __future__ import annotations

from typing import Any

from storm_compat.task import TopologyContext
from storm_compat.topology._interfaces import IBasicBolt, IComponent, IRichBolt, IRichSpout

__all__ = ["BaseBasicBolt", "BaseComponent", "BaseRichBolt", "BaseRichSpout"]


class BaseComponent(IComponent):
    """``getComponentConfiguration`` returns None; subclasses declare their outputs."""

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """No component-specific config (override to set, e.g., a tick frequency)."""
        return None


class BaseRichSpout(BaseComponent, IRichSpout):
    """A spout: implement ``open``, ``nextTuple`` and ``declareOutputFields``; ``ack``,
    ``fail``, ``activate``, ``deactivate`` and ``close`` do nothing unless overridden.

    >>> from storm_compat.tuple import Fields, Values
    >>> class Numbers(BaseRichSpout):
    ...     def open(self, conf, context, collector):
    ...         self.collector, self.n = collector, 0
    ...     def nextTuple(self):
    ...         self.n += 1
    ...         self.collector.emit(Values(self.n), self.n)
    ...     def declareOutputFields(self, declarer):
    ...         declarer.declare(Fields("n"))
    >>> Numbers().ack(1) is None
    True
    """

    def close(self) -> None:
        """Nothing to release."""

    def activate(self) -> None:
        """Nothing to do."""

    def deactivate(self) -> None:
        """Nothing to do."""

    def ack(self, msgId: Any) -> None:
        """Ignore the completion of ``msgId``."""

    def fail(self, msgId: Any) -> None:
        """Ignore the failure of ``msgId`` (no replay)."""


class BaseRichBolt(BaseComponent, IRichBolt):
    """A bolt that acks and anchors by itself: implement ``prepare``, ``execute`` and
    ``declareOutputFields``; ``cleanup`` does nothing unless overridden."""

    def cleanup(self) -> None:
        """Nothing to release."""


class BaseBasicBolt(BaseComponent, IBasicBolt):
    """A bolt whose emits are anchored to its input and whose input is acked after
    ``execute`` (failed on ``FailedException``): implement ``execute`` and
    ``declareOutputFields``.

    >>> from storm_compat.tuple import Fields, Values
    >>> class Split(BaseBasicBolt):
    ...     def execute(self, input, collector):
    ...         for word in input.getString(0).split():
    ...             collector.emit(Values(word))
    ...     def declareOutputFields(self, declarer):
    ...         declarer.declare(Fields("word"))
    >>> Split().getComponentConfiguration() is None
    True
    """

    def prepare(self, topoConf: dict[str, Any], context: TopologyContext) -> None:
        """Nothing to set up."""

    def cleanup(self) -> None:
        """Nothing to release."""
