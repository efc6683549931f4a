"""An instance's real bolt collector (router, acker) outside any process, for the tests of the
front ends that drive it (the Storm facade's basic bolts)."""

from __future__ import annotations

import marshal
from typing import Any

from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder
from heron_core.instance._acking import AckSender
from heron_core.instance._anchoring import Acker
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._plan import PlanView
from heron_core.instance._router import Router
from heron_core.proto import physical_plan_pb2, tuple_pb2


class Src(Spout):
    outputs = [Stream(["line"])]


class Middle(Bolt):
    outputs = [Stream(["word"]), Stream(["word"], name="other")]


class Sink(Bolt):
    pass


class Wire:
    """What the collector sends: each data batch as (task, stream, rows, roots)."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, str, list[Any], Any]] = []

    def send_data(self, task: int, batch: bytes) -> None:
        decoded = tuple_pb2.TupleBatch.FromString(batch)
        roots = marshal.loads(decoded.roots) if decoded.roots else None
        self.batches.append((task, decoded.stream, marshal.loads(decoded.values), roots))

    def send(self, frames: Any) -> None:
        pass


SINK_TASK = 3
"""The task of ``sink``, which takes both streams of ``bolt`` (task 2) whole."""


def bolt_collector(acking: bool) -> tuple[BoltCollector, Wire]:
    """The collector of task 2, component ``bolt`` (streams ``default`` and ``other``, both
    to ``sink``), in a topology src -> bolt -> sink of one task each."""
    b = TopologyBuilder("t")
    src = b.add_spout("src", Src, par=1)
    bolt = b.add_bolt("bolt", Middle, par=1, inputs={src: Grouping.SHUFFLE})
    b.add_bolt(
        "sink", Sink, par=1, inputs={bolt: Grouping.SHUFFLE, bolt["other"]: Grouping.SHUFFLE}
    )
    plan = b.build()
    pplan = physical_plan_pb2.PhysicalPlan(topology=plan.to_proto())
    pplan.stmgrs.add(id="stmgr-1", container_id=1)
    for task, comp in enumerate(plan.components, start=1):
        inst = pplan.instances.add(instance_id=f"i{task}", stmgr_id="stmgr-1")
        inst.info.task_id, inst.info.component_index = task, 0
        inst.info.component_name = comp.name
    wire = Wire()
    router = Router(PlanView(pplan), "bolt", 2, 1, wire, 100, lambda *a: None, acking=acking)
    acker = Acker(AckSender(wire), "bolt", lambda what: None)  # type: ignore[arg-type]
    return BoltCollector(router, acker), wire
