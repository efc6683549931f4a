"""``python -m heron_core.stmgr``: the stream manager of one container."""

from __future__ import annotations

import argparse
import sys

from heron_core._daemon_flags import (
    add_host_flag,
    add_local_endpoint_flag,
    add_shell_port_flag,
    add_topology_flags,
    state_config_of,
)
from heron_core._logging import configure_daemon_logging
from heron_core.statemgr import StateKey, create_state_manager
from heron_core.stmgr._manager import StMgrArgs, StreamManager


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m heron_core.stmgr", description=__doc__)
    add_topology_flags(parser)
    add_local_endpoint_flag(parser, "ipc endpoint prefix for instances")
    add_host_flag(parser, "address peers reach this stmgr at")
    add_shell_port_flag(
        parser, "tcp port of the container's shell (its metrics manager), put in the physical plan"
    )
    ns = parser.parse_args(argv)
    state_config = state_config_of(parser, ns.state_config)
    args = StMgrArgs(
        topology_name=ns.topology_name,
        topology_id=ns.topology_id,
        cluster=ns.cluster,
        container=ns.container,
        working_dir=ns.working_dir,
        local_endpoint=ns.local_endpoint,
        host=ns.host,
        shell_port=ns.shell_port,
    )
    configure_daemon_logging(args.topology_name, "stmgr", args.stmgr_id)
    state = create_state_manager(
        state_config, ns.cluster, key=StateKey.load(args.topology_name, args.working_dir)
    )
    state.start()
    try:
        return StreamManager(args, state).run()
    finally:
        state.close()


if __name__ == "__main__":
    sys.exit(main())
