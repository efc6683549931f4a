"""The library behind the ``heron`` command: load, submit, kill, list and run topologies.

Every verb of the CLI is one function here, reusable by other front ends (the Storm facade's
``LocalCluster``). Functions report progress through an optional ``progress`` callable and
raise `heron_core.errors.HeronError` subclasses with messages meant for users.

>>> cfg = client_config("local", heron_home="/tmp/h")
>>> working_dir(cfg, "local", "word_count")
PosixPath('/tmp/h/topologies/local/word_count')
"""

from heron_core.client._config import (
    HERON_HOME_ENV,
    Progress,
    client_config,
    cluster_state,
    quiet,
    stored_topology,
    topology_dir,
    working_dir,
)
from heron_core.client._control import (
    CONTROL_TIMEOUT_S,
    request_topology_state,
    set_topology_state,
)
from heron_core.client._kill import (
    kill,
    stop_timeout_secs,
    stop_topology_processes,
    topology_processes,
    uninstall,
)
from heron_core.client._list import TopologyInfo, list_topologies
from heron_core.client._loading import LoadedTopology, load_topology
from heron_core.client._logs import LogFollower
from heron_core.client._metrics import ComponentStats, MetricsClient, RateMeter, component_stats
from heron_core.client._restart import RESTART_TIMEOUT_S, restart
from heron_core.client._run import RunResult, run
from heron_core.client._submit import Deployment, SubmitResult, install, prepare, submit
from heron_core.client._tmanager import ShellClient, TManagerClient
from heron_core.client._update import (
    UPDATE_TIMEOUT_S,
    UpdatePlan,
    parse_parallelism,
    plan_update,
    update,
    update_topology,
)

__all__ = [
    "CONTROL_TIMEOUT_S",
    "HERON_HOME_ENV",
    "RESTART_TIMEOUT_S",
    "UPDATE_TIMEOUT_S",
    "ComponentStats",
    "Deployment",
    "LoadedTopology",
    "LogFollower",
    "MetricsClient",
    "Progress",
    "RateMeter",
    "RunResult",
    "ShellClient",
    "SubmitResult",
    "TManagerClient",
    "TopologyInfo",
    "UpdatePlan",
    "client_config",
    "cluster_state",
    "component_stats",
    "install",
    "kill",
    "list_topologies",
    "load_topology",
    "parse_parallelism",
    "plan_update",
    "prepare",
    "quiet",
    "request_topology_state",
    "restart",
    "run",
    "set_topology_state",
    "stop_timeout_secs",
    "stop_topology_processes",
    "stored_topology",
    "submit",
    "topology_dir",
    "topology_processes",
    "uninstall",
    "update",
    "update_topology",
    "working_dir",
]
