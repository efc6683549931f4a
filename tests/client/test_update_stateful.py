"""heron update refuses an EFFECTIVELY_ONCE topology: its checkpoints hold one state per task."""

from __future__ import annotations

from pathlib import Path

import pytest

from heron_core.client._update import plan_update
from heron_core.config.codec import config_to_proto
from heron_core.errors import ConfigurationError
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.statemgr import create_state_manager


def test_update_of_an_effectively_once_topology_is_refused(tmp_path: Path) -> None:
    topology = topology_pb2.Topology(
        name="eo",
        id="eo-1",
        spouts=[topology_pb2.Spout(comp=topology_pb2.Component(name="words", parallelism=1))],
        topology_config=config_to_proto({"topology.reliability.mode": "EFFECTIVELY_ONCE"}),
    )
    with create_state_manager({"heron.statemgr.root.path": str(tmp_path)}, "local") as state:
        state.set_topology("eo", topology)
        state.set_packing_plan("eo", packing_plan_pb2.PackingPlan(id="p"))
        with pytest.raises(ConfigurationError, match="topology 'eo' runs EFFECTIVELY_ONCE"):
            plan_update(state, "local", "eo", {"words": 2})
