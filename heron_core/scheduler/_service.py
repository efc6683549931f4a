"""The scheduler as a service: ``python -m heron_core.scheduler.local``.

A detached daemon started by ``heron submit``: it reads the topology and its packing plan
from the state manager, runs the scheduler its config names (``heron.class.scheduler``,
`LocalScheduler` for the ``local`` cluster), publishes its ``SchedulerLocation`` (ephemeral,
with its pid), and on SIGTERM/SIGINT kills the executors and exits 0.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from heron_core.config import config_from_proto
from heron_core.errors import HeronError
from heron_core.executor import (
    StopSignals,
    configure_daemon_logging,
    parse_state_config,
    read_plans,
)
from heron_core.proto import scheduler_pb2
from heron_core.scheduler import TopologyRuntime, create_scheduler
from heron_core.statemgr import create_state_manager

__all__ = ["main", "service_argv"]

log = logging.getLogger("heron_core.scheduler.local")

MODULE = "heron_core.scheduler.local"


def service_argv(
    runtime: TopologyRuntime,
    state_config: str,
    command_prefix: Sequence[str] = (sys.executable, "-m"),
) -> list[str]:
    """The command line of the scheduler service for ``runtime``'s topology.

    >>> rt = TopologyRuntime("wc", "wc-1", "local", Path("/w"))
    >>> service_argv(rt, "{}", ("py", "-m"))[:4]
    ['py', '-m', 'heron_core.scheduler.local', '--topology-name']
    """
    return [
        *command_prefix,
        MODULE,
        "--topology-name",
        runtime.topology_name,
        "--topology-id",
        runtime.topology_id,
        "--cluster",
        runtime.cluster,
        "--working-dir",
        str(runtime.working_dir),
        "--state-config",
        state_config,
    ]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"python -m {MODULE}",
        description="Run a topology's executors on this host until SIGTERM.",
    )
    parser.add_argument("--topology-name", required=True, help="the topology's name")
    parser.add_argument("--topology-id", required=True, help="the topology's id")
    parser.add_argument("--cluster", required=True, help="the cluster the topology runs on")
    parser.add_argument(
        "--working-dir", required=True, type=Path, help="the topology's working directory W"
    )
    parser.add_argument(
        "--state-config", required=True, help="the state-manager keys of the config (JSON object)"
    )
    return parser


def _serve(args: argparse.Namespace) -> int:
    name = args.topology_name
    runtime = TopologyRuntime(name, args.topology_id, args.cluster, args.working_dir.resolve())
    with (
        StopSignals() as stop,
        create_state_manager(parse_state_config(args.state_config), args.cluster) as state,
    ):
        topology, plan = read_plans(state, name, args.topology_id)
        config = config_from_proto(topology.topology_config)
        scheduler = create_scheduler(config["heron.class.scheduler"])
        scheduler.initialize(config, runtime)
        try:
            scheduler.on_schedule(plan)
            location = scheduler_pb2.SchedulerLocation(topology_name=name, pid=os.getpid())
            state.set_scheduler_location(name, location)
            log.info("scheduler of %r is up (pid %d)", name, os.getpid())
            while not stop.requested:
                stop.wait(3600.0)
            log.info("received %s: killing the executors of %r", stop.name, name)
        finally:
            scheduler.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the service; returns 0 after SIGTERM/SIGINT, 1 when it cannot start."""
    args = _parser().parse_args(argv)
    configure_daemon_logging(args.topology_name, "scheduler")
    try:
        return _serve(args)
    except HeronError as exc:
        log.error("cannot run the scheduler of %r: %s", args.topology_name, exc)
        return 1
