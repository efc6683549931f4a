"""Checks every packing algorithm must pass: for the built-ins and third-party plug-ins.

Each ``check_*`` function raises ``AssertionError`` with a message naming the plan, container,
component or task at fault; :func:`check_packing` runs them all. :func:`topologies` is a
Hypothesis strategy for random topologies (it needs the ``hypothesis`` package, a test
dependency). A plug-in's test suite can read:

>>> from hypothesis import given, settings
>>> from heron_core.config import build_config
>>> from heron_core.packing import FirstFitDecreasingPacking
>>> @settings(max_examples=5, database=None)
... @given(topologies())
... def test_my_packing(topology):
...     check_packing(FirstFitDecreasingPacking(), topology, build_config())
>>> test_my_packing()
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from heron_core.config.codec import config_to_proto
from heron_core.packing import Packing
from heron_core.proto import packing_plan_pb2, topology_pb2

__all__ = [
    "check_component_indexes",
    "check_deterministic",
    "check_every_task_placed_once",
    "check_packing",
    "check_plan_structure",
    "check_resources_fit",
    "check_task_ids_contiguous",
    "component_parallelism",
    "make_topology",
    "topologies",
]

_GiB = 1 << 30
_MiB = 1 << 20


def make_topology(
    name: str,
    parallelism: Mapping[str, int],
    component_config: Mapping[str, Mapping[str, Any]] | None = None,
) -> topology_pb2.Topology:
    """A topology whose first component is a spout and the others bolts subscribing to it.

    Args:
        name: the topology's name; its id is ``name + "-id"``.
        parallelism: component name -> parallelism, in definition order (at least one, else
            ValueError).
        component_config: component name -> that component's own config, e.g.
            ``{"split": {"topology.component.ram": 2 * 2**30}}``.

    >>> topology = make_topology("wc", {"words": 2, "count": 3})
    >>> [topology.spouts[0].comp.name, topology.bolts[0].comp.parallelism]
    ['words', 3]
    """
    if not parallelism:
        raise ValueError(f"make_topology({name!r}): give at least one component")
    configs = component_config or {}
    topology = topology_pb2.Topology(id=f"{name}-id", name=name, state=topology_pb2.RUNNING)
    spout_name = next(iter(parallelism))
    for comp_name, count in parallelism.items():
        comp = topology_pb2.Component(
            name=comp_name,
            parallelism=count,
            config=config_to_proto(configs.get(comp_name, {})),
            spec=topology_pb2.ComponentSpec(
                python=topology_pb2.PythonComponent(class_path=f"example:{comp_name}")
            ),
        )
        if comp_name == spout_name:
            spout = topology.spouts.add(comp=comp)
            spout.outputs.add(stream=topology_pb2.StreamId(id="default", component_name=comp_name))
        else:
            bolt = topology.bolts.add(comp=comp)
            bolt.inputs.add(
                stream=topology_pb2.StreamId(id="default", component_name=spout_name),
                gtype=topology_pb2.SHUFFLE,
            )
    return topology


@st.composite
def _topologies(
    draw: st.DrawFn, max_components: int, max_parallelism: int
) -> topology_pb2.Topology:
    names = draw(
        st.lists(
            st.text("abcdefghij_", min_size=1, max_size=6),
            min_size=1,
            max_size=max_components,
            unique=True,
        )
    )
    parallelism = {n: draw(st.integers(1, max_parallelism)) for n in names}
    configs: dict[str, dict[str, Any]] = {}
    for n in names:
        drawn = {
            "cpu": draw(st.none() | st.floats(0.1, 4.0, allow_nan=False, allow_infinity=False)),
            "ram": draw(st.none() | st.integers(16 * _MiB, 4 * _GiB)),
        }
        configs[n] = {f"topology.component.{k}": v for k, v in drawn.items() if v is not None}
    return make_topology(draw(st.text("xyz", min_size=1, max_size=4)), parallelism, configs)


def topologies(
    max_components: int = 5, max_parallelism: int = 6
) -> st.SearchStrategy[topology_pb2.Topology]:
    """Hypothesis strategy: random topologies built with :func:`make_topology`.

    Components get a random parallelism in ``1..max_parallelism`` and, each independently,
    a random per-instance CPU (0.1..4 cores) and RAM (16 MiB..4 GiB) in their own config, or
    none (then the topology default applies). Every instance fits a default
    first-fit-decreasing container.
    """
    return _topologies(max_components, max_parallelism)


def _instances(plan: packing_plan_pb2.PackingPlan) -> list[packing_plan_pb2.InstancePlan]:
    return [i for container in plan.containers for i in container.instances]


def component_parallelism(topology: topology_pb2.Topology) -> dict[str, int]:
    """Component name -> parallelism, spouts then bolts.

    >>> component_parallelism(make_topology("wc", {"words": 2, "count": 3}))
    {'words': 2, 'count': 3}
    """
    comps = [s.comp for s in topology.spouts] + [b.comp for b in topology.bolts]
    return {comp.name: comp.parallelism for comp in comps}


def check_every_task_placed_once(
    topology: topology_pb2.Topology, plan: packing_plan_pb2.PackingPlan
) -> None:
    """Each component has exactly ``parallelism`` instances and no task id appears twice."""
    ids = Counter(i.task_id for i in _instances(plan))
    twice = sorted(task for task, n in ids.items() if n > 1)
    assert not twice, f"packing plan {plan.id!r}: task ids placed more than once: {twice}"
    placed = Counter(i.component_name for i in _instances(plan))
    expected = component_parallelism(topology)
    for name in sorted(set(placed) | set(expected)):
        assert placed[name] == expected.get(name, 0), (
            f"packing plan {plan.id!r}: component {name!r} has {placed[name]} instances placed, "
            f"expected {expected.get(name, 0)} (its parallelism)"
        )


def check_task_ids_contiguous(plan: packing_plan_pb2.PackingPlan) -> None:
    """The task ids are exactly ``1..T`` for ``T`` instances."""
    ids = sorted(i.task_id for i in _instances(plan))
    assert ids == list(range(1, len(ids) + 1)), (
        f"packing plan {plan.id!r}: task ids must be 1..{len(ids)}, got {ids}"
    )


def check_component_indexes(
    topology: topology_pb2.Topology, plan: packing_plan_pb2.PackingPlan
) -> None:
    """Within each component, ``component_index`` takes each value ``0..parallelism-1`` once."""
    indexes: dict[str, list[int]] = {name: [] for name in component_parallelism(topology)}
    for instance in _instances(plan):
        indexes.setdefault(instance.component_name, []).append(instance.component_index)
    for name, count in component_parallelism(topology).items():
        assert sorted(indexes[name]) == list(range(count)), (
            f"packing plan {plan.id!r}: component {name!r} (parallelism {count}) has "
            f"component indexes {sorted(indexes[name])}, expected 0..{count - 1}"
        )


def check_plan_structure(plan: packing_plan_pb2.PackingPlan) -> None:
    """The plan has an id and containers numbered ``1..N`` (N >= 1) in order."""
    assert plan.id, "packing plan has an empty id"
    ids = [c.id for c in plan.containers]
    assert ids == list(range(1, len(ids) + 1)) and ids, (
        f"packing plan {plan.id!r}: container ids must be 1..N in order (0 is the tmanager's), "
        f"got {ids}"
    )


def _at_most(name: str, low: float, high: float) -> bool:
    """``low <= high``, with float rounding forgiven for cpu (ram and disk are exact bytes)."""
    return low <= high or (name == "cpu" and math.isclose(low, high, rel_tol=1e-9))


def check_resources_fit(plan: packing_plan_pb2.PackingPlan) -> None:
    """No resource is negative; each container's instances fit in its ``required_resource``,
    which fits in its ``scheduled_resource``."""
    for container in plan.containers:
        where = f"packing plan {plan.id!r}, container {container.id}"
        total = {
            "cpu": math.fsum(i.resource.cpu for i in container.instances),
            "ram": sum(i.resource.ram for i in container.instances),
            "disk": sum(i.resource.disk for i in container.instances),
        }
        for name in ("cpu", "ram", "disk"):
            for i in container.instances:
                value = getattr(i.resource, name)
                assert value >= 0, f"{where}: task {i.task_id} has negative {name} {value}"
            required = getattr(container.required_resource, name)
            scheduled = getattr(container.scheduled_resource, name)
            assert _at_most(name, total[name], required), (
                f"{where}: its instances need {name} {total[name]} but it requires only {required}"
            )
            assert _at_most(name, required, scheduled), (
                f"{where}: requires {name} {required} but is scheduled with only {scheduled}"
            )


def check_deterministic(
    packing: Packing, topology: topology_pb2.Topology, config: Mapping[str, Any]
) -> packing_plan_pb2.PackingPlan:
    """Packing twice gives byte-identical plans and leaves the topology unchanged.

    Returns:
        The plan.
    """
    before = topology.SerializeToString(deterministic=True)
    first = packing.pack(topology, config)
    second = packing.pack(topology, dict(config))
    assert topology.SerializeToString(deterministic=True) == before, (
        f"{type(packing).__name__} modified topology {topology.name!r}"
    )
    assert first.SerializeToString(deterministic=True) == second.SerializeToString(
        deterministic=True
    ), f"{type(packing).__name__} gave different plans for the same input: {first} vs {second}"
    return first


def check_packing(
    packing: Packing, topology: topology_pb2.Topology, config: Mapping[str, Any]
) -> packing_plan_pb2.PackingPlan:
    """Pack ``topology`` and run every check above on the result.

    Returns:
        The plan, for further algorithm-specific checks.

    >>> from heron_core.config import build_config
    >>> from heron_core.packing import RoundRobinPacking
    >>> topology = make_topology("wc", {"words": 2, "count": 3})
    >>> plan = check_packing(RoundRobinPacking(), topology, build_config())
    >>> len(plan.containers[0].instances)
    5
    """
    plan = check_deterministic(packing, topology, config)
    check_plan_structure(plan)
    check_every_task_placed_once(topology, plan)
    check_task_ids_contiguous(plan)
    check_component_indexes(topology, plan)
    check_resources_fit(plan)
    return plan
