"""The Topology Manager daemon (container 0): registers stream managers, builds the plan,
keeps the topology's metrics and exception log and answers queries on its stats port.

Run as ``python -m heron_core.tmanager`` with the common daemon flags (see ``__main__``), or
embed `TManager`. The pure registration and assembly logic (`StMgrRegistry`,
`assemble_physical_plan`) and the metrics cache (`MetricsCache`) are public so that other tools
and tests can use them without sockets.
"""

from heron_core.tmanager._daemon import TManager
from heron_core.tmanager._metrics_cache import MetricsCache, planned_instances
from heron_core.tmanager._registration import (
    RegisterResult,
    Registration,
    StMgrRegistry,
    Waiting,
    assemble_physical_plan,
    expected_stmgrs,
    instance_id,
    stmgr_id,
)

__all__ = [
    "MetricsCache",
    "RegisterResult",
    "Registration",
    "StMgrRegistry",
    "TManager",
    "Waiting",
    "assemble_physical_plan",
    "expected_stmgrs",
    "instance_id",
    "planned_instances",
    "stmgr_id",
]
