"""Options shared by the ``heron sparse`` verbs, and what they resolve to."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from heron_core.config import load_cluster_config
from heron_core.errors import ConfigurationError
from storm_compat._context import naming_where
from storm_compat.streamparse._project import CONFIG_FILE, SparseProject

__all__ = [
    "CLUSTER_KEY",
    "Environment",
    "cluster_of",
    "cluster_properties",
    "config_option",
    "environment_option",
    "heron_options",
    "load_environment",
    "load_project",
    "name_option",
    "progress",
    "topology_options",
]

F = TypeVar("F", bound=Callable[..., Any])

CLUSTER_KEY = "cluster"
"""The key of a ``config.json`` environment naming the heron cluster it submits to (a heron
addition to streamparse's keys); without it, ``local``."""


def progress(message: str) -> None:
    """Print a progress message to stderr."""
    click.echo(message, err=True)


def cluster_of(env: Mapping[str, Any]) -> str:
    """The cluster an environment names (``"cluster"``), ``local`` by default.

    >>> cluster_of({}), cluster_of({"cluster": "localzk"})
    ('local', 'localzk')
    """
    return str(env.get(CLUSTER_KEY) or "local")


def cluster_properties(env: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``heron.*`` entries of an environment's ``options`` as ``key=value`` config
    properties (the values as JSON, strings bare): the cluster's own settings, such as the
    state manager's address or the Spark master, for the verbs that reach the cluster without
    loading the topology (``kill``, ``list``, ``tail``). ``submit`` reads every option as the
    topology's config instead, as streamparse does.

    >>> cluster_properties({"options": {"heron.statemgr.connection.string": "zk:2181",
    ...                                 "heron.statemgr.zookeeper.session.timeout.ms": 9000,
    ...                                 "topology.workers": 2}})
    ('heron.statemgr.connection.string=zk:2181', 'heron.statemgr.zookeeper.session.timeout.ms=9000')
    """
    options = env.get("options") or {}
    return tuple(
        f"{key}={value if isinstance(value, str) else json.dumps(value)}"
        for key, value in options.items()
        if key.startswith("heron.")
    )


@dataclass(frozen=True)
class Environment:
    """An environment of ``config.json`` and the heron cluster it names.

    Attributes:
        name: the environment's name (None when the project defines none).
        config: the environment's object (streamparse's keys and heron's ``cluster``).
        cluster: the cluster it names (`cluster_of`).
        properties: its cluster settings as config properties (`cluster_properties`).
    """

    name: str | None
    config: Mapping[str, Any]
    cluster: str
    properties: tuple[str, ...]

    def naming(self, topology: str | None = None) -> contextlib.AbstractContextManager[None]:
        """Within the block, a configuration or state-manager error (a bad or missing
        cluster setting: an unknown key, a bad master URL, a ZooKeeper that does not answer)
        names the topology, if any, and this environment, so the user knows what to fix where
        (`naming_where`)."""
        where = f"environment {self.name!r} of {CONFIG_FILE} (cluster {self.cluster!r})"
        return naming_where(where, topology)


def load_environment(
    project: SparseProject, env: str | None, config_path: str | None = None
) -> Environment:
    """The environment ``env`` of the project (default: the only one) and its cluster.

    Raises:
        ConfigurationError: no such environment, a malformed one (`SparseProject.environment`),
            or a ``cluster`` with no config (the message names the environment and lists the
            known clusters).
    """
    name, config = project.environment(env)
    cluster = cluster_of(config)
    try:
        load_cluster_config(cluster, config_path)
    except ConfigurationError as exc:
        raise ConfigurationError(
            f'{project.config_file}: environment {name!r}, "{CLUSTER_KEY}": {exc}'
        ) from None
    return Environment(name, config, cluster, cluster_properties(config))


def load_project(config: str) -> SparseProject:
    """The project of ``config`` (its ``config.json``), with a note about what is ignored."""
    project = SparseProject.load(config)
    if "virtualenv_specs" in project.config:
        progress(
            "note: config.json's virtualenv_specs is ignored: components run in this Python "
            "environment"
        )
    return project


def config_option(func: F) -> F:
    """``--config FILE``."""
    return click.option(
        "--config",
        "config",
        default=CONFIG_FILE,
        show_default=True,
        type=click.Path(dir_okay=False),
        help="The project's config.json; the project is its directory.",
    )(func)


def environment_option(func: F) -> F:
    """``-e/--environment ENV``."""
    return click.option(
        "-e",
        "--environment",
        "env",
        default=None,
        help="The environment of config.json (default: the only one). Its 'cluster' key names "
        "the heron cluster (default: local); the 'heron.*' keys of its 'options' are the "
        "cluster's settings (heron.statemgr.connection.string, heron.scheduler.spark.master, "
        "...).",
    )(func)


def name_option(func: F) -> F:
    """``-n/--name NAME``."""
    return click.option(
        "-n",
        "--name",
        default=None,
        help="The topology: a file of the topology directory, without .py (default: the only one).",
    )(func)


def topology_options(func: F) -> F:
    """``-o/--option KEY=VALUE`` (repeatable), ``-d/--debug``, ``--multilang``."""
    func = click.option(
        "--multilang",
        is_flag=True,
        help="Run every Python component as a multilang subprocess (streamparse_run) instead "
        "of in-process; per component, set its config 'streamparse.multilang' to true.",
    )(func)
    func = click.option("-d", "--debug", is_flag=True, help="Set topology.debug=true.")(func)
    return click.option(
        "-o",
        "--option",
        "options",
        multiple=True,
        metavar="KEY=VALUE",
        help="A topology option, overriding config.json and the Topology's config. Repeatable.",
    )(func)


def heron_options(func: F) -> F:
    """``--heron-home DIR`` and ``--config-path DIR``."""
    func = click.option(
        "--config-path",
        type=click.Path(exists=True, file_okay=False),
        default=None,
        help="Directory of <cluster>.yaml cluster configs (default: the built-in ones).",
    )(func)
    return click.option(
        "--heron-home",
        type=click.Path(file_okay=False),
        default=None,
        help="Heron home: topologies' working directories and localfs state (default: "
        "$HERON_HOME, else the cluster config's).",
    )(func)
