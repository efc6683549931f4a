"""Options shared by the ``heron sparse`` verbs, and what they resolve to."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from storm_compat.streamparse._project import CONFIG_FILE, SparseProject

__all__ = [
    "CLUSTER_KEY",
    "cluster_of",
    "config_option",
    "environment_option",
    "heron_options",
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
        "the heron cluster (default: local).",
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
