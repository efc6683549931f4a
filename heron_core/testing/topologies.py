"""Small topologies as protobufs, for tests of the daemons that read one from the state
manager (stream manager, topology manager) without building a plan from components.

>>> topology = word_count_proto(spouts=2)
>>> [(c.comp.name, c.comp.parallelism) for c in [*topology.spouts, *topology.bolts]]
[('word', 2), ('count', 2)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heron_core.config import config_to_proto
from heron_core.proto import topology_pb2

__all__ = ["word_count_proto"]


def word_count_proto(
    name: str = "wc",
    topology_id: str = "wc-1",
    spouts: int = 1,
    config: Mapping[str, Any] | None = None,
) -> topology_pb2.Topology:
    """A running topology: spout "word" (``spouts`` tasks) feeding bolt "count" (2 tasks) on
    the default stream by shuffle grouping; ``config`` (a resolved config) as its topology
    config, none when None."""
    stream = topology_pb2.StreamId(id="default", component_name="word")
    topology = topology_pb2.Topology(
        id=topology_id,
        name=name,
        state=topology_pb2.RUNNING,
        spouts=[
            topology_pb2.Spout(
                comp=topology_pb2.Component(name="word", parallelism=spouts),
                outputs=[topology_pb2.OutputStream(stream=stream)],
            )
        ],
        bolts=[
            topology_pb2.Bolt(
                comp=topology_pb2.Component(name="count", parallelism=2),
                inputs=[topology_pb2.InputStream(stream=stream, gtype=topology_pb2.SHUFFLE)],
            )
        ],
    )
    if config is not None:
        topology.topology_config.CopyFrom(config_to_proto(config))
    return topology
