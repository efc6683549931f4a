"""Windowed bolts on the kernel: ``IWindowedBolt``, ``TupleFieldTimestampExtractor`` and
``WindowedBoltExecutor`` (Storm's ``org.apache.storm.topology``; exported from
``storm_compat.topology``).

``TopologyBuilder.setBolt`` wraps a windowed bolt in a `WindowedBoltExecutor`, a rich bolt
that the facade runs like any other. It windows the inputs with `heron_core.windowing` (Storm's
window semantics; see there) and, as Storm's ``WindowedBoltExecutor`` does (read for this
module): acks each tuple when it expires from the window; hands the user's bolt a collector
whose emits without anchors are anchored to every tuple of the current window; in event time,
emits a late tuple on the late-tuple stream (field ``late_tuple``) anchored to it, or logs and
drops it, and acks it either way.

Storm fires time-based windows and watermarks from timer threads; here they fire on the
bolt's own thread, from tick tuples (the executor sets ``topology.tick.tuple.freq.secs`` on
its component to a quarter of the period) and before each input, so the collector stays
single-threaded. Tick tuples drive these timers and never reach the windowed bolt (in Storm a
windowed bolt's tick tuples would enter its windows like any input).
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Mapping
from typing import Any

from heron_core.api import Tuple as NativeTuple
from heron_core.errors import ConfigurationError, UserCodeError
from heron_core.windowing import (
    LATE_TUPLE_STREAM,
    TIMESTAMP_FIELD,
    Window,
    WindowConfigError,
    Windower,
    WindowSpec,
    wall_clock_ms,
)
from heron_core.windowing._policies import Clock
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.task._collector import log as collector_log
from storm_compat.task._collector import parse_bolt_emit
from storm_compat.topology._declarer import OutputFieldsDeclarer
from storm_compat.topology._interfaces import IComponent, IRichBolt
from storm_compat.tuple import Fields, Tuple, Values
from storm_compat.tuple._overloads import UNSET, given
from storm_compat.windowing._window import TimestampExtractor, TupleWindow, TupleWindowImpl

__all__ = ["IWindowedBolt", "TupleFieldTimestampExtractor", "WindowedBoltExecutor"]

log = logging.getLogger(__name__)

TICK_FREQ = "topology.tick.tuple.freq.secs"
MIN_TICK_MS = 5
"""The shortest tick period a windowed bolt asks for."""


class IWindowedBolt(IComponent):
    """A bolt that processes windows of tuples (subclass ``BaseWindowedBolt``, whose builder
    methods set the window).

    Contract: ``execute`` is called once per window activation (never for an empty window),
    on the bolt's thread; the window's tuples are acked by the executor when they expire,
    never by the bolt.
    """

    @abc.abstractmethod
    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Called once, before any ``execute``; emits through ``collector`` are anchored to
        the current window's tuples unless anchors are given."""

    @abc.abstractmethod
    def execute(self, inputWindow: TupleWindow) -> None:
        """Process one window."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Release resources (not guaranteed to be called)."""

    @abc.abstractmethod
    def getTimestampExtractor(self) -> TimestampExtractor | None:
        """The event-time extractor, or None for processing time."""


class TupleFieldTimestampExtractor(TimestampExtractor):
    """Reads the timestamp from a field holding milliseconds (``withTimestampField``).

    >>> from storm_compat.tuple import Fields
    >>> tup = Tuple.of([5, 1000], Fields("n", "ts"))
    >>> TupleFieldTimestampExtractor.of("ts").extractTimestamp(tup)
    1000
    """

    def __init__(self, fieldName: str) -> None:
        self.fieldName = fieldName

    @staticmethod
    def of(fieldName: str) -> TupleFieldTimestampExtractor:
        """The extractor of ``fieldName``."""
        return TupleFieldTimestampExtractor(fieldName)

    def extractTimestamp(self, tuple: Tuple) -> int:
        return tuple.getLongByField(self.fieldName)

    def __repr__(self) -> str:
        return f"TupleFieldTimestampExtractor({self.fieldName!r})"


class _WindowedOutputCollector(OutputCollector):
    """The user's collector: an emit without anchors is anchored to the current window."""

    def __init__(self, delegate: OutputCollector) -> None:
        super().__init__(delegate._collector, delegate._where, delegate._debug, delegate._errors)
        self.window: list[Tuple] = []

    def emit(
        self, first: Any = UNSET, second: Any = UNSET, third: Any = UNSET, /, *more: Any
    ) -> list[int]:
        """``emit([streamId,] [anchor or anchors,] values)``: without anchors, anchored to
        every tuple of the current window."""
        stream, anchors, values = parse_bolt_emit(
            "emit", given(first, second, third, *more), self._where
        )
        if anchors is None:
            anchors = self.window  # type: ignore[assignment]
        if self._debug:
            collector_log.info("%s: Emitting: %s %r", self._where, stream, values)
        return self._collector.emit(values, stream, anchors, None, True) or []

    def emitDirect(self, taskId: int, *args: Any) -> None:
        """``emitDirect(taskId, [streamId,] [anchor or anchors,] values)``: without anchors,
        anchored to every tuple of the current window."""
        stream, anchors, values = parse_bolt_emit("emitDirect", args, self._where)
        if anchors is None:
            anchors = self.window  # type: ignore[assignment]
        if self._debug:
            collector_log.info(
                "%s: Emitting direct: %d; %s %r", self._where, taskId, stream, values
            )
        self._collector.emit(values, stream, anchors, taskId, False)


def _detached(tup: Tuple) -> Tuple:
    """A copy of ``tup`` outside any tuple tree, to be sent as a value (Storm's
    ``DetachedTuple``)."""
    native = NativeTuple(tup.id, tup.component, tup.stream, tup.task, list(tup.values))
    return Tuple(native, tup.getFields())


class WindowedBoltExecutor(IRichBolt):
    """Runs an ``IWindowedBolt`` as a rich bolt (``TopologyBuilder.setBolt`` wraps windowed
    bolts in one).

    Args:
        bolt: the windowed bolt.
        clock: milliseconds since the epoch (for tests; default the wall clock).
    """

    LATE_TUPLE_FIELD = "late_tuple"
    """The field of the late-tuple stream: a detached copy of the late tuple."""

    def __init__(self, bolt: IWindowedBolt, clock: Clock | None = None) -> None:
        self.bolt = bolt
        self.timestampExtractor = bolt.getTimestampExtractor()
        self.clock = clock

    # --- at plan time ------------------------------------------------------------------------
    def window_spec(self, config: Mapping[str, Any]) -> WindowSpec:
        """The window that ``config`` (the bolt's effective config) asks for.

        Raises:
            WindowConfigError: naming the setting at fault.
        """
        spec = WindowSpec.from_config(config, event_time=self.timestampExtractor is not None)
        late = spec.late_stream
        if late is not None and late != (self.getComponentConfiguration() or {}).get(
            LATE_TUPLE_STREAM
        ):
            raise WindowConfigError(
                LATE_TUPLE_STREAM,
                f"the late-tuple stream {late!r} must be set on the bolt with "
                "withLateTupleStream (which declares it), not in the topology's config",
            )
        return spec

    def planned_config(
        self,
        topology: str,
        component: str,
        topology_conf: Mapping[str, Any],
        conf: dict[str, Any],
    ) -> dict[str, Any]:
        """The component config ``conf`` checked, with the tick frequency the window's timers
        need (the smaller of it and one the user set).

        Raises:
            ConfigurationError: naming the topology, the component and the setting.
        """
        try:
            spec = self.window_spec({**topology_conf, **conf})
        except WindowConfigError as exc:
            raise ConfigurationError(
                f"topology {topology!r}, component {component!r} (windowed bolt "
                f"{type(self.bolt).__qualname__}): {exc}"
            ) from exc
        period = spec.timer_period_ms
        if period is None:
            return conf
        tick_s = max(period / 4, MIN_TICK_MS) / 1000
        asked = conf.get(TICK_FREQ, topology_conf.get(TICK_FREQ))
        if asked is not None:
            tick_s = min(tick_s, float(asked))
        return {**conf, TICK_FREQ: tick_s}

    # --- IComponent ----------------------------------------------------------------------------
    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """The late-tuple stream (if set), then the bolt's own streams."""
        late = (self.getComponentConfiguration() or {}).get(LATE_TUPLE_STREAM)
        if late is not None:
            declarer.declareStream(late, Fields(self.LATE_TUPLE_FIELD))
        self.bolt.declareOutputFields(declarer)

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """The windowed bolt's (its window settings among them)."""
        return self.bolt.getComponentConfiguration()

    # --- IBolt ----------------------------------------------------------------------------------
    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Prepare the bolt with the windowed collector, then start the window's timers.

        Raises:
            ConfigurationError: the window's config is wrong (caught at submit already when
                the topology was built by ``TopologyBuilder``).
        """
        where = collector._where
        self._where = where
        self._out = _WindowedOutputCollector(collector)
        self.bolt.prepare(topoConf, context, self._out)
        try:
            spec = self.window_spec(topoConf)
        except WindowConfigError as exc:
            raise ConfigurationError(f"{where}: {exc}") from exc
        extractor = self.timestampExtractor
        if extractor is None and spec.event_time:
            extractor = TupleFieldTimestampExtractor(topoConf[TIMESTAMP_FIELD])
        self._extractor = extractor
        self._late = spec.late_stream
        streams = [(g.component_id, g.stream_id) for g in context.getThisSources()]
        self._timed = spec.timer_period_ms is not None
        self._windows: Windower[Tuple] = Windower(spec, self, streams, self.clock or wall_clock_ms)
        log.info("%s: %s", where, spec.describe())

    def execute(self, input: Tuple) -> None:
        """Add ``input`` to the window (a tick only fires what is due)."""
        windows = self._windows
        if self._timed:
            windows.poll()
        if input.isTick():
            return
        extractor = self._extractor
        if extractor is None:
            windows.add(input)
            return
        try:
            ts = extractor.extractTimestamp(input)
        except Exception as exc:
            raise UserCodeError(
                f"{self._where}: {extractor!r} could not read the timestamp of a tuple from "
                f"{input.component!r} stream {input.stream!r} (fields "
                f"{input.getFields().toList()}): {exc!r}"
            ) from exc
        if windows.add(input, ts, (input.component, input.stream)):
            return
        if self._late is not None:
            self._out.emit(self._late, input, Values(_detached(input)))
        else:
            log.info(
                "%s: a late tuple (timestamp %d, before the last watermark), not processed: %r",
                self._where,
                ts,
                input,
            )
        self._out.ack(input)

    def cleanup(self) -> None:
        """The bolt's ``cleanup``."""
        self.bolt.cleanup()

    # --- the window's listener -------------------------------------------------------------
    def on_activation(self, window: Window[Tuple]) -> None:
        """Hand a window to the bolt; its emits are anchored to the window's tuples."""
        self._out.window = window.items
        self.bolt.execute(
            TupleWindowImpl(
                window.items, window.new, window.expired, window.start_ts, window.end_ts
            )
        )

    def on_expiry(self, items: list[Tuple]) -> None:
        """Ack the tuples that left the window."""
        ack = self._out.ack
        for tup in items:
            ack(tup)
