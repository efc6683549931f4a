"""``heron sparse tail``: the last lines of a topology's logs, and optionally what follows."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from heron_core.client import client_config, cluster_state, stored_topology, topology_dir
from storm_compat.streamparse.cli._options import (
    config_option,
    environment_option,
    heron_options,
    load_environment,
    load_project,
    progress,
)

__all__ = ["follow_logs", "last_lines", "logs_dir", "tail_command"]

INSTANCE_LOGS = "container_*"
"""The default pattern: the logs of the spout and bolt instances (what pystorm logs)."""

ON_SPARK = (
    "note: the spark scheduler runs the containers in Spark tasks, so their processes log "
    "where each task runs: under containers/<K>/logs/ of the Spark executor's directory "
    "(<SPARK_WORKER_DIR>/<application>/<executor>/ on a standalone worker; the topology's "
    "working directory with a local[N] master); {logs} holds the scheduler's log"
)
"""Printed by ``tail`` when no log matches on a cluster whose scheduler is spark."""


def logs_dir(
    cluster: str,
    name: str,
    *,
    config_path: str | None = None,
    heron_home: str | None = None,
    overrides: Sequence[str] = (),
) -> Path:
    """The ``logs`` directory of topology ``name`` on ``cluster`` (``overrides``: ``key=value``
    config properties, e.g. the state manager's address).

    Raises:
        SchedulerError: no such topology (the message lists those there).
    """
    with cluster_state(cluster, config_path, heron_home=heron_home, overrides=overrides) as (
        config,
        state,
    ):
        stored_topology(state, cluster, name)
        return topology_dir(state, config, cluster, name) / "logs"


def last_lines(path: Path, count: int) -> list[str]:
    """The last ``count`` lines of ``path`` (without line ends).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
    ...     _ = f.write("a\\nb\\nc\\n"); f.flush()
    ...     last_lines(Path(f.name), 2)
    ['b', 'c']
    """
    with path.open(errors="replace") as lines:
        return [line.rstrip("\n") for line in deque(lines, maxlen=count)] if count > 0 else []


def follow_logs(
    directory: Path,
    pattern: str,
    echo: Callable[[str], None],
    *,
    stop: Callable[[], bool] = lambda: False,
    poll: float = 0.5,
) -> None:
    """Echo every line appended to the logs matching ``pattern`` (files created later
    included, from their start) as ``<log name>: <line>``, until ``stop()`` or until the
    directory is removed (the topology was killed)."""
    offsets = {path: path.stat().st_size for path in directory.glob(pattern)}
    partial: dict[Path, str] = {}
    while not stop() and directory.is_dir():
        for path in sorted(directory.glob(pattern)):
            offset = offsets.get(path, 0)
            try:
                with path.open("rb") as log:
                    log.seek(offset)
                    data = log.read()
            except FileNotFoundError:
                continue
            offsets[path] = offset + len(data)
            *lines, rest = (partial.pop(path, "") + data.decode(errors="replace")).split("\n")
            if rest:
                partial[path] = rest
            for line in lines:
                echo(f"{path.stem}: {line}")
        time.sleep(poll)


@click.command("tail")
@click.option(
    "-n", "--name", default=None, help="The topology's name (default: the only topology file's)."
)
@environment_option
@click.option("-f", "--follow", is_flag=True, help="Keep printing lines as they are logged.")
@click.option(
    "-l",
    "--num-lines",
    default=10,
    show_default=True,
    type=click.IntRange(min=0),
    help="Lines to print from the end of each log.",
)
@click.option(
    "--pattern",
    default=INSTANCE_LOGS,
    show_default=True,
    help="Glob of the log names (e.g. 'container_*_count_bolt_*', or '*' for every daemon).",
)
@config_option
@heron_options
def tail_command(
    name: str | None,
    env: str | None,
    follow: bool,
    num_lines: int,
    pattern: str,
    config: str,
    heron_home: str | None,
    config_path: str | None,
) -> None:
    """Print the last lines of the topology's instance logs; with -f, follow them (the
    cluster's settings come from the environment's "options", as for submit)."""
    project = load_project(config)
    target = load_environment(project, env, config_path)
    topology = name if name is not None else project.topology_file()[0]
    with target.naming(topology):
        directory = logs_dir(
            target.cluster,
            topology,
            config_path=config_path,
            heron_home=heron_home,
            overrides=target.properties,
        )
        scheduler = client_config(
            target.cluster, config_path=config_path, overrides=target.properties
        )["heron.class.scheduler"]
    pattern = pattern if pattern.endswith(".log") else f"{pattern}.log"
    if scheduler == "spark" and not any(directory.glob(pattern)):
        progress(ON_SPARK.format(logs=directory))
    for path in sorted(directory.glob(pattern)):
        click.echo(f"==> {path.name} <==")
        for line in last_lines(path, num_lines):
            click.echo(line)
    if follow:
        follow_logs(directory, pattern, click.echo)
