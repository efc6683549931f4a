"""The per-container supervisor (``python -m heron_core.executor``).

An executor derives the processes its container needs from the packing plan
(`desired_processes`), diffs them against what runs (`reconcile`, a pure function under a
`RestartPolicy`), and keeps them running (`Supervisor`): it logs every exit, restarts dead
processes with exponential back-off, restarts a container's instances with their stream
manager, gives up (exit 1) when a process exhausts its restarts, and on SIGTERM/SIGINT stops
every child and exits 0.

>>> policy = RestartPolicy(initial_secs=1.0, max_secs=30.0, max_attempts=5)
>>> desired = {"tmanager": ProcessSpec("tmanager", ("python", "-m", "heron_core.tmanager"))}
>>> [(a.verb, a.name) for a in reconcile(desired, {}, now=0.0, policy=policy)]
[(<Verb.START: 'start'>, 'tmanager')]
"""

from heron_core._logging import configure_daemon_logging
from heron_core.executor._children import describe_exit, die_with_parent, spawn, stop_processes
from heron_core.executor._main import main, read_plans
from heron_core.executor._processes import (
    STATE_KEYS,
    DaemonContext,
    ProcessSpec,
    code_dir,
    create_ipc_dir,
    desired_processes,
    instance_name,
    ipc_dir,
    ipc_dirs,
    remove_ipc_dir,
    state_config_json,
    stmgr_name,
)
from heron_core.executor._reconcile import (
    Action,
    ProcessRecord,
    RestartPolicy,
    Verb,
    reconcile,
    record_exit,
)
from heron_core.executor._signals import StopSignals
from heron_core.executor._status import ProcessStatus, StatusFile, read_status, status_path
from heron_core.executor._supervisor import Supervisor, executor_grace_secs

__all__ = [
    "STATE_KEYS",
    "Action",
    "DaemonContext",
    "ProcessRecord",
    "ProcessSpec",
    "ProcessStatus",
    "RestartPolicy",
    "StatusFile",
    "StopSignals",
    "Supervisor",
    "Verb",
    "code_dir",
    "configure_daemon_logging",
    "create_ipc_dir",
    "describe_exit",
    "desired_processes",
    "die_with_parent",
    "executor_grace_secs",
    "instance_name",
    "ipc_dir",
    "ipc_dirs",
    "main",
    "read_plans",
    "read_status",
    "reconcile",
    "record_exit",
    "remove_ipc_dir",
    "spawn",
    "state_config_json",
    "status_path",
    "stmgr_name",
    "stop_processes",
]
