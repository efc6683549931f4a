"""Read-only queries over a physical plan, computed once per plan."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from heron_core.config import REGISTRY, RELIABILITY_KEYS
from heron_core.config.codec import config_from_proto
from heron_core.proto import physical_plan_pb2, topology_pb2


class PlanView:
    """What an instance needs to know about the running topology."""

    def __init__(self, pplan: physical_plan_pb2.PhysicalPlan) -> None:
        self.pplan = pplan
        topology = pplan.topology
        self.topology_name = topology.name
        self.topology_id = topology.id
        self.topology_config = config_from_proto(topology.topology_config)
        self.components: dict[str, topology_pb2.Component] = {}
        self.is_spout: dict[str, bool] = {}
        self.outputs: dict[str, dict[str, topology_pb2.OutputStream]] = {}
        self.inputs: dict[str, list[topology_pb2.InputStream]] = {}
        for spout in topology.spouts:
            self._add(spout.comp, True, spout.outputs, [])
        for bolt in topology.bolts:
            self._add(bolt.comp, False, bolt.outputs, bolt.inputs)
        self.consumers: dict[tuple[str, str], list[tuple[str, topology_pb2.InputStream]]] = (
            defaultdict(list)
        )
        for name, inputs in self.inputs.items():
            for inp in inputs:
                self.consumers[(inp.stream.component_name, inp.stream.id)].append((name, inp))
        tasks: dict[str, list[int]] = defaultdict(list)
        self.task_container: dict[int, int] = {}
        self.task_component: dict[int, str] = {}
        self.task_index: dict[int, int] = {}
        stmgr_container = {s.id: s.container_id for s in pplan.stmgrs}
        for instance in pplan.instances:
            info = instance.info
            tasks[info.component_name].append(info.task_id)
            self.task_component[info.task_id] = info.component_name
            self.task_index[info.task_id] = info.component_index
            container = stmgr_container.get(instance.stmgr_id)
            if container is None:
                container = int(instance.stmgr_id.rpartition("-")[2])
            self.task_container[info.task_id] = container
        self.component_tasks = {name: sorted(ts) for name, ts in tasks.items()}

    def _add(
        self,
        comp: topology_pb2.Component,
        is_spout: bool,
        outputs: Any,
        inputs: Any,
    ) -> None:
        self.components[comp.name] = comp
        self.is_spout[comp.name] = is_spout
        self.outputs[comp.name] = {o.stream.id: o for o in outputs}
        self.inputs[comp.name] = list(inputs)

    def own_config(self, component: str) -> dict[str, Any]:
        """The config ``component`` sets itself (without the topology's)."""
        return config_from_proto(self.components[component].config)

    def component_config(self, component: str) -> dict[str, Any]:
        """Topology config overlaid with the component's own config, except for
        `RELIABILITY_KEYS`, which keep the topology's values (see :meth:`ignored_config`)."""
        merged = dict(self.topology_config)
        merged.update(
            (key, value)
            for key, value in self.own_config(component).items()
            if key not in RELIABILITY_KEYS
        )
        return merged

    def ignored_config(self, component: str) -> dict[str, Any]:
        """The component's own values of `RELIABILITY_KEYS` that differ from the topology's
        (they are ignored: acking is on in every component or in none)."""
        own = self.own_config(component)
        return {
            key: own[key]
            for key in RELIABILITY_KEYS
            if key in own and own[key] != self.topology_config.get(key, REGISTRY[key].default)
        }

    def stream_fields(self, component: str, stream: str) -> tuple[str, ...]:
        out = self.outputs.get(component, {}).get(stream)
        return tuple(out.schema.fields) if out is not None else ()

    def tasks_in_container(self, container: int) -> set[int]:
        return {t for t, c in self.task_container.items() if c == container}
