"""``python -m heron_core.stmgr``: the stream manager of one container."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from heron_core._logging import configure_daemon_logging
from heron_core.statemgr import create_state_manager
from heron_core.stmgr._manager import StMgrArgs, StreamManager


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m heron_core.stmgr", description=__doc__)
    parser.add_argument("--topology-name", required=True, help="the topology's name")
    parser.add_argument("--topology-id", required=True, help="the topology's id")
    parser.add_argument("--cluster", required=True, help="the cluster the topology runs on")
    parser.add_argument("--working-dir", required=True, type=Path, help="the topology's directory")
    parser.add_argument("--container", required=True, type=int, help="this container's id")
    parser.add_argument("--state-config", required=True, help="state manager config (JSON)")
    parser.add_argument("--local-endpoint", required=True, help="ipc endpoint prefix for instances")
    parser.add_argument("--host", default="127.0.0.1", help="address peers reach this stmgr at")
    parser.add_argument(
        "--shell-port",
        type=int,
        default=0,
        help="tcp port of the container's shell (its metrics manager), put in the physical plan",
    )
    ns = parser.parse_args(argv)
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
    state = create_state_manager(json.loads(ns.state_config), ns.cluster)
    state.start()
    try:
        return StreamManager(args, state).run()
    finally:
        state.close()


if __name__ == "__main__":
    sys.exit(main())
