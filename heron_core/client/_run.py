"""``heron run``: a topology in the foreground, with live progress, until Ctrl-C or a time limit."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from heron_core.client._config import Progress, quiet
from heron_core.client._kill import uninstall
from heron_core.client._loading import LoadedTopology, load_topology
from heron_core.client._logs import LogFollower
from heron_core.client._metrics import ComponentStats, MetricsClient, RateMeter, component_stats
from heron_core.client._progress import ProgressView, stats_table
from heron_core.client._submit import install, prepare
from heron_core.config import setting
from heron_core.executor import StopSignals
from heron_core.scheduler import LocalScheduler
from heron_core.statemgr import create_state_manager

__all__ = ["RunResult", "run"]

CLUSTER = "local"
LOG_POLL_SECS = 0.2
"""How often the logs are read for lines to show."""
START_LIMIT_S = 60.0
"""How long `run` waits for every instance to report before its time limit counts anyway."""


@dataclass(frozen=True)
class RunResult:
    """How a `run` went.

    Attributes:
        topology_name: the topology's name.
        topology_id: its id.
        elapsed: seconds it ran (from scheduling to the stop request).
        started_in: seconds from scheduling until every instance had reported its first
            metrics, where the time limit starts (None: some never did).
        stopped_by: ``"time limit"`` or the signal that stopped it (``"SIGINT"``).
        components: the last counters read, per component (empty if none were read), with
            the restarts of their instances.
        working_dir: the kept working directory (logs in ``logs/``), or None when removed.
        logs_dir: where the processes' logs were kept (None: no process wrote one).
    """

    topology_name: str
    topology_id: str
    elapsed: float
    stopped_by: str
    components: tuple[ComponentStats, ...]
    working_dir: Path | None
    logs_dir: Path | None = None
    started_in: float | None = None


def _restarts(stats: Sequence[ComponentStats], restarts: dict[str, int]) -> list[ComponentStats]:
    return [replace(s, restarts=restarts.get(s.component, 0)) for s in stats]


def _keep_logs(working_dir: Path, home: Path, name: str) -> Path | None:
    """Move ``W/logs`` to ``<home>/logs/<name>-<date>-<time>`` (a fresh name) and remove W;
    the new path, or None when there were no logs."""
    logs = working_dir / "logs"
    kept: Path | None = None
    if logs.is_dir() and any(logs.iterdir()):
        stem = home / "logs" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
        kept, n = stem, 1
        while kept.exists():
            n += 1
            kept = stem.with_name(f"{stem.name}-{n}")
        kept.parent.mkdir(parents=True, exist_ok=True)
        logs.rename(kept)
    shutil.rmtree(working_dir, ignore_errors=True)
    return kept


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
    show_logs: bool = True,
    console: Console | None = None,
    progress: Progress = quiet,
    poll_interval: float = 1.0,
) -> RunResult:
    """Run the topology ``spec`` (see `load_topology`) on this machine in the foreground.

    The process model is the one of ``heron submit local``, with the `LocalScheduler` in this
    process and the state and working directory in a temporary heron home (or
    ``heron_home``). Every ``poll_interval`` seconds the per-component counters are read from
    the topology manager and shown on ``console`` (a live table on a terminal, a plain line
    every few seconds otherwise); rates are per instance between its own metrics messages
    (`RateMeter`). Meanwhile the lines the components write (their loggers, ``print``,
    multilang ``log`` commands, warnings, errors and tracebacks; not the kernel's routine
    records) are shown as ``<component>:<task> | <line>`` unless ``show_logs`` is false,
    and every crash of a process as one line with its exit status (see `LogFollower`). It
    runs until SIGINT/SIGTERM arrives or ``seconds`` have passed since every instance reported
    its first metrics (the time the processes take to start is not counted; when some
    instance has not reported `START_LIMIT_S` after scheduling, the time counts from then on
    anyway), then stops every process,
    deletes the state and prints a summary table (with the restarts per component) and
    ``logs: <path>``. Unless ``keep_dir``, the working directory is removed and its logs
    are moved to ``<heron home>/logs/<topology>-<date>-<time>`` first (with a temporary
    home, everything else in it is removed). Must be called on the main thread.

    Args:
        spec: a Python file or ``module:attr``, or a topology another front end already
            loaded (e.g. ``heron sparse run``'s streamparse project).
        seconds: the time limit, counted once the topology runs (None: until a signal).
        containers: sets ``topology.stmgrs``.
        overrides: ``key=value`` config overrides.
        name: the topology name (default: the topology's own); unused for a
            `LoadedTopology`, whose plan is named already.
        heron_home: the heron home to use instead of a temporary one.
        config_path: the directory of cluster YAML files (the ``local`` cluster is used).
        keep_dir: keep the working directory (its logs in ``logs/``) after the run.
        show_logs: show the components' log lines on ``console`` as they are written
            (crashes are shown either way).
        console: where progress, log lines and the summary go (default: stdout).
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

    def echo(line: str) -> None:
        console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

    kept_logs: Path | None = None
    try:
        deployment = prepare(CLUSTER, loaded, [*overrides, *extra], config_path, home)
        for line in deployment.inert_settings:
            progress(f"note: {line}")
        topology = deployment.topology
        components = {c.name: c.is_spout for c in loaded.plan.components}
        parallelism = {c.name: c.parallelism for c in loaded.plan.components}
        stats: list[ComponentStats] = []
        meter = RateMeter(float(setting(deployment.config, "heron.metrics.export.interval.sec")))
        scheduler = LocalScheduler()
        scheduler.initialize(deployment.config, deployment.runtime)
        with (
            StopSignals() as stop,
            create_state_manager(deployment.config, CLUSTER) as state,
        ):
            install(state, deployment, progress)
            metrics = MetricsClient(state, topology.name)
            logs = deployment.working_dir / "logs"
            follower = LogFollower(logs, echo, show_logs=show_logs, from_start=True)
            try:
                progress(f"running {topology.name!r}: {deployment.size}; logs in {logs}")
                scheduler.on_schedule(deployment.packing_plan)
                scheduled = next_read = time.monotonic()
                # when every instance had reported: the time limit counts from then
                started: float | None = None
                with ProgressView(console, topology.name) as view:
                    while not stop.requested:
                        now = time.monotonic()
                        start = started if started is not None else scheduled + START_LIMIT_S
                        if seconds is not None and now - start >= seconds:
                            break
                        if now >= next_read:
                            messages = metrics.fetch()
                            if messages is not None:
                                stats = component_stats(components, messages, meter)
                                if started is None and _all_reported(stats, parallelism):
                                    started = now
                            stats = _restarts(stats, follower.restarts())
                            status = "running" if started is not None else "starting"
                            view.update(stats or None, now - scheduled, status)
                            next_read = now + poll_interval
                        follower.poll()
                        wake = min(next_read, time.monotonic() + LOG_POLL_SECS)
                        if seconds is not None:
                            wake = min(wake, start + seconds)
                        stop.wait(wake - time.monotonic())
                elapsed = time.monotonic() - scheduled
                started_in = None if started is None else started - scheduled
                stopped_by = stop.name or "time limit"
                progress(f"stopping {topology.name!r} ({stopped_by})")
            finally:
                metrics.close()
                scheduler.close()
                uninstall(state, topology.name, deployment.working_dir, keep_dir=True)
                follower.close()  # what the processes wrote on their way out
                if keep_dir:
                    kept_logs = logs
                else:
                    kept_logs = _keep_logs(deployment.working_dir, home, topology.name)
        stats = _restarts(stats or component_stats(components, []), follower.restarts())
    finally:
        if heron_home is None and not keep_dir:
            for entry in home.iterdir() if home.is_dir() else ():
                if kept_logs is None or entry != home / "logs":
                    shutil.rmtree(entry, ignore_errors=True)
            if kept_logs is None:
                shutil.rmtree(home, ignore_errors=True)
    begun = "not all started" if started_in is None else f"{started_in:.1f} s to start"
    title = f"{topology.name}: ran {elapsed:.1f} s ({begun}), stopped by {stopped_by}"
    averages = [s.throughput / elapsed if elapsed > 0 else 0.0 for s in stats]
    console.print(stats_table(title, stats, averages, console.width))
    kept = deployment.working_dir if keep_dir else None
    if kept is not None:
        console.print(f"working directory kept: {kept}", highlight=False, markup=False)
    if kept_logs is not None:
        console.print(f"logs: {kept_logs}", highlight=False, markup=False, soft_wrap=True)
    return RunResult(
        topology.name,
        topology.id,
        elapsed,
        stopped_by,
        tuple(stats),
        kept,
        kept_logs,
        started_in,
    )


def _all_reported(stats: Sequence[ComponentStats], parallelism: Mapping[str, int]) -> bool:
    """Whether every instance of every component is in ``stats`` (has sent its metrics)."""
    return all(s.instances >= parallelism[s.component] for s in stats)
