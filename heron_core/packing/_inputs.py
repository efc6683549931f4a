"""What the packing algorithms read: resources, validated config values and component requests.

CPU is kept as an exact ``Fraction`` of the value's decimal text, so that ten instances of
``0.1`` cores add up to exactly ``1`` and fit tests never flip on float rounding. RAM and disk
are integer bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from heron_core.config import REGISTRY, config_from_proto
from heron_core.errors import ConfigurationError, TopologyValidationError
from heron_core.proto import packing_plan_pb2, topology_pb2

RESOURCE_NAMES = ("cpu", "ram", "disk")
INSTANCE_KEYS = {name: f"topology.component.{name}" for name in RESOURCE_NAMES}
HINT_KEYS = {name: f"topology.container.{name}" for name in RESOURCE_NAMES}
PADDING_KEYS = {name: f"topology.container.{name}.padding" for name in RESOURCE_NAMES}


def _show_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def show(name: str, value: Fraction | int) -> str:
    """``cpu=1.5`` or ``ram=2 GiB``: one resource amount for an error message."""
    if name == "cpu":
        return f"cpu={float(value):g}"
    return f"{name}={_show_bytes(int(value))}"


@dataclass(frozen=True)
class Resources:
    """An amount of cpu (cores), ram and disk (bytes)."""

    cpu: Fraction
    ram: int
    disk: int

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.ram + other.ram, self.disk + other.disk)

    def exceeding(self, limit: Resources) -> list[str]:
        """The names of the resources where ``self`` is above ``limit``, in cpu/ram/disk order."""
        return [name for name in RESOURCE_NAMES if getattr(self, name) > getattr(limit, name)]

    def describe(self) -> str:
        return ", ".join(show(name, getattr(self, name)) for name in RESOURCE_NAMES)

    def to_proto(self) -> packing_plan_pb2.Resource:
        return packing_plan_pb2.Resource(cpu=float(self.cpu), ram=self.ram, disk=self.disk)


def config_value(config: Mapping[str, Any], key: str, where: str) -> Any:
    """``config[key]``, checked and normalized by the key's entry in the config registry.

    Args:
        where: whose config this is, for messages: ``topology 'wc'`` or
            ``topology 'wc', component 'split'``.

    Raises:
        ConfigurationError: the key is missing or its value is invalid; the message names the
            key, ``where``, what was expected and what was found.
    """
    try:
        value = config[key]
    except KeyError:
        raise ConfigurationError(
            f"config key {key!r} is missing from the config of {where}; packing expects the "
            "resolved config with every registered key present (see heron_core.config)"
        ) from None
    return REGISTRY[key].check(value, f"the config of {where}")


def _amount(name: str, value: Any) -> Any:
    return Fraction(str(value)) if name == "cpu" and value is not None else value


def read_resources(
    config: Mapping[str, Any],
    keys: Mapping[str, str],
    where: str,
    fallback: Resources | None = None,
) -> Resources:
    """Resources from the keys ``keys["cpu"]``, ``keys["ram"]`` and ``keys["disk"]``.

    With a ``fallback``, a key absent from ``config`` takes the fallback's amount.
    """
    amounts = [
        getattr(fallback, name)
        if fallback is not None and keys[name] not in config
        else _amount(name, config_value(config, keys[name], where))
        for name in RESOURCE_NAMES
    ]
    return Resources(*amounts)


@dataclass(frozen=True)
class ContainerHint:
    """``topology.container.{cpu,ram,disk}``: the requested container size, None = no hint."""

    cpu: Fraction | None
    ram: int | None
    disk: int | None

    @classmethod
    def read(cls, config: Mapping[str, Any], where: str) -> ContainerHint:
        return cls(
            *(
                _amount(name, config_value(config, HINT_KEYS[name], where))
                for name in RESOURCE_NAMES
            )
        )

    def or_else(self, default: Resources) -> Resources:
        """The hinted amount of each resource, or ``default``'s where there is no hint."""
        return Resources(
            default.cpu if self.cpu is None else self.cpu,
            default.ram if self.ram is None else self.ram,
            default.disk if self.disk is None else self.disk,
        )


@dataclass(frozen=True)
class ComponentRequest:
    """One component of the topology and what each of its instances asks for."""

    name: str
    parallelism: int
    resource: Resources


@dataclass(frozen=True)
class Instance:
    """One task: its component, index within the component, global task id and resources."""

    component: str
    index: int
    task_id: int
    resource: Resources

    def to_proto(self) -> packing_plan_pb2.InstancePlan:
        return packing_plan_pb2.InstancePlan(
            component_name=self.component,
            task_id=self.task_id,
            component_index=self.index,
            resource=self.resource.to_proto(),
        )


def topology_label(topology: topology_pb2.Topology) -> str:
    """``topology 'name'``: how messages name the topology (its id when it has no name)."""
    return f"topology {topology.name or topology.id!r}"


def component_requests(
    topology: topology_pb2.Topology, config: Mapping[str, Any]
) -> list[ComponentRequest]:
    """The spouts' and bolts' requests, in topology order.

    A component's own config overrides ``topology.component.{cpu,ram,disk}`` of ``config``.

    Raises:
        TopologyValidationError: no components, a nameless or duplicate component, or a
            parallelism below 1.
        ConfigurationError: a resource value is missing or invalid.
    """
    name = topology.name or topology.id
    where = topology_label(topology)
    components = [s.comp for s in topology.spouts] + [b.comp for b in topology.bolts]
    if not components:
        raise TopologyValidationError(name, None, "has no spouts or bolts, nothing to pack")
    default = read_resources(config, INSTANCE_KEYS, where)
    requests: list[ComponentRequest] = []
    seen: set[str] = set()
    for comp in components:
        if not comp.name or comp.name in seen:
            problem = "is defined twice" if comp.name else "has an empty name"
            raise TopologyValidationError(name, comp.name, f"component {problem}")
        seen.add(comp.name)
        if comp.parallelism < 1:
            raise TopologyValidationError(
                name, comp.name, f"parallelism must be >= 1, got {comp.parallelism}"
            )
        comp_where = f"{where}, component {comp.name!r}"
        try:
            overrides = config_from_proto(comp.config)
        except Exception as exc:  # any decoding failure of user-supplied config bytes
            raise ConfigurationError(
                f"{comp_where}: cannot decode component config: {exc}"
            ) from exc
        resource = read_resources(overrides, INSTANCE_KEYS, comp_where, fallback=default)
        requests.append(ComponentRequest(comp.name, comp.parallelism, resource))
    return requests


def number_instances(ordered: list[ComponentRequest]) -> list[Instance]:
    """Every instance of ``ordered`` components, task ids 1.. in that order."""
    instances: list[Instance] = []
    for request in ordered:
        for index in range(request.parallelism):
            instances.append(Instance(request.name, index, len(instances) + 1, request.resource))
    return instances
