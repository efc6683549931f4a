"""``python -m heron_core.metricsmgr``: the metrics manager (and shell) of one container.

Exits 0 on SIGTERM or SIGINT, 1 when it cannot start, 2 on bad flags.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from heron_core._logging import configure_daemon_logging, enable_stack_dumps
from heron_core.errors import HeronError
from heron_core.metricsmgr._manager import MetricsManager, MetricsManagerArgs
from heron_core.statemgr import create_state_manager


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv``, configure logging, run the daemon; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m heron_core.metricsmgr", description=__doc__)
    parser.add_argument("--topology-name", required=True, help="the topology's name")
    parser.add_argument("--topology-id", required=True, help="the topology's id")
    parser.add_argument("--cluster", required=True, help="the cluster the topology runs on")
    parser.add_argument("--working-dir", required=True, type=Path, help="the topology's directory")
    parser.add_argument("--container", required=True, type=int, help="this container's id (>= 1)")
    parser.add_argument("--state-config", required=True, help="state manager config (JSON object)")
    parser.add_argument(
        "--local-endpoint", required=True, help="the container's ipc endpoint prefix"
    )
    parser.add_argument(
        "--shell-port", type=int, default=0, help="TCP port of the shell (0: any free port)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    ns = parser.parse_args(argv)
    if ns.container < 1:
        parser.error(f"a metrics manager runs in a container >= 1, got --container {ns.container}")
    try:
        state_config = json.loads(ns.state_config)
    except json.JSONDecodeError as exc:
        parser.error(f"--state-config is not JSON: {exc}")
    args = MetricsManagerArgs(
        topology_name=ns.topology_name,
        topology_id=ns.topology_id,
        cluster=ns.cluster,
        container=ns.container,
        working_dir=ns.working_dir.resolve(),
        local_endpoint=ns.local_endpoint,
        shell_port=ns.shell_port,
        host=ns.host,
    )
    configure_daemon_logging(args.topology_name, "metricsmgr", args.name)
    enable_stack_dumps()
    try:
        state = create_state_manager(state_config, ns.cluster)
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
