"""Carry out ``heron update`` on the side of whoever owns the topology's scheduler: the
scheduler service, or an in-process run (`LocalCluster.rebalance`)."""

from __future__ import annotations

import logging

from heron_core.errors import SchedulerError
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.scheduler.base import Scheduler
from heron_core.statemgr import StateManager

__all__ = ["apply_update"]

log = logging.getLogger(__name__)


def apply_update(
    state: StateManager,
    scheduler: Scheduler,
    name: str,
    topology: topology_pb2.Topology,
    packing_plan: packing_plan_pb2.PackingPlan,
) -> str:
    """Store ``topology`` and ``packing_plan`` as topology ``name``'s plans and let
    ``scheduler`` run them (`Scheduler.on_update`); returns what was done, for the user.

    The run state stored in the topology node is kept (the topology manager owns it). When
    the scheduler refuses, the previous plans are stored back and nothing else changes.

    Raises:
        SchedulerError: no such topology, a topology of another submission, or the
            scheduler refused (its message).
    """
    old_topology, old_plan = state.get_topology(name), state.get_packing_plan(name)
    if old_topology is None or old_plan is None:
        raise SchedulerError(f"topology {name!r} has no plans in the state manager")
    if topology.id != old_topology.id:
        raise SchedulerError(
            f"the update is for topology id {topology.id!r}; {name!r} runs as {old_topology.id!r}"
        )
    new_topology = topology_pb2.Topology()
    new_topology.CopyFrom(topology)
    new_topology.state = old_topology.state
    state.set_topology(name, new_topology)
    state.set_packing_plan(name, packing_plan)
    try:
        scheduler.on_update(packing_plan)
    except BaseException:
        state.set_topology(name, old_topology)
        state.set_packing_plan(name, old_plan)
        raise
    containers = len(packing_plan.containers)
    instances = sum(len(c.instances) for c in packing_plan.containers)
    log.info("topology %r updated: %d instances in %d containers", name, instances, containers)
    return f"updated: {instances} instances in {containers} containers, restarting"
