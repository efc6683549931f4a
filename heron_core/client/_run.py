"""``heron run``: a topology in the foreground, with live progress, until Ctrl-C or a time limit."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from heron_core.client._config import Progress, quiet
from heron_core.client._kill import uninstall
from heron_core.client._loading import LoadedTopology, load_topology
from heron_core.client._metrics import ComponentStats, MetricsClient, component_stats
from heron_core.client._progress import ProgressView, stats_table
from heron_core.client._submit import install, prepare
from heron_core.executor import StopSignals
from heron_core.scheduler import LocalScheduler
from heron_core.statemgr import create_state_manager

__all__ = ["RunResult", "run"]

CLUSTER = "local"


@dataclass(frozen=True)
class RunResult:
    """How a `run` went.

    Attributes:
        topology_name: the topology's name.
        topology_id: its id.
        elapsed: seconds it ran (from scheduling to the stop request).
        stopped_by: ``"time limit"`` or the signal that stopped it (``"SIGINT"``).
        components: the last counters read, per component (empty if none were read).
        working_dir: the kept working directory (logs in ``logs/``), or None when removed.
    """

    topology_name: str
    topology_id: str
    elapsed: float
    stopped_by: str
    components: tuple[ComponentStats, ...]
    working_dir: Path | None


def run(
    spec: str | LoadedTopology,
    seconds: float | None = None,
    containers: int | None = None,
    overrides: Sequence[str] = (),
    *,
    name: str | None = None,
    heron_home: str | os.PathLike[str] | None = None,
    config_path: str | os.PathLike[str] | None = None,
    keep_dir: bool = False,
    console: Console | None = None,
    progress: Progress = quiet,
    poll_interval: float = 1.0,
) -> RunResult:
    """Run the topology ``spec`` (see `load_topology`) on this machine in the foreground.

    The process model is the one of ``heron submit local``, with the `LocalScheduler` in this
    process and the state and working directory in a temporary heron home (or
    ``heron_home``). Every ``poll_interval`` seconds the per-component counters are read from
    the topology manager and shown on ``console`` (a live table on a terminal, a plain line
    every few seconds otherwise). It runs until ``seconds`` have passed or SIGINT/SIGTERM
    arrives, then stops every process, deletes the state and, unless ``keep_dir``, the
    working directory (and the temporary home), and prints a summary table. Must be called
    on the main thread.

    Args:
        spec: a Python file or ``module:attr``, or a topology another front end already
            loaded (e.g. ``heron sparse run``'s streamparse project).
        seconds: the time limit (None: until a signal).
        containers: sets ``topology.stmgrs``.
        overrides: ``key=value`` config overrides.
        name: the topology name (default: the topology's own); unused for a
            `LoadedTopology`, whose plan is named already.
        heron_home: the heron home to use instead of a temporary one.
        config_path: the directory of cluster YAML files (the ``local`` cluster is used).
        keep_dir: keep the working directory (its logs) after the run.
        console: where progress and the summary go (default: stdout).
        progress: receives set-up messages.
        poll_interval: seconds between metric reads.

    Raises:
        ConfigurationError, TopologyValidationError, UserCodeError, PackingError: a bad
            topology or config (nothing was started).
    """
    console = console if console is not None else Console()
    loaded = spec if isinstance(spec, LoadedTopology) else load_topology(spec, name)
    extra = [f"topology.stmgrs={containers}"] if containers is not None else []
    home = (
        Path(heron_home) if heron_home is not None else Path(tempfile.mkdtemp(prefix="heron-run-"))
    )
    try:
        deployment = prepare(CLUSTER, loaded, [*overrides, *extra], config_path, home)
        topology = deployment.topology
        components = {c.name: c.is_spout for c in loaded.plan.components}
        stats: list[ComponentStats] = []
        scheduler = LocalScheduler()
        scheduler.initialize(deployment.config, deployment.runtime)
        with (
            StopSignals() as stop,
            create_state_manager(deployment.config, CLUSTER) as state,
        ):
            install(state, deployment, progress)
            metrics = MetricsClient(state, topology.name)
            try:
                progress(
                    f"running {topology.name!r}: {deployment.size}; "
                    f"logs in {deployment.working_dir / 'logs'}"
                )
                scheduler.on_schedule(deployment.packing_plan)
                start = last = time.monotonic()
                with ProgressView(console, topology.name) as view:
                    while not stop.requested:
                        now = time.monotonic()
                        if seconds is not None and now - start >= seconds:
                            break
                        messages = metrics.fetch()
                        if messages is not None:
                            stats = component_stats(components, messages, stats, now - last)
                            last = now
                        status = "running" if messages is not None else "starting"
                        view.update(stats or None, now - start, status)
                        wait = poll_interval - (time.monotonic() - now)
                        if seconds is not None:
                            wait = min(wait, start + seconds - time.monotonic())
                        stop.wait(wait)
                elapsed = time.monotonic() - start
                stopped_by = stop.name or "time limit"
                progress(f"stopping {topology.name!r} ({stopped_by})")
            finally:
                metrics.close()
                scheduler.close()
                uninstall(state, topology.name, deployment.working_dir, keep_dir=keep_dir)
    finally:
        if heron_home is None and not keep_dir:
            shutil.rmtree(home, ignore_errors=True)
    title = f"{topology.name}: ran {elapsed:.1f} s, stopped by {stopped_by}"
    averages = [s.throughput / elapsed if elapsed > 0 else 0.0 for s in stats]
    console.print(stats_table(title, stats, averages))
    kept = deployment.working_dir if keep_dir else None
    if kept is not None:
        console.print(f"working directory kept: {kept}", highlight=False, markup=False)
    return RunResult(topology.name, topology.id, elapsed, stopped_by, tuple(stats), kept)
