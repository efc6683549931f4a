"""The native component API (heronpy-shaped): what users write topologies against.

>>> from heron_core.api import Grouping, Topology, shell_component
>>> class Echo(Topology):
...     lines = shell_component(["python3", "lines.py"], ["line"]).spout_spec()
...     echo = shell_component(["python3", "echo.py"], []).bolt_spec(inputs=[lines])
>>> Echo.build().component("echo").inputs[0].grouping.name
'SHUFFLE'
"""

from heron_core.api import constants, hooks, metrics
from heron_core.api._component import Bolt, BoltCollector, Spout, SpoutCollector
from heron_core.api._context import TopologyContext
from heron_core.api._spec import ComponentSpec, GlobalStreamId, ShellComponent, shell_component
from heron_core.api._state import HashMapState, State, StatefulComponent
from heron_core.api._stream import CustomGrouping, Grouping, Stream
from heron_core.api._topology import Topology, TopologyBuilder
from heron_core.api._tuple import InputBatch, Tuple
from heron_core.api.constants import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM

__all__ = [
    "DEFAULT_STREAM",
    "SYSTEM_COMPONENT",
    "TICK_STREAM",
    "Bolt",
    "BoltCollector",
    "ComponentSpec",
    "CustomGrouping",
    "GlobalStreamId",
    "Grouping",
    "HashMapState",
    "InputBatch",
    "ShellComponent",
    "Spout",
    "SpoutCollector",
    "State",
    "StatefulComponent",
    "Stream",
    "Topology",
    "TopologyBuilder",
    "TopologyContext",
    "Tuple",
    "constants",
    "hooks",
    "metrics",
    "shell_component",
]
