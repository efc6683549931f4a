"""Turning the algorithms' container assignments into a ``PackingPlan`` message."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from heron_core.errors import PackingError
from heron_core.packing._inputs import (
    HINT_KEYS,
    ContainerHint,
    Instance,
    Resources,
    show,
    topology_label,
)
from heron_core.proto import packing_plan_pb2, topology_pb2


def assemble_plan(
    topology: topology_pb2.Topology,
    containers: Sequence[Sequence[Instance]],
    padding: Resources,
    hint: ContainerHint,
) -> packing_plan_pb2.PackingPlan:
    """Build the plan: ``containers[i]`` becomes container ``i + 1``.

    Each container's required resource is the sum of its instances plus ``padding``; its
    scheduled resource is the hint where one is given, else the required amount. The plan id is
    the topology id (or name) and a digest of the containers, so equal inputs give equal bytes.

    Raises:
        PackingError: a container needs more of a resource than its hint allows.
    """
    plan = packing_plan_pb2.PackingPlan()
    for container_id, instances in enumerate(containers, start=1):
        required = sum((instance.resource for instance in instances), padding)
        scheduled = hint.or_else(required)
        over = required.exceeding(scheduled)
        if over:
            name = over[0]
            counts = Counter(instance.component for instance in instances)
            held = ", ".join(f"{comp!r} x{n}" for comp, n in sorted(counts.items()))
            raise PackingError(
                f"{topology_label(topology)}: container {container_id} needs "
                f"{show(name, getattr(required, name))} (instances of {held}, plus padding "
                f"{show(name, getattr(padding, name))}) but {HINT_KEYS[name]} allows "
                f"{show(name, getattr(scheduled, name))}; raise the hint or use more containers"
            )
        plan.containers.add(
            id=container_id,
            instances=[i.to_proto() for i in sorted(instances, key=lambda i: i.task_id)],
            required_resource=required.to_proto(),
            scheduled_resource=scheduled.to_proto(),
        )
    digest = hashlib.sha256(plan.SerializeToString(deterministic=True)).hexdigest()[:16]
    plan.id = f"{topology.id or topology.name}-{digest}"
    return plan
