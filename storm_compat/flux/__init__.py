"""Flux YAML topologies (Storm's ``org.apache.storm.flux``): ``heron run|submit topology.yaml``.

A Flux file names its topology, config, spouts, bolts and streams (every Flux grouping),
``components`` to ``ref``, ``includes`` and ``${...}`` substitution; see
:func:`load_flux_topology` for how class names, properties files and shell components are
resolved. Bolts may be windowed (``BaseWindowedBolt`` with ``configMethods`` taking
``BaseWindowedBolt$Count``/``$Duration`` components) or stateful (``IStatefulBolt``), as with
``TopologyBuilder``. Storm's wrapper classes live in :mod:`storm_compat.flux.wrappers`.

>>> from storm_compat.flux import PROPERTIES_ENV, parse_properties
>>> PROPERTIES_ENV
'HERON_FLUX_PROPERTIES'
>>> parse_properties("words.topic=sentences")
{'words.topic': 'sentences'}
"""

from storm_compat.flux._builder import JAVA_CLASSES, build_plan, load_flux_topology
from storm_compat.flux._model import (
    BeanDef,
    ConfigMethodDef,
    FluxDefinition,
    GroupingDef,
    PropertyDef,
    Ref,
    RefList,
    StreamDef,
    TopologySourceDef,
    VertexDef,
)
from storm_compat.flux._parser import GROUPING_TYPES, load_definition
from storm_compat.flux._substitution import (
    PROPERTIES_ENV,
    find_properties,
    parse_properties,
    substitute,
)

__all__ = [
    "GROUPING_TYPES",
    "JAVA_CLASSES",
    "PROPERTIES_ENV",
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
    "build_plan",
    "find_properties",
    "load_definition",
    "load_flux_topology",
    "parse_properties",
    "substitute",
]
