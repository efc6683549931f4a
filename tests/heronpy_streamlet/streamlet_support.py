"""Drives a Streamlet program's plan in this process, the way instances would run it.

`LocalPlan` builds the program's topology into a native plan, unpickles each task's spout or
bolt from the plan (so user functions travel by value exactly as to an instance process),
initializes it with a fake context, and routes what each task emits through the plan's
groupings (shuffle round-robin, lowest, custom: the pickled grouping from the plan) to the
consuming tasks, one tuple at a time until every queue is empty. Windowed bolts read a
`FakeClock`; `tick` sends them a tick tuple.
"""

from __future__ import annotations

import itertools
import pickle
from collections import deque
from collections.abc import Sequence
from typing import Any

from heron_core.api import (
    Bolt,
    GlobalStreamId,
    Grouping,
    Spout,
    TopologyBuilder,
    TopologyContext,
    Tuple,
)
from heron_core.plan import GroupingKind, LogicalPlan
from heronpy.streamlet.builder import Builder


class FakeClock:
    """A clock a test moves by hand (seconds)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakeContext(TopologyContext):
    def __init__(self, plan: LogicalPlan, component: str, task_id: int, config: dict[str, Any]):
        self.plan, self.component, self.task_id, self.config = plan, component, task_id, config
        self.tasks: dict[str, list[int]] = {}

    def get_task_id(self) -> int:
        return self.task_id

    def get_component_id(self) -> str:
        return self.component

    def get_cluster_config(self) -> dict[str, Any]:
        return self.config

    def get_topology_name(self) -> str:
        return self.plan.name

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        comp = self.plan.component(component_id)
        return {
            GlobalStreamId(i.component, i.stream): Grouping(i.grouping, i.fields, i.custom)
            for i in comp.inputs
        }

    def get_component_tasks(self, component_id: str) -> list[int]:
        return list(self.tasks.get(component_id, []))

    def get_topology_id(self) -> str:
        return self.plan.id

    def get_component_index(self) -> int:
        return self.tasks[self.component].index(self.task_id)

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        return self.plan.stream_fields(component_id, stream)

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        return {}

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        pass


class _Collector:
    def __init__(self, local: LocalPlan, component: str, task: int) -> None:
        self.local, self.component, self.task = local, component, task

    def emit(self, tup: Sequence[Any], *args: Any) -> None:
        # a spout's collector gets (tup, tup_id, stream, ...), a bolt's (tup, stream, ...)
        stream = args[1] if isinstance(self.local.tasks[self.task], Spout) else args[0]
        self.local.route(self.component, self.task, stream, list(tup))

    def ack(self, tup: Tuple) -> None:
        self.local.acked.append((self.component, tup.values[0]))

    def fail(self, tup: Tuple) -> None:
        raise AssertionError(f"{self.component} failed {tup!r}")


class LocalPlan:
    """The tasks of ``builder``'s topology, wired in this process.

    Attributes:
        plan: the logical plan.
        tasks: task id -> the spout or bolt (unpickled from the plan, initialized).
        received: (component, task id) -> the elements it was sent, in order.
        acked: (component, element) of every input a bolt acked.
    """

    def __init__(
        self, builder: Builder, clock: FakeClock | None = None, name: str = "test"
    ) -> None:
        bldr = TopologyBuilder(name)
        builder.build(bldr)
        self.plan = bldr.build()
        self.clock = clock or FakeClock()
        self.tasks: dict[int, Spout | Bolt] = {}
        self.components: dict[str, list[int]] = {}
        self.received: dict[tuple[str, int], list[Any]] = {}
        self.acked: list[tuple[str, Any]] = []
        self._queue: deque[tuple[str, int, str, int, list[Any]]] = deque()
        self._choosers: dict[tuple[str, str, str], Any] = {}
        ids = itertools.count(1)
        for comp in self.plan.components:
            self.components[comp.name] = [next(ids) for _ in range(comp.parallelism)]
        contexts = []
        for comp in self.plan.components:
            for task in self.components[comp.name]:
                instance = pickle.loads(comp.spec.pickled_object)
                instance._collector = _Collector(self, comp.name, task)
                if hasattr(type(instance), "clock"):
                    instance.clock = self.clock
                config = {**dict(self.plan.config_items), **dict(comp.config_items)}
                context = FakeContext(self.plan, comp.name, task, config)
                context.tasks = self.components
                contexts.append((instance, config, context))
                self.tasks[task] = instance
        for instance, config, context in contexts:
            instance.initialize(config, context)

    def names(self) -> list[str]:
        return [c.name for c in self.plan.components]

    def task_ids(self, component: str) -> list[int]:
        return self.components[component]

    def spout(self, component: str, calls: int = 1) -> None:
        """``next_tuple`` ``calls`` times on each task of ``component``; then deliver all."""
        for _ in range(calls):
            for task in self.components[component]:
                spout = self.tasks[task]
                assert isinstance(spout, Spout)
                spout.next_tuple()
        self.deliver()

    def tick(self, component: str) -> None:
        """A tick tuple to every task of ``component``; then deliver all."""
        for task in self.components[component]:
            bolt = self.tasks[task]
            assert isinstance(bolt, Bolt)
            bolt.process_tick(Tuple("__tick", "__system", "__tick", -1, [1.0]))
        self.deliver()

    def route(self, component: str, task: int, stream: str, values: list[Any]) -> None:
        for consumer, inp in self.plan.consumers(component, stream):
            targets = self._choose(component, task, stream, consumer, inp, values)
            for target in targets:
                self._queue.append((component, task, stream, target, values))

    def _choose(
        self, component: str, task: int, stream: str, consumer: str, inp: Any, values: list[Any]
    ) -> list[int]:
        tasks = self.components[consumer]
        key = (component, str(task), consumer)
        if inp.grouping is GroupingKind.SHUFFLE:
            cycle = self._choosers.setdefault(key, itertools.cycle(tasks))
            return [next(cycle)]
        if inp.grouping is GroupingKind.LOWEST:
            return [min(tasks)]
        assert inp.grouping is GroupingKind.CUSTOM, inp.grouping
        grouping = self._choosers.get(key)
        if grouping is None:
            grouping = pickle.loads(inp.custom)
            grouping.prepare(None, consumer, stream, list(tasks))
            self._choosers[key] = grouping
        return list(grouping.choose_tasks(values))

    def deliver(self) -> None:
        while self._queue:
            source, source_task, stream, target, values = self._queue.popleft()
            bolt = self.tasks[target]
            assert isinstance(bolt, Bolt)
            consumer = self._component_of(target)
            self.received.setdefault((consumer, target), []).append(values[0])
            bolt.process(Tuple(None, source, stream, source_task, values))

    def _component_of(self, task: int) -> str:
        return next(name for name, ids in self.components.items() if task in ids)

    def got(self, component: str) -> list[Any]:
        """Every element ``component``'s tasks were sent, task by task."""
        return [
            e
            for task in self.components[component]
            for e in self.received.get((component, task), [])
        ]
