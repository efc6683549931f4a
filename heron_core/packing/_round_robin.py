"""RoundRobinPacking: a fixed number of containers, instances dealt out in turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heron_core.errors import PackingError
from heron_core.packing._inputs import (
    PADDING_KEYS,
    ContainerHint,
    component_requests,
    config_value,
    number_instances,
    read_resources,
    topology_label,
)
from heron_core.packing._plan import assemble_plan
from heron_core.packing.base import Packing
from heron_core.proto import packing_plan_pb2, topology_pb2


class RoundRobinPacking(Packing):
    """Heron's round-robin packing, simplified.

    * ``topology.stmgrs`` containers, numbered 1..N; N may not exceed the number of instances
      (the config registry already requires N >= 1).
    * Components are ordered by requested RAM per instance, descending, ties by name; task ids
      are numbered from 1 in that order and instance ``i`` (0-based) goes to container
      ``i mod N + 1``, so container sizes differ by at most one instance.
    * A container requires the sum of its instances plus the fixed
      ``topology.container.{cpu,ram,disk}.padding``; it is scheduled with the container hint
      ``topology.container.{cpu,ram,disk}`` where given (an error if the container needs more),
      else with what it requires.

    >>> from heron_core.config import build_config
    >>> from heron_core.proto import topology_pb2
    >>> topology = topology_pb2.Topology(id="wc-1", name="wc")
    >>> topology.spouts.add().comp.CopyFrom(topology_pb2.Component(name="words", parallelism=3))
    >>> config = build_config(topology_config={"topology.stmgrs": 2})
    >>> plan = RoundRobinPacking().pack(topology, config)
    >>> [[i.task_id for i in c.instances] for c in plan.containers]
    [[1, 3], [2]]
    """

    def pack(
        self, topology: topology_pb2.Topology, config: Mapping[str, Any]
    ) -> packing_plan_pb2.PackingPlan:
        """See :meth:`Packing.pack`.

        Raises:
            PackingError: ``topology.stmgrs`` exceeds the number of instances, or a container
                needs more than a container hint allows.
        """
        where = topology_label(topology)
        requests = component_requests(topology, config)
        requests.sort(key=lambda r: (-r.resource.ram, r.name))
        instances = number_instances(requests)
        count: int = config_value(config, "topology.stmgrs", where)
        if count > len(instances):
            raise PackingError(
                f"{where}: topology.stmgrs is {count} but the topology has only "
                f"{len(instances)} instances; round-robin packing needs 1 to {len(instances)} "
                "containers"
            )
        return assemble_plan(
            topology,
            [instances[i::count] for i in range(count)],
            read_resources(config, PADDING_KEYS, where),
            ContainerHint.read(config, where),
        )
