"""A Flux topology definition as frozen dataclasses (Storm's ``org.apache.storm.flux.model``).

Every definition keeps ``where``: the file and the entry it came from, for error messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BeanDef",
    "ConfigMethodDef",
    "FluxDefinition",
    "GroupingDef",
    "PropertyDef",
    "Ref",
    "RefList",
    "StreamDef",
    "TopologySourceDef",
    "VertexDef",
]


@dataclass(frozen=True)
class Ref:
    """``{ref: id}``: the component declared with ``id``."""

    id: str


@dataclass(frozen=True)
class RefList:
    """``{reflist: [ids]}``: a list of declared components."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class PropertyDef:
    """``{name, value}`` or ``{name, ref}``: set through ``setName(value)`` or the attribute."""

    name: str
    value: Any = None
    ref: str | None = None


@dataclass(frozen=True)
class ConfigMethodDef:
    """``{name, args}``: a method called after construction."""

    name: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class BeanDef:
    """An object to build: ``className`` with ``constructorArgs`` (or a ``factory`` method
    with ``factoryArgs``), then ``properties`` and ``configMethods``."""

    where: str
    id: str
    class_name: str
    constructor_args: tuple[Any, ...] = ()
    factory: str | None = None
    factory_args: tuple[Any, ...] = ()
    properties: tuple[PropertyDef, ...] = ()
    config_methods: tuple[ConfigMethodDef, ...] = ()


@dataclass(frozen=True)
class VertexDef:
    """A spout or bolt: its bean and how it runs."""

    bean: BeanDef
    parallelism: int = 1
    num_tasks: int | None = None
    on_heap_memory: float | None = None
    off_heap_memory: float | None = None
    cpu_load: float | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The component id."""
        return self.bean.id


@dataclass(frozen=True)
class GroupingDef:
    """``grouping``: type (``SHUFFLE``, ``FIELDS``, ...), stream, fields, custom class."""

    type: str
    stream_id: str = "default"
    args: tuple[str, ...] = ()
    custom_class: BeanDef | None = None


@dataclass(frozen=True)
class StreamDef:
    """A subscription: bolt ``to`` reads ``from``'s stream with ``grouping``."""

    where: str
    source: str
    target: str
    grouping: GroupingDef


@dataclass(frozen=True)
class TopologySourceDef:
    """``topologySource``: a bean whose method (default ``getTopology``) takes the config
    and returns a Storm-facade ``StormTopology``."""

    bean: BeanDef
    method_name: str = "getTopology"


@dataclass(frozen=True)
class FluxDefinition:
    """A whole Flux file, includes merged.

    Attributes:
        path: the file.
        name: the topology name, if the file gives one.
        config: the topology config.
        components: beans for ``ref``s, in declaration order.
        spouts, bolts: the vertices, in declaration order.
        streams: the subscriptions.
        topology_source: the alternative to spouts, bolts and streams.
    """

    path: str
    name: str | None
    config: Mapping[str, Any]
    components: tuple[BeanDef, ...] = ()
    spouts: tuple[VertexDef, ...] = ()
    bolts: tuple[VertexDef, ...] = ()
    streams: tuple[StreamDef, ...] = ()
    topology_source: TopologySourceDef | None = None
