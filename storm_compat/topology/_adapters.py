"""Native components that run Storm components: the kernel only runs ``heron_core.api``
spouts and bolts, so each Storm spout or bolt is pickled inside one of these.

The runtime builds the adapter, sets its ``_collector`` and calls ``initialize``; the adapter
wraps the kernel's collector and context in Storm's and calls ``open``/``prepare``, then
translates every callback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heron_core.api import Bolt, CustomGrouping, GlobalStreamId, Spout, Stream
from heron_core.api import TopologyContext as NativeContext
from heron_core.api import Tuple as NativeTuple
from heron_core.api.constants import SYSTEM_COMPONENT, TICK_STREAM
from heron_core.errors import UserCodeError
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.spout import ISpout, SpoutOutputCollector
from storm_compat.task import IBolt, OutputCollector, TopologyContext
from storm_compat.topology._basic import (
    BasicOutputCollector,
    FailedException,
    ReportedFailedException,
)
from storm_compat.topology._interfaces import IBasicBolt
from storm_compat.tuple import Fields, Tuple

__all__ = ["BasicBoltAdapter", "BoltAdapter", "CustomGroupingAdapter", "SpoutAdapter"]

TICK_FIELDS = Fields("rate_secs")
"""The fields of Storm's tick stream."""


def _where(context: NativeContext) -> str:
    return (
        f"topology {context.get_topology_name()!r}, component {context.get_component_id()!r}, "
        f"task {context.get_task_id()}"
    )


def _setup(where: str, component: object, method: str, *args: Any) -> None:
    """Call the user's ``open``/``prepare``; wrap what it raises in a UserCodeError."""
    try:
        getattr(component, method)(*args)
    except Exception as exc:
        raise UserCodeError(
            f"{where}: {type(component).__qualname__}.{method}() raised {exc!r}"
        ) from exc


class SpoutAdapter(Spout):
    """Runs a Storm spout: ``open`` in ``initialize``, ``nextTuple`` in ``next_tuple``, and
    ``ack``/``fail``/``activate``/``deactivate``/``close`` as they come."""

    def __init__(self, spout: ISpout, outputs: Sequence[Stream]) -> None:
        self.spout = spout
        self.outputs = list(outputs)

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        where = _where(context)
        collector = SpoutOutputCollector(self._collector, where, bool(config.get("topology.debug")))
        _setup(where, self.spout, "open", config, TopologyContext(context), collector)

    def next_tuple(self) -> None:
        self.spout.nextTuple()

    def ack(self, tup_id: Any) -> None:
        self.spout.ack(tup_id)

    def fail(self, tup_id: Any) -> None:
        self.spout.fail(tup_id)

    def activate(self) -> None:
        self.spout.activate()

    def deactivate(self) -> None:
        self.spout.deactivate()

    def close(self) -> None:
        self.spout.close()


class _StormBolt(Bolt):
    """What both bolt adapters share: Storm tuples with the fields of their source stream."""

    def __init__(self, outputs: Sequence[Stream]) -> None:
        self.outputs = list(outputs)

    def _attach(self, config: dict[str, Any], context: NativeContext) -> str:
        where = _where(context)
        self._context = context
        self._fields: dict[tuple[str, str], Fields] = {}
        self._out = OutputCollector(self._collector, where, bool(config.get("topology.debug")))
        return where

    def _wrap(self, tup: NativeTuple) -> Tuple:
        key = (tup.component, tup.stream)
        fields = self._fields.get(key)
        if fields is None:
            if key == (SYSTEM_COMPONENT, TICK_STREAM):
                fields = TICK_FIELDS
            else:
                fields = Fields(self._context.get_output_fields(*key))
            self._fields[key] = fields
        return Tuple(tup, fields)


class BoltAdapter(_StormBolt):
    """Runs a Storm rich bolt: ``prepare`` in ``initialize``; every input, ticks included,
    goes to ``execute``; ``cleanup`` in ``close``."""

    def __init__(self, bolt: IBolt, outputs: Sequence[Stream]) -> None:
        super().__init__(outputs)
        self.bolt = bolt

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        where = self._attach(config, context)
        _setup(where, self.bolt, "prepare", config, TopologyContext(context), self._out)

    def process(self, tup: NativeTuple) -> None:
        self.bolt.execute(self._wrap(tup))

    def process_tick(self, tup: NativeTuple) -> None:
        self.bolt.execute(self._wrap(tup))

    def close(self) -> None:
        self.bolt.cleanup()


class BasicBoltAdapter(_StormBolt):
    """Runs a Storm basic bolt: emits are anchored to the input, which is acked after
    ``execute`` returns and failed when it raises ``FailedException``."""

    def __init__(self, bolt: IBasicBolt, outputs: Sequence[Stream]) -> None:
        super().__init__(outputs)
        self.bolt = bolt

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        where = self._attach(config, context)
        self._basic = BasicOutputCollector(self._out)
        _setup(where, self.bolt, "prepare", config, TopologyContext(context))

    def process(self, tup: NativeTuple) -> None:
        storm_tuple = self._wrap(tup)
        self._basic.setContext(storm_tuple)
        try:
            self.bolt.execute(storm_tuple, self._basic)
        except FailedException as exc:
            if isinstance(exc, ReportedFailedException):
                self._out.reportError(exc)
            self._out.fail(storm_tuple)
        else:
            self._out.ack(storm_tuple)

    def process_tick(self, tup: NativeTuple) -> None:
        self.process(tup)

    def close(self) -> None:
        self.bolt.cleanup()


class CustomGroupingAdapter(CustomGrouping):
    """Runs a Storm ``CustomStreamGrouping`` as the kernel's custom grouping."""

    def __init__(self, grouping: CustomStreamGrouping) -> None:
        self.grouping = grouping

    def prepare(
        self, context: NativeContext, component: str, stream: str, target_tasks: list[int]
    ) -> None:
        self._task = context.get_task_id()
        source = GlobalStreamId(context.get_component_id(), stream)
        self.grouping.prepare(TopologyContext(context), source, list(target_tasks))

    def choose_tasks(self, values: list[Any]) -> list[int]:
        return self.grouping.chooseTasks(self._task, values)
