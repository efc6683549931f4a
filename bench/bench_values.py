"""The cost of the value-class check, in process: one router batching emits and the receiving
instance's decode of each batch (``heron_core.instance._values``), for values that take the
marshal path (the word count's str and int) and values that take the pickle path (standard
value types, a registered class), each under the safe default and under
``topology.fall.back.on.java.serialization`` (plain pickle, no check: the cost before the
check existed). No process, socket or stream manager: the serialization alone, per tuple.

    .venv/bin/python bench/bench_values.py              # 200,000 tuples per row, 5 rounds
    .venv/bin/python bench/bench_values.py --tuples 50000 --rounds 3

It prints a table (µs per tuple, the median round); it records nothing.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from heron_core._compiled import compiled_now  # noqa: E402
from heron_core.api import Bolt, Grouping, Spout, Stream, TopologyBuilder  # noqa: E402
from heron_core.config import REGISTRY  # noqa: E402
from heron_core.instance import InstanceRuntime  # noqa: E402
from heron_core.instance._plan import PlanView  # noqa: E402
from heron_core.instance._router import Router  # noqa: E402
from heron_core.instance._values import ValuePolicy  # noqa: E402
from heron_core.proto import physical_plan_pb2  # noqa: E402


@dataclass(frozen=True)
class Reading:
    """A user class emitted as a value (registered in the rows that need it)."""

    sensor: str
    value: float


class _Src(Spout):
    outputs = [Stream(["key", "value"])]


class _Sink(Bolt):
    pass


def _plan() -> PlanView:
    b = TopologyBuilder("values")
    src = b.add_spout("src", _Src, par=1)
    b.add_bolt("sink", _Sink, par=1, inputs={src: Grouping.SHUFFLE})
    pplan = physical_plan_pb2.PhysicalPlan(topology=b.build().to_proto())
    pplan.stmgrs.add(id="stmgr-1", container_id=1)
    for task, name in ((1, "src"), (2, "sink")):
        instance = pplan.instances.add(instance_id=f"i{task}", stmgr_id="stmgr-1")
        instance.info.task_id, instance.info.component_name = task, name
    return PlanView(pplan)


class _Wire:
    def __init__(self) -> None:
        self.payloads: list[bytes] = []

    def send_data(self, task: int, batch: bytes) -> None:
        self.payloads.append(batch)


ROWS: dict[str, Callable[[int], list[Any]]] = {
    "str, int (marshal)": lambda i: [f"word{i % 10_000}", i],
    "str, datetime": lambda i: [
        f"word{i % 10_000}",
        datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=i),
    ],
    "str, Decimal": lambda i: [f"word{i % 10_000}", decimal.Decimal(i) / 100],
    "str, registered dataclass": lambda i: [f"word{i % 10_000}", Reading(f"s{i % 100}", i / 7)],
}


def measure(rows: list[list[Any]], policy: ValuePolicy) -> tuple[float, float]:
    """Seconds to emit and batch ``rows`` through a router, and to decode its batches."""
    wire = _Wire()
    batch = REGISTRY["heron.instance.batch.max.tuples"].default
    router = Router(_plan(), "src", 1, 1, wire, batch, lambda *a: None, values=policy)
    began = time.perf_counter()
    for row in rows:
        router.emit(row)
    router.flush()
    sent = time.perf_counter() - began
    runtime = SimpleNamespace(acking=False, _where="bench", _malformed=0, _refused=0)
    runtime.values = policy
    began = time.perf_counter()
    for payload in wire.payloads:
        decoded = InstanceRuntime._decode(runtime, payload)  # type: ignore[arg-type]
        assert decoded is not None
    return sent, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tuples", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    compiled = all(compiled_now().values())
    print(
        f"hot path: {'compiled (mypyc)' if compiled else 'plain Python'}; {args.tuples:,} "
        f"tuples per row, median of {args.rounds} rounds (the policies alternate run by run); "
        "µs per tuple"
    )
    policies = {
        "safe (default)": ValuePolicy([Reading]),
        "fall-back (plain pickle)": ValuePolicy(fall_back=True),
    }
    data = {label: [make(i) for i in range(args.tuples)] for label, make in ROWS.items()}
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.rounds + 1):  # the first round warms up, and is not counted
        for label, rows in data.items():
            for name, policy in policies.items():
                runs.setdefault((label, name), []).append(measure(rows, policy))
    print("| values | policy | send | receive | send+receive |")
    print("|---|---|---|---|---|")
    for (label, name), measured in runs.items():
        send = statistics.median(r[0] for r in measured[1:]) / args.tuples * 1e6
        receive = statistics.median(r[1] for r in measured[1:]) / args.tuples * 1e6
        print(f"| {label} | {name} | {send:.3f} | {receive:.3f} | {send + receive:.3f} |")


if __name__ == "__main__":
    main()
