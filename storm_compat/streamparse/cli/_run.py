"""``heron sparse run``."""

from __future__ import annotations

import click

from heron_core.client import run
from storm_compat.streamparse._topology import load_sparse_topology
from storm_compat.streamparse.cli._options import (
    config_option,
    environment_option,
    heron_options,
    load_project,
    name_option,
    progress,
    topology_options,
)

__all__ = ["run_command"]


@click.command("run")
@name_option
@click.option(
    "-t",
    "--time",
    "seconds",
    type=click.FloatRange(min=0),
    default=0,
    show_default=True,
    metavar="SECONDS",
    help="Stop after SECONDS (streamparse hands this value to Flux, which reads it as "
    "milliseconds; here it is seconds). 0: run until Ctrl-C.",
)
@environment_option
@topology_options
@config_option
@click.option("--keep-dir", is_flag=True, help="Keep the working directory (its logs/).")
@heron_options
def run_command(
    name: str | None,
    seconds: float,
    env: str | None,
    options: tuple[str, ...],
    debug: bool,
    multilang: bool,
    config: str,
    keep_dir: bool,
    heron_home: str | None,
    config_path: str | None,
) -> None:
    """Run the project's topology on this machine in the foreground, with live progress.

    The options are resolved as 'sparse run' does (one worker); Python components run
    in-process unless --multilang is given.
    """
    project = load_project(config)
    loaded = load_sparse_topology(
        project, name, env, options, debug=debug, multilang=multilang, local=True
    )
    progress(f"loaded topology {loaded.plan.name!r} from {loaded.origin}")
    run(
        loaded,
        seconds or None,
        heron_home=heron_home,
        config_path=config_path,
        keep_dir=keep_dir,
        progress=progress,
    )
