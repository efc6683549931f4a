"""``StormSubmitter``: submit a topology to a cluster, where it keeps running.

``heron_core.client.submit`` takes a file or ``module:attr`` spec, not a topology object, so
this composes its public steps: `prepare`, `install`, the scheduler service's command line
(`service_argv`), and `stop_topology_processes` + `uninstall` to undo a failed launch.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from typing import Any

from heron_core.client import (
    Deployment,
    install,
    prepare,
    stop_topology_processes,
    uninstall,
)
from heron_core.errors import SchedulerError
from heron_core.executor import state_config_json
from heron_core.scheduler.local import service_argv
from heron_core.statemgr import StateManager, create_state_manager
from storm_compat._code import load_storm_topology
from storm_compat._config import Config
from storm_compat.topology import StormTopology

__all__ = ["StormSubmitter"]

LAUNCH_TIMEOUT_S = 60.0
"""How long ``submitTopology`` waits for the topology's scheduler service to come up."""

_SERVICES: list[subprocess.Popen[bytes]] = []
"""Launched scheduler services, kept referenced: they outlive this call by design."""


def _launch(deployment: Deployment) -> subprocess.Popen[bytes]:
    argv = service_argv(deployment.runtime, state_config_json(deployment.config))
    root = deployment.working_dir
    with (root / "logs" / "scheduler.log").open("ab") as log:
        proc = subprocess.Popen(
            argv,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _SERVICES.append(proc)
    return proc


def _wait_until_up(
    state: StateManager, deployment: Deployment, proc: subprocess.Popen[bytes]
) -> None:
    name = deployment.topology.name
    deadline = time.monotonic() + LAUNCH_TIMEOUT_S
    while state.get_scheduler_location(name) is None:
        code = proc.poll()
        if code is not None or time.monotonic() > deadline:
            log = deployment.working_dir / "logs" / "scheduler.log"
            what = f"exited with status {code}" if code is not None else "did not come up"
            raise SchedulerError(f"the scheduler of topology {name!r} {what}; see {log}")
        time.sleep(0.1)


class StormSubmitter:
    """Submits topologies to a cluster (``Config.CLUSTER`` in the config, default
    ``"local"``), in the heron home of ``$HERON_HOME`` (default ``~/.herondata``)."""

    @staticmethod
    def submitTopology(
        name: str, stormConf: Mapping[str, Any] | None, topology: StormTopology
    ) -> None:
        """Submit ``topology`` as ``name`` with config ``stormConf``; return once its scheduler
        is up. It runs until ``heron kill <cluster> <name>``.

        Raises:
            TopologyValidationError, ConfigurationError: a bad topology or config.
            PackingError: it does not fit the containers.
            SchedulerError: the name is taken on the cluster, or the scheduler did not start.
        """
        conf = dict(stormConf or {})
        cluster = str(conf.pop(Config.CLUSTER, "local"))
        deployment = prepare(cluster, load_storm_topology(name, conf, topology))
        with create_state_manager(deployment.config, cluster) as state:
            install(state, deployment)
            try:
                _wait_until_up(state, deployment, _launch(deployment))
            except BaseException:
                stop_topology_processes(deployment.topology.id, None)
                uninstall(state, name, deployment.working_dir)
                raise
