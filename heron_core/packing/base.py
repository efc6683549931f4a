"""The packing interface: how a topology's instances are placed into containers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from heron_core.proto import packing_plan_pb2, topology_pb2

__all__ = ["Packing"]


class Packing(ABC):
    """A packing algorithm. Subclasses take no constructor arguments and hold no state.

    Contract for :meth:`pack` (checked for any implementation by
    ``heron_core.testing.packing_conformance``):

    * every instance of every component (``Component.parallelism`` of them) is placed in exactly
      one container; task ids are ``1..T`` with no gap; ``component_index`` runs
      ``0..parallelism-1`` within each component;
    * container ids are ``1..N`` (container 0 belongs to the tmanager and is never listed);
    * a container's ``required_resource`` covers its instances and its ``scheduled_resource``
      covers its ``required_resource``;
    * the result is a pure function of the arguments: equal inputs give byte-identical plans,
      and the inputs are not modified.
    """

    @abstractmethod
    def pack(
        self, topology: topology_pb2.Topology, config: Mapping[str, Any]
    ) -> packing_plan_pb2.PackingPlan:
        """Place every instance of ``topology`` into containers.

        Args:
            topology: the logical plan. Its ``topology_config`` is not read: the caller has
                already resolved it into ``config``.
            config: the resolved topology config, every registered key present with its
                default. A component's own config overrides the per-instance resource keys
                ``topology.component.{cpu,ram,disk}`` for that component.

        Raises:
            PackingError: the instances cannot be placed under the configured limits.
            ConfigurationError: a packing key is missing or has a wrong type or value.
            TopologyValidationError: the topology has no components, a duplicate or nameless
                component, or a parallelism below 1.
        """

    def repack(
        self,
        topology: topology_pb2.Topology,
        config: Mapping[str, Any],
        current: packing_plan_pb2.PackingPlan,
    ) -> packing_plan_pb2.PackingPlan:
        """The packing plan of a running topology after ``heron update`` changed it.

        The result has :meth:`pack`'s contract. The default packs ``topology`` anew and
        ignores ``current``: ``heron update`` restarts every container with the new plan (as
        Storm's rebalance restarts its workers), so no instance has to stay where it was. An
        algorithm that can keep instances in place overrides this.

        Args:
            topology: the logical plan with the new parallelisms.
            config: the resolved config, ``topology.stmgrs`` already set to a new container
                count if the update asked for one.
            current: the packing plan the topology runs with.

        Raises:
            As :meth:`pack`.
        """
        return self.pack(topology, config)
