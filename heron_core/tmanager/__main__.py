"""``python -m heron_core.tmanager``: the Topology Manager of one topology (container 0).

Flags are the common daemon flags of the runtime contract plus ``--host``. Exits 0 on SIGTERM
or SIGINT, 1 when it cannot start or fails while serving, 2 on bad flags.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from types import FrameType

from heron_core._daemon_flags import add_host_flag, add_topology_flags, state_config_of
from heron_core._logging import configure_daemon_logging
from heron_core.errors import HeronError
from heron_core.statemgr import StateKey, create_state_manager
from heron_core.tmanager._daemon import TManager

logger = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv``, configure logging, run the daemon; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m heron_core.tmanager", description=__doc__)
    add_topology_flags(parser, container="this container's id (0)")
    add_host_flag(parser, "address to bind and advertise")
    args = parser.parse_args(argv)
    if args.container != 0:
        parser.error(f"the tmanager runs in container 0, got --container {args.container}")
    state_config = state_config_of(parser, args.state_config)

    configure_daemon_logging(args.topology_name, "tmanager", args.container)
    try:
        key = StateKey.load(args.topology_name, args.working_dir)
        state = create_state_manager(state_config, args.cluster, key=key)
    except HeronError as exc:
        logger.error("cannot build the state manager: %s", exc)
        return 1
    tmanager = TManager(
        state, args.topology_name, args.topology_id, working_dir=args.working_dir, host=args.host
    )

    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # Only record and wake: a handler that logs can run in the middle of another log
        # record's write, where the reentrant write raises and logging swallows it, stop()
        # included (seen: a tmanager that ignored SIGTERM until it was killed).
        received.append(signum)
        tmanager.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # A signal that arrives just before the loop blocks in poll (with no timeout) would
    # otherwise be handled only when something else wakes it: seen as a tmanager ignoring
    # SIGTERM until it was killed, in about one stop out of six.
    signal.set_wakeup_fd(tmanager.wakeup_fd(), warn_on_full_buffer=False)
    try:
        state.start()
        status = tmanager.run()
        if received:
            logger.info("received %s", signal.Signals(received[0]).name)
        return status
    except HeronError as exc:
        logger.error("cannot reach the state manager: %s", exc)
        return 1
    finally:
        state.close()


if __name__ == "__main__":
    sys.exit(main())
