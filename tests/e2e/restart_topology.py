"""The topology the restart tests submit with ``heron submit``: a paced, acked spout and a sink,
each in its own container. ``RESTART_OUT`` names the directory the spout logs its acks to,
``RESTART_LIMIT`` (optional) how many ids the spout emits."""

from __future__ import annotations

import os

from e2e_components import AckingSink, PacedSpout  # type: ignore[import-not-found]

from heron_core.api import Grouping, TopologyBuilder

_out = os.environ.get("RESTART_OUT", "restart-out")
_builder = TopologyBuilder("restarted")
_limit = os.environ.get("RESTART_LIMIT")
_spout = _builder.add_spout("paced", PacedSpout(_out, limit=int(_limit) if _limit else None), par=1)
_builder.add_bolt("sink", AckingSink(_out), par=1, inputs={_spout: Grouping.SHUFFLE})
_builder.set_config(
    {"topology.stmgrs": 2, "topology.message.timeout.secs": 5, "topology.max.spout.pending": 50}
)
topology = _builder.build()
