"""``heron run <topology>``."""

from __future__ import annotations

import click

from heron_core.cli._options import (
    config_path_option,
    config_property_option,
    heron_home_option,
    progress,
)
from heron_core.client import run

__all__ = ["run_command"]


@click.command("run")
@click.argument("topology")
@click.option(
    "--time",
    "seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Stop SECONDS after every instance of the topology reported its first metrics (its "
    "start-up is not counted; after 60 s of start-up the time counts anyway). Default: run "
    "until Ctrl-C (SIGINT) or SIGTERM.",
)
@click.option(
    "--containers",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Number of containers (stream managers) to spread the instances over; sets "
    "topology.stmgrs.",
)
@click.option(
    "--name",
    default=None,
    help="Name of the topology. Default: the topology's own name.",
)
@click.option(
    "--keep-dir",
    is_flag=True,
    help="Keep the working directory after the run (the processes' logs stay in its logs/). "
    "Without it the logs are moved to <heron home>/logs/<topology>-<date>-<time>; either way "
    "their path is printed at the end.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Do not show the components' log lines. By default every line a spout or bolt "
    "writes (its loggers, print, multilang log commands, warnings, errors, tracebacks) is "
    "shown as it is written, as '<component>:<task> | <line>'. A crash is shown either way.",
)
@config_property_option
@config_path_option
@heron_home_option
def run_command(
    topology: str,
    seconds: float | None,
    containers: int | None,
    name: str | None,
    keep_dir: bool,
    quiet: bool,
    overrides: tuple[str, ...],
    config_path: str | None,
    heron_home: str | None,
) -> None:
    """Run TOPOLOGY on this machine in the foreground with live progress, then print a
    summary. Every process of the topology is stopped at the end.

    TOPOLOGY is a Python file (topologies/word_count.py), optionally followed by :ATTR, or
    a package.module:ATTR. The state and working directory live in a temporary heron home
    unless --heron-home is given; the logs are kept (their path is printed last).
    """
    run(
        topology,
        seconds,
        containers,
        overrides,
        name=name,
        heron_home=heron_home,
        config_path=config_path,
        keep_dir=keep_dir,
        show_logs=not quiet,
        progress=progress,
    )
