"""Stateful bolts: Storm's ``IStatefulComponent`` and ``IStatefulBolt`` (exported by
``storm_compat.topology``, as Storm's ``org.apache.storm.topology`` has them) and
``BaseStatefulBolt`` (``org.apache.storm.topology.base``).

A stateful bolt's task calls, in this order (the contract Storm's ``StatefulBoltExecutor``
gives, on Heron's checkpoints):

* ``prepare(topoConf, context, collector)`` once, then ``initState(state)`` once with its
  `storm_compat.state.KeyValueState` (holding the newest consistent checkpoint's key/values,
  empty at first), before any ``execute``;
* before each checkpoint: ``prePrepare(txid)``, then ``preCommit(txid)``; the state's
  committed key/values are then saved. ``txid`` grows with each checkpoint;
* after a failure anywhere in the topology: ``preRollback()``, and the state's contents are
  replaced, in the same object, by the key/values of the checkpoint rolled back to (neither
  ``prepare`` nor ``initState`` again); input arriving after it is replayed from there;
* ``cleanup()`` at shutdown only.

A topology with a stateful bolt runs in ``EFFECTIVELY_ONCE`` mode (set for it when its config
does not name a mode); its checkpoint interval is Storm's
``topology.state.checkpoint.interval.ms`` (default 1000).

>>> from storm_compat.tuple import Fields, Values
>>> class WordCount(BaseStatefulBolt):
...     def initState(self, state):
...         self.counts = state
...     def prepare(self, topoConf, context, collector):
...         self.collector = collector
...     def execute(self, input):
...         word = input.getString(0)
...         self.counts.put(word, self.counts.get(word, 0) + 1)
...         self.collector.emit(input, Values(word, self.counts.get(word)))
...         self.collector.ack(input)
...     def declareOutputFields(self, declarer):
...         declarer.declare(Fields("word", "count"))
>>> WordCount().getComponentConfiguration() is None
True
"""

from __future__ import annotations

import abc
from typing import Any, Generic, TypeVar

from storm_compat.state._state import State
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology._declarer import OutputFieldsDeclarer
from storm_compat.topology._interfaces import IComponent
from storm_compat.tuple import Tuple

__all__ = ["BaseStatefulBolt", "IStatefulBolt", "IStatefulComponent"]

T = TypeVar("T", bound=State)


class IStatefulComponent(IComponent, Generic[T]):
    """A component whose state (a `storm_compat.state.State`) the framework saves and
    restores."""

    @abc.abstractmethod
    def initState(self, state: T) -> None:
        """Called once, after ``prepare`` and before the first ``execute``, with the state
        of the newest consistent checkpoint (empty at first); keep it and write into it."""

    @abc.abstractmethod
    def preCommit(self, txid: int) -> None:
        """Called just before the framework commits the state of transaction ``txid``."""

    @abc.abstractmethod
    def prePrepare(self, txid: int) -> None:
        """Called just before the framework prepares the state of transaction ``txid``."""

    @abc.abstractmethod
    def preRollback(self) -> None:
        """Called just before the framework rolls the state back to the last committed
        (checkpointed) one."""


class IStatefulBolt(IStatefulComponent[T]):
    """A bolt with state: ``prepare``, ``execute`` and ``cleanup`` as a rich bolt's, plus the
    hooks of `IStatefulComponent` (subclass ``BaseStatefulBolt``). Add it with
    ``TopologyBuilder.setBolt``. As in Storm, it anchors its emits and acks its inputs."""

    @abc.abstractmethod
    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Called once, before ``initState``."""

    @abc.abstractmethod
    def execute(self, input: Tuple) -> None:
        """Process one input tuple (tick tuples included)."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Release resources when the task shuts down (not guaranteed to be called)."""


class BaseStatefulBolt(IStatefulBolt[T]):
    """A stateful bolt: implement ``initState`` and ``execute`` (and
    ``declareOutputFields`` if it emits); the other methods do nothing unless overridden."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Nothing to set up."""

    def cleanup(self) -> None:
        """Nothing to release."""

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """No output streams."""

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """No component-specific config."""
        return None

    def preCommit(self, txid: int) -> None:
        """Nothing to do before a commit."""

    def prePrepare(self, txid: int) -> None:
        """Nothing to do before a prepare."""

    def preRollback(self) -> None:
        """Nothing to do before a rollback."""
