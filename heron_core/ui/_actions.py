"""The UI's control of topologies: activate, deactivate, restart and kill, through the same
`heron_core.client` functions as the ``heron`` verbs of those names.

Unlike the pages, which only ask the tracker, these reach the cluster itself (its state
manager, the topology manager, the scheduler service), so the UI's server needs the cluster
config directory and heron home the topologies were submitted with (``heron ui
--config-path --heron-home``; by default the same ones as the CLI's).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from heron_core import client
from heron_core.proto import topology_pb2

__all__ = ["ACTIONS", "ActionResult", "Controller"]

log = logging.getLogger(__name__)

ACTIONS = ("activate", "deactivate", "restart", "kill")
"""The actions, each named after its ``heron`` verb."""


@dataclass(frozen=True)
class ActionResult:
    """What an action did.

    Attributes:
        message: one line for the user, as the CLI verb prints it.
        changed: False when the topology was in the wanted state already (activate and
            deactivate only).
        containers: the restarted containers (restart only).
    """

    message: str
    changed: bool = True
    containers: tuple[int, ...] = ()


@dataclass(frozen=True)
class Controller:
    """Runs the actions on the clusters of ``config_path`` (None: ``$HERON_CONFIG_PATH``, else
    the built-in clusters) with heron home ``heron_home`` (None: ``$HERON_HOME``, else the
    cluster config's), as the CLI verbs do without ``--config-path`` and ``--heron-home``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     Controller(heron_home=home).run("kill", "local", "wc")
    Traceback (most recent call last):
    ...
    heron_core.errors.SchedulerError: no topology 'wc' on cluster 'local'; topologies there: none
    """

    config_path: str | os.PathLike[str] | None = None
    heron_home: str | os.PathLike[str] | None = None

    def run(self, action: str, cluster: str, name: str) -> ActionResult:
        """Do ``action`` (one of `ACTIONS`) on topology ``name`` of ``cluster``; blocks until
        the client function returns (a restart waits until every container runs again, up to
        `heron_core.client.RESTART_TIMEOUT_S`), so call it off the event loop.

        Raises:
            ValueError: ``action`` is not one of `ACTIONS`.
            HeronError: as the client function (`heron_core.client.set_topology_state`,
                `~heron_core.client.restart`, `~heron_core.client.kill`): no such topology
                or cluster, no scheduler service, the topology manager did not answer, ...
        """
        config_path, home = self.config_path, self.heron_home

        def progress(message: str) -> None:
            log.info("%s of topology %r on %r: %s", action, name, cluster, message)

        if action in ("activate", "deactivate"):
            wanted = topology_pb2.RUNNING if action == "activate" else topology_pb2.PAUSED
            changed = client.set_topology_state(
                cluster, name, wanted, config_path, heron_home=home, progress=progress
            )
            if changed:
                return ActionResult(f"{action}d topology {name!r} on {cluster!r}")
            already = "active" if action == "activate" else "deactivated"
            return ActionResult(f"topology {name!r} on {cluster!r} was {already} already", False)
        if action == "restart":
            done = client.restart(
                cluster, name, -1, config_path, heron_home=home, progress=progress
            )
            which = ", ".join(map(str, done))
            return ActionResult(
                f"restarted topology {name!r} on {cluster!r} "
                f"(container{'s' * (len(done) > 1)} {which})",
                containers=tuple(done),
            )
        if action == "kill":
            client.kill(cluster, name, config_path, heron_home=home, progress=progress)
            return ActionResult(f"killed topology {name!r} on {cluster!r}")
        raise ValueError(f"unknown action {action!r}; the actions are {', '.join(ACTIONS)}")
