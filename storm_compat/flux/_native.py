"""Native kernel components (``heron_core.api`` spouts and bolts) named in a Flux file, run as
Storm components so the whole file goes through Storm's ``TopologyBuilder``.

The wrappers declare the native ``outputs``, hand the native component the context's native
side, and translate its collector calls into the Storm collectors' (which pass them on to the
kernel unchanged).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from heron_core.api import Bolt, InputBatch, Spout, Stream
from heron_core.api import Tuple as NativeTuple
from heron_core.errors import UserCodeError
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import IRichBolt, IRichSpout, OutputFieldsDeclarer
from storm_compat.tuple import Fields, Tuple

__all__ = ["NativeBolt", "NativeSpout"]

_NO_FIELDS = Fields()


def _declare(outputs: Sequence[str | Stream], declarer: OutputFieldsDeclarer) -> None:
    """Declare native ``outputs``: str items are fields of the default stream."""
    default = [out for out in outputs if isinstance(out, str)]
    if default:
        declarer.declare(Fields(default))
    for out in outputs:
        if isinstance(out, Stream):
            declarer.declareStream(out.stream_id, out.direct, Fields(list(out.fields)))


class _SpoutCollector:
    def __init__(self, collector: SpoutOutputCollector) -> None:
        self._out = collector

    def emit(
        self,
        tup: Sequence[Any],
        tup_id: Any,
        stream: str,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        if direct_task is not None:
            self._out.emitDirect(direct_task, stream, tup, tup_id)
            return None
        task_ids = self._out.emit(stream, tup, tup_id)
        return task_ids if need_task_ids else None


class _BoltCollector:
    def __init__(self, collector: OutputCollector) -> None:
        self._out = collector

    def emit(
        self,
        tup: Sequence[Any],
        stream: str,
        anchors: Iterable[NativeTuple] | None,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        anchored = [Tuple(anchor, _NO_FIELDS) for anchor in anchors or ()]
        if direct_task is not None:
            self._out.emitDirect(direct_task, stream, anchored, tup)
            return None
        task_ids = self._out.emit(stream, anchored, tup)
        return task_ids if need_task_ids else None

    def emit_many(
        self, rows: Iterable[Sequence[Any]], stream: str, anchors: Iterable[NativeTuple] | None
    ) -> None:
        anchors = list(anchors or ())
        for tup in rows:
            self.emit(tup, stream, anchors, None, False)

    def emit_and_ack(
        self, batch: InputBatch, outputs: Sequence[Iterable[Sequence[Any]]], stream: str
    ) -> None:
        """Each input's rows anchored to it, then every input acked (``Bolt.emit_and_ack``),
        through the Storm collector."""
        tuples, outputs = batch.tuples(), list(outputs)
        if len(outputs) != len(tuples):
            raise UserCodeError(
                f"emit_and_ack got {len(outputs)} lists of rows for a batch of {len(tuples)} "
                f"inputs from {batch.component!r} on {batch.stream!r}: give one per input"
            )
        for tup, rows in zip(tuples, outputs, strict=True):
            self.emit_many(rows, stream, [tup])
            self.ack(tup)

    def ack(self, tup: NativeTuple) -> None:
        self._out.ack(Tuple(tup, _NO_FIELDS))

    def fail(self, tup: NativeTuple) -> None:
        self._out.fail(Tuple(tup, _NO_FIELDS))


class NativeSpout(IRichSpout):
    """A native spout as a Storm spout."""

    def __init__(self, spout: Spout) -> None:
        self.spout = spout

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        self.spout._collector = _SpoutCollector(collector)
        self.spout.initialize(conf, context.native)

    def nextTuple(self) -> None:
        self.spout.next_tuple()

    def ack(self, msgId: Any) -> None:
        self.spout.ack(msgId)

    def fail(self, msgId: Any) -> None:
        self.spout.fail(msgId)

    def activate(self) -> None:
        self.spout.activate()

    def deactivate(self) -> None:
        self.spout.deactivate()

    def close(self) -> None:
        self.spout.close()

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        _declare(list(self.spout.outputs), declarer)

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        return None


class NativeBolt(IRichBolt):
    """A native bolt as a Storm bolt (ticks go to ``process_tick``)."""

    def __init__(self, bolt: Bolt) -> None:
        self.bolt = bolt

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.bolt._collector = _BoltCollector(collector)
        self.bolt.initialize(topoConf, context.native)

    def execute(self, input: Tuple) -> None:
        if input.isTick():
            self.bolt.process_tick(input.native)
        else:
            self.bolt.process(input.native)

    def cleanup(self) -> None:
        self.bolt.close()

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        _declare(list(self.bolt.outputs), declarer)

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        return None
