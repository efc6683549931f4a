"""``python -m heron_core.executor``: the supervisor of one container."""

from __future__ import annotations

import argparse
import json
import logging
import socket
import sys
from collections.abc import Sequence

from heron_core._daemon_flags import add_host_flag, add_topology_flags, parse_state_config
from heron_core._logging import configure_daemon_logging
from heron_core.config import config_from_proto
from heron_core.errors import ConfigurationError, HeronError, StateManagerError
from heron_core.executor._processes import (
    DaemonContext,
    code_dir,
    create_ipc_dir,
    desired_processes,
    remove_ipc_dir,
)
from heron_core.executor._reconcile import RestartPolicy
from heron_core.executor._signals import StopSignals
from heron_core.executor._status import StatusFile, status_path
from heron_core.executor._supervisor import Supervisor, stop_grace_secs
from heron_core.network import reserve_port
from heron_core.proto import packing_plan_pb2, topology_pb2
from heron_core.statemgr import StateKey, StateManager, create_state_manager

__all__ = ["main", "read_plans"]

log = logging.getLogger("heron_core.executor")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m heron_core.executor",
        description="Start and supervise the processes of one container of a topology.",
    )
    add_topology_flags(parser, container="this container's id (0: the tmanager)")
    add_host_flag(
        parser,
        default="",
        help="the address this container's tmanager or stream manager binds and registers "
        "(default: the daemons' own, 127.0.0.1); a scheduler running containers on several "
        "hosts passes the host's address",
    )
    parser.add_argument(
        "--command-prefix",
        default=json.dumps([sys.executable, "-m"]),
        help="JSON list: the argv that runs a daemon module, followed by the module name "
        "(default: this Python with -m); lets tests substitute fake daemons",
    )
    return parser


def read_plans(
    state: StateManager, topology_name: str, topology_id: str
) -> tuple[topology_pb2.Topology, packing_plan_pb2.PackingPlan]:
    """The topology and packing plan of ``topology_name`` from a started state manager.

    Raises:
        StateManagerError: either is missing, or the stored topology has another id (the
            caller belongs to an older submission of the same name).
    """
    topology = state.get_topology(topology_name)
    plan = state.get_packing_plan(topology_name)
    where = f"topology {topology_name!r} on cluster {state.cluster!r}"
    if topology is None or plan is None:
        missing = "topology" if topology is None else "packing plan"
        raise StateManagerError(f"{where}: no {missing} in the state manager")
    if topology.id != topology_id:
        raise StateManagerError(
            f"{where}: expected topology id {topology_id!r}, the state manager holds "
            f"{topology.id!r} (left over from an earlier submission?)"
        )
    return topology, plan


def _parse_prefix(text: str) -> tuple[str, ...]:
    try:
        raw = json.loads(text)
    except ValueError:
        raw = None
    if not (isinstance(raw, list) and raw and all(isinstance(a, str) for a in raw)):
        raise ConfigurationError(f"--command-prefix: expected a JSON list of strings, got {text!r}")
    return tuple(raw)


def _run(args: argparse.Namespace, stop: StopSignals) -> int:
    state_config = parse_state_config(args.state_config)
    prefix = _parse_prefix(args.command_prefix)
    key = StateKey.load(args.topology_name, args.working_dir)
    with create_state_manager(state_config, args.cluster, key=key) as state:
        topology, plan = read_plans(state, args.topology_name, args.topology_id)
    config = config_from_proto(topology.topology_config)
    policy = RestartPolicy.from_config(config)
    working_dir = args.working_dir.resolve()
    ipc = create_ipc_dir(working_dir, args.container) if args.container != 0 else None
    shell: socket.socket | None = None
    if ipc is not None:
        code_dir(working_dir).mkdir(exist_ok=True)  # the instances' cwd (install makes it)
    try:
        if ipc is not None:  # held here for the container's life, served by its metricsmgr
            shell = reserve_port(args.host or "127.0.0.1")
        context = DaemonContext(
            topology_name=args.topology_name,
            topology_id=args.topology_id,
            cluster=args.cluster,
            working_dir=str(working_dir),
            state_config=args.state_config,
            local_endpoint=f"ipc://{ipc}/" if ipc is not None else "",
            command_prefix=prefix,
            host=args.host,
            shell_port=shell.getsockname()[1] if shell is not None else 0,
            shell_fd=shell.fileno() if shell is not None else -1,
        )
        desired = desired_processes(plan, args.container, context)
        log.info(
            "container %d of %r: supervising %s",
            args.container,
            args.topology_name,
            ", ".join(desired),
        )
        status = StatusFile(status_path(working_dir, args.container))
        supervisor = Supervisor(
            desired, working_dir, policy, grace_secs=stop_grace_secs(config), status=status
        )
        return supervisor.run(stop)
    finally:
        if shell is not None:
            shell.close()
        if ipc is not None:
            remove_ipc_dir(working_dir, args.container)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the executor; returns 0 after SIGTERM/SIGINT, 1 on a start-up error or when a
    process exhausted its restarts.
    """
    args = _parser().parse_args(argv)
    configure_daemon_logging(args.topology_name, "executor", args.container)
    try:
        with StopSignals(wake_on_child_exit=True) as stop:
            return _run(args, stop)
    except HeronError as exc:
        log.error("cannot run container %d: %s", args.container, exc)
        return 1
