"""``python -m heron_core.metricsmgr``: the metrics manager (and shell) of one container.

Exits 0 on SIGTERM or SIGINT, 1 when it cannot start, 2 on bad flags.
"""

from __future__ import annotations

import argparse
import signal
import sys

from heron_core._daemon_flags import (
    add_host_flag,
    add_local_endpoint_flag,
    add_shell_port_flag,
    add_topology_flags,
    state_config_of,
)
from heron_core._logging import configure_daemon_logging, enable_stack_dumps
from heron_core.errors import HeronError
from heron_core.metricsmgr._manager import MetricsManager, MetricsManagerArgs
from heron_core.statemgr import StateKey, create_state_manager


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv``, configure logging, run the daemon; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m heron_core.metricsmgr", description=__doc__)
    add_topology_flags(parser, container="this container's id (>= 1)")
    add_local_endpoint_flag(parser, "the container's ipc endpoint prefix")
    add_shell_port_flag(parser, "TCP port of the shell (0: any free port)")
    parser.add_argument(
        "--shell-fd",
        type=int,
        default=-1,
        help="an inherited listening socket on --shell-port to serve the shell on (the "
        "executor holds the port for the container's life); -1: bind --shell-port",
    )
    add_host_flag(parser, "address to bind")
    ns = parser.parse_args(argv)
    if ns.container < 1:
        parser.error(f"a metrics manager runs in a container >= 1, got --container {ns.container}")
    state_config = state_config_of(parser, ns.state_config)
    args = MetricsManagerArgs(
        topology_name=ns.topology_name,
        topology_id=ns.topology_id,
        cluster=ns.cluster,
        container=ns.container,
        working_dir=ns.working_dir.resolve(),
        local_endpoint=ns.local_endpoint,
        shell_port=ns.shell_port,
        shell_fd=ns.shell_fd,
        host=ns.host,
    )
    configure_daemon_logging(args.topology_name, "metricsmgr", args.name)
    enable_stack_dumps()
    try:
        key = StateKey.load(args.topology_name, args.working_dir)
        state = create_state_manager(state_config, ns.cluster, key=key)
        state.start()
    except HeronError as exc:
        print(f"{args.name}: cannot reach the state manager: {exc}", file=sys.stderr)
        return 1
    manager = MetricsManager(args, state)
    signal.signal(signal.SIGTERM, manager.stop)
    signal.signal(signal.SIGINT, manager.stop)
    try:
        return manager.run()
    finally:
        state.close()


if __name__ == "__main__":
    sys.exit(main())
