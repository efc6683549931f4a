"""``heron sparse submit``."""

from __future__ import annotations

import click

from heron_core.client import kill, submit
from heron_core.errors import SchedulerError
from storm_compat.streamparse._topology import load_sparse_topology
from storm_compat.streamparse.cli._options import (
    config_option,
    environment_option,
    heron_options,
    load_environment,
    load_project,
    name_option,
    progress,
    topology_options,
)

__all__ = ["submit_command"]


@click.command("submit")
@name_option
@click.option("-N", "--override-name", default=None, help="Submit under this name instead.")
@environment_option
@topology_options
@click.option("-f", "--force", is_flag=True, help="Kill a running topology of that name first.")
@config_option
@heron_options
def submit_command(
    name: str | None,
    override_name: str | None,
    env: str | None,
    options: tuple[str, ...],
    debug: bool,
    multilang: bool,
    force: bool,
    config: str,
    heron_home: str | None,
    config_path: str | None,
) -> None:
    """Submit the project's topology to the environment's cluster and return once it runs.

    The options are resolved for the environment's workers (one container per worker). The
    environment's "cluster" names the heron cluster (default: local); its "options" hold the
    topology's config and the cluster's settings, such as
    "heron.statemgr.connection.string" and "heron.scheduler.spark.master" for the spark
    cluster, which kill, list and tail read too.
    """
    project = load_project(config)
    target = load_environment(project, env, config_path)
    cluster = target.cluster
    loaded = load_sparse_topology(
        project,
        name,
        target.name,
        options,
        debug=debug,
        multilang=multilang,
        local=False,
        override_name=override_name,
    )
    with target.naming(loaded.plan.name):
        if force:
            try:
                kill(
                    cluster,
                    loaded.plan.name,
                    config_path,
                    heron_home=heron_home,
                    overrides=target.properties,
                    progress=progress,
                )
            except SchedulerError:
                progress(f"no topology {loaded.plan.name!r} to kill on {cluster!r}")
        result = submit(
            cluster, loaded, config_path=config_path, heron_home=heron_home, progress=progress
        )
    click.echo(f"submitted topology {result.name!r} (id {result.topology_id}) to {cluster!r}")
