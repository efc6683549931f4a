"""``heron sparse run``."""

from __future__ import annotations

import click

from heron_core.client import run
from storm_compat.streamparse._topology import load_sparse_topology, pystorm_log_path
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
    help="Stop SECONDS after every instance reported its first metrics, start-up not counted "
    "(streamparse hands this value to Flux, which reads it as milliseconds; here it is "
    "seconds). 0: run until Ctrl-C.",
)
@environment_option
@topology_options
@config_option
@click.option(
    "--keep-dir",
    is_flag=True,
    help="Keep the working directory (its logs/). Without it the logs are moved to "
    "<heron home>/logs/<topology>-<date>-<time>; either way their path is printed at the end.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Do not show the components' log lines. By default every line a spout or bolt "
    "writes (self.logger, print, warnings, errors, tracebacks) is shown as it is written, as "
    "'<component>:<task> | <line>', as 'sparse run' shows Storm's local-mode log. A crash is "
    "shown either way.",
)
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
    quiet: bool,
    heron_home: str | None,
    config_path: str | None,
) -> None:
    """Run the project's topology on this machine in the foreground, with live progress.

    The options are resolved as 'sparse run' does (one worker); Python components run
    in-process unless --multilang is given. The environment's "log" settings of config.json
    apply as streamparse applies them (pystorm.log.*: level, and with a path, a rotating
    file per component of max_bytes and backup_count); a relative path is taken from the
    project directory, and one that does not exist is an error (pystorm does not create it).
    """
    project = load_project(config)
    loaded = load_sparse_topology(
        project, name, env, options, debug=debug, multilang=multilang, local=True
    )
    progress(f"loaded topology {loaded.plan.name!r} from {loaded.origin}")
    log_path = pystorm_log_path(loaded.plan.config)
    if log_path is not None:
        progress(f"Routing Python logging to {log_path} (and to the console).")
    run(
        loaded,
        seconds or None,
        heron_home=heron_home,
        config_path=config_path,
        keep_dir=keep_dir,
        show_logs=not quiet,
        progress=progress,
    )
