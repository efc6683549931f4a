"""FirstFitDecreasingPacking: the fewest containers of a fixed capacity, biggest instances first."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from heron_core.errors import PackingError
from heron_core.packing._inputs import (
    INSTANCE_KEYS,
    PADDING_KEYS,
    ComponentRequest,
    ContainerHint,
    Instance,
    Resources,
    component_requests,
    config_value,
    number_instances,
    read_resources,
    topology_label,
)
from heron_core.packing._plan import assemble_plan
from heron_core.packing.base import Packing
from heron_core.proto import packing_plan_pb2, topology_pb2

_SORT_KEYS: dict[str, Callable[[ComponentRequest], tuple[Any, ...]]] = {
    "RAM_FIRST": lambda r: (-r.resource.ram, -r.resource.cpu, r.name),
    "CPU_FIRST": lambda r: (-r.resource.cpu, -r.resource.ram, r.name),
}


class FirstFitDecreasingPacking(Packing):
    """Heron's first-fit-decreasing bin packing, simplified.

    * Container capacity is the hint ``topology.container.{cpu,ram,disk}`` where given, else the
      topology's default instance resource (``topology.component.*``) times
      ``topology.container.max.instances``. Padding is, per resource, the larger of the fixed
      ``topology.container.*.padding`` and ``topology.container.padding.percentage`` of the
      capacity.
    * Components are sorted by ``topology.packing.ffd.sorting.strategy`` (RAM_FIRST: RAM, then
      CPU, descending; CPU_FIRST: the reverse), ties by name; task ids are numbered from 1 in
      that order.
    * Each instance goes to the lowest-id container whose instances plus padding plus it stay
      within capacity and which holds fewer than ``topology.container.max.instances``; if none
      does, a new container is opened. The number of containers is an output.
    * A container requires its instances plus padding; it is scheduled with the hint where
      given, else with what it requires.

    With every default (1 core, 1 GiB RAM and disk per instance, 10 per container, 10% or
    1 unit padding) nine instances fill a container:

    >>> from heron_core.config import build_config
    >>> from heron_core.proto import topology_pb2
    >>> topology = topology_pb2.Topology(id="wc-1", name="wc")
    >>> topology.bolts.add().comp.CopyFrom(topology_pb2.Component(name="count", parallelism=10))
    >>> plan = FirstFitDecreasingPacking().pack(topology, build_config())
    >>> [len(c.instances) for c in plan.containers]
    [9, 1]
    """

    def pack(
        self, topology: topology_pb2.Topology, config: Mapping[str, Any]
    ) -> packing_plan_pb2.PackingPlan:
        """See :meth:`Packing.pack`.

        Raises:
            PackingError: an instance does not fit even an empty container.
        """
        where = topology_label(topology)
        strategy: str = config_value(config, "topology.packing.ffd.sorting.strategy", where)
        max_instances: int = config_value(config, "topology.container.max.instances", where)
        percentage: int = config_value(config, "topology.container.padding.percentage", where)
        default = read_resources(config, INSTANCE_KEYS, where)
        fixed = read_resources(config, PADDING_KEYS, where)
        hint = ContainerHint.read(config, where)
        capacity = hint.or_else(
            Resources(
                default.cpu * max_instances,
                default.ram * max_instances,
                default.disk * max_instances,
            )
        )
        padding = Resources(
            max(fixed.cpu, capacity.cpu * percentage / 100),
            max(fixed.ram, capacity.ram * percentage // 100),
            max(fixed.disk, capacity.disk * percentage // 100),
        )
        requests = sorted(component_requests(topology, config), key=_SORT_KEYS[strategy])
        for request in requests:
            if (padding + request.resource).exceeding(capacity):
                raise PackingError(
                    f"{where}: an instance of component {request.name!r} requests "
                    f"{request.resource.describe()}, more than fits in a container of capacity "
                    f"{capacity.describe()} with padding {padding.describe()}"
                )
        containers: list[list[Instance]] = []
        loads: list[Resources] = []
        for instance in number_instances(requests):
            for slot, load in enumerate(loads):
                has_room = len(containers[slot]) < max_instances
                if has_room and not (load + instance.resource).exceeding(capacity):
                    containers[slot].append(instance)
                    loads[slot] = load + instance.resource
                    break
            else:
                containers.append([instance])
                loads.append(padding + instance.resource)
        return assemble_plan(topology, containers, padding, hint)
