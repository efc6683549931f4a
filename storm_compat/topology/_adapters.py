"""Native components that run Storm components: the kernel only runs ``heron_core.api``
spouts and bolts, so each Storm spout or bolt is pickled inside one of these.

The runtime builds the adapter, sets its ``_collector`` and calls ``initialize``; the adapter
wraps the kernel's collector and context in Storm's and calls ``open``/``prepare``, then
translates every callback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from heron_core.api import (
    Bolt,
    CustomGrouping,
    GlobalStreamId,
    InputBatch,
    Spout,
    State,
    StatefulComponent,
    Stream,
)
from heron_core.api import TopologyContext as NativeContext
from heron_core.api import Tuple as NativeTuple
from heron_core.errors import UserCodeError
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.spout import ISpout, SpoutOutputCollector
from storm_compat.task import IBolt, OutputCollector, TopologyContext
from storm_compat.task._context import shut_shared_executor
from storm_compat.topology._basic import (
    BasicOutputCollector,
    FailedException,
    ReportedFailedException,
)
from storm_compat.topology._execute import Execute
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
    ``ack``/``fail``/``activate``/``deactivate``/``close`` as they come (after ``open``, the
    spout's own methods are bound in place of these, one call less each)."""

    def __init__(self, spout: ISpout, outputs: Sequence[Stream]) -> None:
        self.spout = spout
        self.outputs = list(outputs)

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        where = _where(context)
        collector = SpoutOutputCollector(
            self._collector, where, bool(config.get("topology.debug")), context.report_error
        )
        _setup(where, self.spout, "open", config, TopologyContext(context), collector)
        spout = self.spout
        self.next_tuple = spout.nextTuple  # type: ignore[method-assign]
        self.ack = spout.ack  # type: ignore[method-assign,assignment]
        self.fail = spout.fail  # type: ignore[method-assign,assignment]

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
        try:
            self.spout.close()
        finally:
            shut_shared_executor()


class StatefulSpoutAdapter(SpoutAdapter, StatefulComponent):
    """A `SpoutAdapter` for a Storm spout that also mixes in ``heron_core.api.
    StatefulComponent`` (Storm has no stateful spouts): under ``EFFECTIVELY_ONCE`` its
    ``init_state`` (before ``open``) and ``pre_save`` are called, so that it can keep its
    position in its state and rewind to it after a rollback (then it is closed and opened
    again). Any other spout cannot rewind."""

    def init_state(self, state: State) -> None:
        self.spout.init_state(state)  # type: ignore[attr-defined]

    def pre_save(self, checkpoint_id: str) -> None:
        self.spout.pre_save(checkpoint_id)  # type: ignore[attr-defined]


class _StormBolt(Bolt):
    """What both bolt adapters share: the runtime builds their inputs as Storm tuples
    (``tuple_type``), which get the fields of their source stream before the bolt sees them.

    After ``initialize``, ``process`` and ``process_batch`` are closures (`_processor`) that
    look up the input stream's fields and hand each input to the compiled step around the
    bolt's ``execute`` (``_execute.Execute``); ``process_tick`` gets the kernel's tick and
    passes on a Storm tuple of it.
    """

    tuple_type = Tuple

    def __init__(self, outputs: Sequence[Stream]) -> None:
        self.outputs = list(outputs)

    def _attach(self, config: dict[str, Any], context: NativeContext) -> str:
        where = _where(context)
        self._context = context
        self._fields: dict[tuple[str, str], Fields] = {}
        self._out = OutputCollector(
            self._collector, where, bool(config.get("topology.debug")), context.report_error
        )
        return where

    def _fields_of(self, source: str, stream: str) -> Fields:
        key = (source, stream)
        fields = self._fields.get(key)
        if fields is None:
            fields = self._fields[key] = Fields(self._context.get_output_fields(source, stream))
        return fields

    def _processor(self, execute: Callable[..., None], basic: BasicOutputCollector | None) -> None:
        """Set ``process`` and ``process_batch`` for a rich bolt's ``execute`` (``basic``
        None), or for a basic bolt's with its collector: the input is acked after ``execute``
        returns (straight to the kernel when it was not settled meanwhile and
        ``topology.debug`` is off), failed when ``FailedException`` is raised: all of it per
        input in `Execute.run` (compiled: no Python frame between the batch's loop and the
        bolt's ``execute``). The runtime hands over whole batches (one source stream each), so
        the stream's fields are looked up once per batch.

        A basic bolt's emits are anchored to ``current``, one list that holds the input being
        executed (set in place per input: no list per input); it is made the collector's
        anchors at the start of each call, since a tick (``process_tick``) sets others."""
        fields_of = self._fields_of
        out = self._out
        anchoring = None if basic is None else basic._input
        current: list[Any] = [None]
        step = Execute(
            execute,
            basic,
            current,
            None if out._debug else self._collector.ack,
            out.ack,  # warns (acked already) or logs (debug)
            FailedException,
            partial(_failed, out),
        )
        run = step.run

        def process(tup: Tuple) -> None:
            step.fields = fields_of(tup.component, tup.stream)
            if anchoring is not None:
                anchoring.anchors = current
            run(tup)

        def process_batch(batch: InputBatch) -> None:
            step.fields = fields_of(batch.component, batch.stream)
            if anchoring is not None:
                anchoring.anchors = current
            batch.each(run)  # type: ignore[arg-type]  # the tuple_type's: Storm's

        self.process = process  # type: ignore[method-assign,assignment]
        self.process_batch = process_batch  # type: ignore[method-assign]


def _failed(out: OutputCollector, storm_tuple: Tuple, exc: FailedException) -> None:
    """A basic bolt raised ``FailedException``: report it if asked, fail the input."""
    if isinstance(exc, ReportedFailedException):
        out.reportError(exc)
    out.fail(storm_tuple)


class BoltAdapter(_StormBolt):
    """Runs a Storm rich bolt: ``prepare`` in ``initialize``; every input, ticks included,
    goes to ``execute``; ``cleanup`` in ``close``."""

    def __init__(self, bolt: IBolt, outputs: Sequence[Stream]) -> None:
        super().__init__(outputs)
        self.bolt = bolt

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        from storm_compat.multilang import ShellBolt  # imports this package

        where = self._attach(config, context)
        _setup(where, self.bolt, "prepare", config, TopologyContext(context), self._out)
        self._processor(self.bolt.execute, None)
        if isinstance(self.bolt, ShellBolt) and type(self.bolt).execute is ShellBolt.execute:
            # a shell bolt takes each batch pipelined (unless a subclass has its own execute)
            self.process_batch = self._shell_batch  # type: ignore[method-assign]

    def _shell_batch(self, batch: InputBatch) -> None:
        tuples = batch.tuples()
        fields = self._fields_of(batch.component, batch.stream)
        for tup in tuples:
            tup._schema = fields  # type: ignore[attr-defined]
            tup._done = False  # type: ignore[attr-defined]
        self.bolt._execute_batch(tuples, batch.due, batch.serve)  # type: ignore[attr-defined]

    def process_tick(self, tup: NativeTuple) -> None:
        self.bolt.execute(Tuple(tup, TICK_FIELDS))

    def close(self) -> None:
        try:
            self.bolt.cleanup()
        finally:
            shut_shared_executor()


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
        self._processor(self.bolt.execute, self._basic)

    def process_tick(self, tup: NativeTuple) -> None:
        tick = Tuple(tup, TICK_FIELDS)
        self._basic.setContext(tick)
        try:
            self.bolt.execute(tick, self._basic)
        except FailedException as exc:
            _failed(self._out, tick, exc)
        else:
            self._out.ack(tick)

    def close(self) -> None:
        try:
            self.bolt.cleanup()
        finally:
            shut_shared_executor()


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
