"""The topology the update tests submit with ``heron submit``: a spout that keeps its position
across restarts, a bolt that keys each number, and a sink fed by a fields grouping on the
key, in 2 containers. ``UPDATE_OUT`` names the directory the components log to,
``UPDATE_LIMIT`` how many ids the spout emits."""

from __future__ import annotations

import os

from e2e_components import KeyBolt, KeyedSink, ResumingSpout  # type: ignore[import-not-found]

from heron_core.api import Grouping, TopologyBuilder

_out = os.environ.get("UPDATE_OUT", "update-out")
_builder = TopologyBuilder("updated")
_spout = _builder.add_spout(
    "numbers", ResumingSpout(_out, int(os.environ.get("UPDATE_LIMIT", "3000")), pause=0.01), par=1
)
_keyer = _builder.add_bolt("keyer", KeyBolt(20), par=1, inputs={_spout: Grouping.SHUFFLE})
_builder.add_bolt("sink", KeyedSink(_out), par=1, inputs={_keyer: Grouping.fields("key")})
_builder.set_config(
    {
        "topology.reliability.mode": "ATLEAST_ONCE",
        "topology.stmgrs": 2,
        "topology.message.timeout.secs": 5,
        "topology.max.spout.pending": 50,
    }
)
topology = _builder.build()
