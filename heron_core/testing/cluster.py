"""Run a topology on the real process model from a test, and look inside it.

:class:`TopologyRun` submits a :class:`~heron_core.plan.LogicalPlan` to a cluster whose scheduler
is ``local`` (``local``, or ``localzk`` with ZooKeeper state) in a heron home of the caller's
choice, with the local scheduler in the calling process, exactly as ``heron run`` does. It
exposes the topology's metrics, its processes (to kill one) and its logs, and on exit stops
every process and deletes the state, whether the test passed or not.

Example (not run here: it starts processes)::

    with TopologyRun(plan, heron_home=tmp_path, code_root=Path(__file__).parent) as run:
        run.wait_until(lambda: run.counter("count", "__execute-count") >= 1000, "1000 executes")
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from heron_core.client import (
    Deployment,
    LoadedTopology,
    MetricsClient,
    install,
    prepare,
    stop_timeout_secs,
    stop_topology_processes,
    topology_processes,
    uninstall,
)
from heron_core.errors import HeronError
from heron_core.plan import LogicalPlan
from heron_core.proto import metrics_pb2
from heron_core.scheduler import LocalScheduler
from heron_core.statemgr import StateManager, create_state_manager

__all__ = ["TopologyRun"]


class TopologyRun:
    """A topology running on this machine for the length of a ``with`` block.

    Args:
        plan: the topology.
        heron_home: where its state, working directory and logs go.
        code_root: a directory copied to the topology's code directory, so instance processes
            can import the modules the plan's classes live in (e.g. the test's directory).
        containers: ``topology.stmgrs``.
        config: more ``key=value`` overrides (lists and dicts as JSON, others with ``str``).
        cluster: the cluster config to use; its scheduler must be ``local``.
    """

    def __init__(
        self,
        plan: LogicalPlan,
        *,
        heron_home: Path,
        code_root: Path | None = None,
        containers: int | None = None,
        config: Mapping[str, Any] | None = None,
        cluster: str = "local",
    ) -> None:
        overrides = [f"{k}={_text(v)}" for k, v in (config or {}).items()]
        if containers is not None:
            overrides.append(f"topology.stmgrs={containers}")
        self.cluster = cluster
        self.deployment: Deployment = prepare(
            cluster, LoadedTopology(plan, code_root, plan.name), overrides, None, heron_home
        )
        self.name = plan.name
        self.topology_id = self.deployment.topology.id
        self.working_dir = self.deployment.working_dir
        self._scheduler = LocalScheduler()
        self._state: StateManager | None = None
        self._metrics: MetricsClient | None = None

    def __enter__(self) -> TopologyRun:
        self._scheduler.initialize(self.deployment.config, self.deployment.runtime)
        self._state = create_state_manager(self.deployment.config, self.cluster)
        self._state.start()
        try:
            install(self._state, self.deployment)
            self._metrics = MetricsClient(self._state, self.name)
            self._scheduler.on_schedule(self.deployment.packing_plan)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every process of the topology and delete its state (idempotent)."""
        if self._metrics is not None:
            self._metrics.close()
            self._metrics = None
        self._scheduler.close()
        stop_topology_processes(self.topology_id, None, stop_timeout_secs(self.deployment.config))
        if self._state is not None:
            uninstall(self._state, self.name, self.working_dir, keep_dir=True)
            self._state.close()
            self._state = None

    # --- looking inside ----------------------------------------------------------------------
    @property
    def state(self) -> StateManager:
        """The started state manager the topology is stored in."""
        if self._state is None:
            raise HeronError(f"topology {self.name!r} is not running")
        return self._state

    def metrics(self) -> list[metrics_pb2.MetricPublisherPublishMessage]:
        """The newest metrics message of every instance (and stream manager); [] before the
        topology manager answers."""
        if self._metrics is None:
            raise HeronError(f"topology {self.name!r} is not running")
        return self._metrics.fetch() or []

    def counter(self, component: str, prefix: str) -> int:
        """The sum over ``component``'s tasks of every metric whose name starts with ``prefix``
        (e.g. ``"__execute-count"``)."""
        return sum(
            int(float(datum.value))
            for message in self.metrics()
            if message.publisher.component_name == component
            for datum in message.metrics
            if datum.name.startswith(prefix)
        )

    def wait_until(
        self, predicate: Callable[[], object], what: str, timeout: float = 120.0
    ) -> None:
        """Poll ``predicate`` every 0.1 s; raise TimeoutError naming ``what`` (with the tail of
        every log) if it is not true within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.name}: {what} did not happen in {timeout:.0f}s\n{self.log_tails()}"
                )
            time.sleep(0.1)

    def processes(self) -> list[psutil.Process]:
        """The topology's live processes (executors, daemons, instances)."""
        return topology_processes(self.topology_id)

    def instance_process(self, component: str, index: int = 0) -> psutil.Process:
        """The process of ``component``'s task with component index ``index``."""
        for process in self.processes():
            with contextlib.suppress(psutil.Error):
                argv = process.cmdline()
                if _flag(argv, "--component") == component and _flag(
                    argv, "--component-index"
                ) == str(index):
                    return process
        raise HeronError(f"{self.name}: no live process for {component}[{index}]")

    def kill_instance(self, component: str, index: int = 0, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` (default SIGKILL) to one instance process; its pid."""
        process = self.instance_process(component, index)
        process.send_signal(sig)
        return process.pid

    def logs(self) -> dict[str, str]:
        """Every log of the topology, by process name."""
        return {
            path.stem: path.read_text(errors="replace")
            for path in sorted((self.working_dir / "logs").glob("*.log"))
        }

    def log_tails(self, lines: int = 40) -> str:
        """The last ``lines`` lines of every log, for an error message."""
        return "\n".join(
            f"===== {name} (last {lines} lines) =====\n" + "\n".join(text.splitlines()[-lines:])
            for name, text in self.logs().items()
        )

    def dump_logs(self) -> str:
        """All logs, for a failing test's output."""
        return "\n".join(f"===== {name} =====\n{text}" for name, text in self.logs().items())


def _flag(argv: Sequence[str], flag: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.partition("=")[2]
    return None


def _text(value: Any) -> str:
    """A config value as ``--config-property`` reads it (lists and dicts as JSON).

    >>> _text(True), _text(None), _text(3), _text({"sinks": []})
    ('true', 'null', '3', '{"sinks": []}')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)
