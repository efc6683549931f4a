"""The physical plan of a logical plan, and an instance's real bolt collector (router, acker),
outside any process: for the tests of the instance's data path and of the front ends that drive
it (the Storm facade's basic bolts, the multilang hosts)."""

from __future__ import annotations

import marshal
from typing import Any

from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder
from heron_core.api._tuple import count_runs
from heron_core.instance._acking import AckSender
from heron_core.instance._anchoring import Acker
from heron_core.instance._bolt import BoltCollector
from heron_core.instance._plan import PlanView
from heron_core.instance._router import Router
from heron_core.plan import LogicalPlan
from heron_core.proto import physical_plan_pb2, tuple_pb2


class Src(Spout):
    outputs = [Stream(["line"])]


class Middle(Bolt):
    outputs = [Stream(["word"]), Stream(["word"], name="other")]


class Sink(Bolt):
    pass


def per_copy(runs: list[Any]) -> list[Any]:
    """The anchors of each copy of a batch, from its runs (the copies of a run share them)."""
    out: list[Any] = []
    for run in runs:
        out.extend([run[1]] * run[0] if type(run) is list else [run])
    assert len(out) == count_runs(runs)
    return out


def copies(batch: tuple_pb2.TupleBatch) -> list[Any]:
    """The anchors of each copy of a sent ``batch`` (acking on), from its runs."""
    return per_copy(marshal.loads(batch.roots))


class Wire:
    """What the collector sends: each data batch as (task, stream, rows, roots)."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, str, list[Any], Any]] = []

    def send_data(self, task: int, batch: bytes) -> None:
        decoded = tuple_pb2.TupleBatch.FromString(batch)
        roots = copies(decoded) if decoded.roots else None
        self.batches.append((task, decoded.stream, marshal.loads(decoded.values), roots))

    def send(self, frames: Any) -> None:
        pass


def physical_plan(logical: LogicalPlan, containers: int = 1) -> PlanView:
    """``logical`` placed as the topology manager would: tasks numbered from 1 in component
    order (each component's instances by index), task ``t`` in container ``1 + t % containers``
    (stream manager ``stmgr-<container>``, instance ``i<t>``)."""
    pplan = physical_plan_pb2.PhysicalPlan(topology=logical.to_proto())
    for container in range(1, containers + 1):
        pplan.stmgrs.add(id=f"stmgr-{container}", container_id=container)
    task = 1
    for comp in logical.components:
        for index in range(comp.parallelism):
            inst = pplan.instances.add(
                instance_id=f"i{task}", stmgr_id=f"stmgr-{1 + task % containers}"
            )
            inst.info.task_id, inst.info.component_index = task, index
            inst.info.component_name = comp.name
            task += 1
    return PlanView(pplan)


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
    wire = Wire()
    router = Router(
        physical_plan(b.build()), "bolt", 2, 1, wire, 100, lambda *a: None, acking=acking
    )
    acker = Acker(AckSender(wire), "bolt", lambda what: None)  # type: ignore[arg-type]
    return BoltCollector(router, acker), wire
