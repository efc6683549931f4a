"""``python -m heron_core.instance``: run one spout or bolt task."""

from __future__ import annotations

import argparse
import sys

from heron_core._daemon_flags import add_local_endpoint_flag, add_topology_flags
from heron_core._logging import configure_daemon_logging
from heron_core.instance._runtime import InstanceArgs, InstanceRuntime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m heron_core.instance", description=__doc__)
    add_topology_flags(parser, state=False)
    parser.add_argument("--task-id", required=True, type=int, help="this instance's global task id")
    parser.add_argument("--component", required=True, help="the spout or bolt this task runs")
    parser.add_argument("--component-index", required=True, type=int, help="index in component")
    add_local_endpoint_flag(parser, "the stmgr's ipc endpoint prefix")
    ns = parser.parse_args(argv)
    args = InstanceArgs(
        topology_name=ns.topology_name,
        topology_id=ns.topology_id,
        container=ns.container,
        task_id=ns.task_id,
        component=ns.component,
        component_index=ns.component_index,
        working_dir=ns.working_dir,
        local_endpoint=ns.local_endpoint,
    )
    configure_daemon_logging(args.topology_name, "instance", args.task_id)
    # What user code prints reaches the log (and the console of `heron run`) line by line,
    # not in blocks of 8 KiB when the process ends (stderr is line-buffered already).
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)
    return InstanceRuntime(args).run()


if __name__ == "__main__":
    sys.exit(main())
