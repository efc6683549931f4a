"""The scheduler interface: who starts, watches and stops a topology's containers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heron_core.errors import SchedulerError
from heron_core.proto import packing_plan_pb2

__all__ = ["Scheduler", "TopologyRuntime"]


@dataclass(frozen=True)
class TopologyRuntime:
    """What a scheduler needs to know about the topology it runs, besides its config.

    Attributes:
        topology_name: the topology's name.
        topology_id: the topology's id.
        cluster: the cluster name.
        working_dir: the topology's working directory W (holds ``code/`` and ``logs/``).
    """

    topology_name: str
    topology_id: str
    cluster: str
    working_dir: Path


class Scheduler(ABC):
    """Runs one executor per container of a packing plan (container 0 hosts the tmanager).

    Lifecycle: `initialize` once, `on_schedule` once, then any number of `on_restart` and
    `on_update`, then `on_kill` and/or `close`. Methods are called from one thread at a
    time, except `failure`, which the scheduler service polls while the containers start.
    `validate_config` is called by ``heron submit`` before anything is stored, on an
    instance that is never initialized.
    """

    def validate_config(self, config: Mapping[str, Any]) -> None:  # noqa: B027 (optional)
        """Check a resolved config at submit time, before anything is stored or started.

        The default accepts every config; a scheduler overrides it to reject what it cannot
        run (e.g. a state manager its containers cannot reach) without starting anything.

        Raises:
            ConfigurationError: the config cannot work with this scheduler; the message names
                the key and the fix.
            SchedulerError: something this scheduler needs is not installed.
        """

    def failure(self) -> str | None:
        """Why the containers cannot be started (e.g. a container's process that fails at
        once), or None while nothing says so. The scheduler service gives up on the
        submission with this message while it waits for the containers to run. Must not
        block; default: None.
        """
        return None

    @abstractmethod
    def initialize(self, config: Mapping[str, Any], runtime: TopologyRuntime) -> None:
        """Prepare to run ``runtime``'s topology with its resolved ``config`` (no process yet).

        Raises:
            ConfigurationError: a config value the scheduler needs is missing or invalid.
        """

    @abstractmethod
    def on_schedule(self, packing_plan: packing_plan_pb2.PackingPlan) -> None:
        """Start an executor for container 0 and for every container of ``packing_plan``, and
        keep them running (an executor that dies is restarted) until `on_kill`.

        Raises:
            SchedulerError: the containers cannot be started, or this scheduler already
                scheduled a plan.
        """

    @abstractmethod
    def on_kill(self) -> None:
        """Stop every executor (SIGTERM, then SIGKILL after a deadline) and wait until they
        have all exited. Nothing is restarted afterwards. Idempotent.
        """

    @abstractmethod
    def on_restart(self, container: int) -> None:
        """Restart the executor of ``container`` (-1: every container).

        Raises:
            SchedulerError: no such container, or the topology is not running.
        """

    def on_update(self, packing_plan: packing_plan_pb2.PackingPlan) -> None:
        """Run the containers of ``packing_plan``, the new plan of ``heron update`` (already
        in the state manager, with the new topology): stop the containers it no longer has,
        restart every other one (its processes read the new plans as they start) and start
        the new ones. Returns once that is under way; the default refuses.

        Raises:
            SchedulerError: this scheduler cannot update a running topology, the new
                containers cannot be started, or the topology is not running.
        """
        raise SchedulerError(
            f"the {type(self).__name__} scheduler cannot update a running topology; kill it and "
            "submit it again with the new parallelism"
        )

    @abstractmethod
    def close(self) -> None:
        """Release everything; stops the executors first if `on_kill` was not called."""
