"""Options and helpers shared by the verbs of the ``heron`` command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ["config_path_option", "config_property_option", "heron_home_option", "progress"]

F = TypeVar("F", bound=Callable[..., Any])


def heron_home_option(func: F) -> F:
    """``--heron-home DIR``."""
    return click.option(
        "--heron-home",
        type=click.Path(file_okay=False),
        default=None,
        help="Directory holding the topologies' working directories and, for localfs state, "
        "the state (<home>/repository/state). Default: $HERON_HOME, else the cluster "
        "config's heron.directory.home (~/.herondata).",
    )(func)


def config_path_option(func: F) -> F:
    """``--config-path DIR``."""
    return click.option(
        "--config-path",
        type=click.Path(exists=True, file_okay=False),
        default=None,
        help="Directory of <cluster>.yaml cluster configs. Default: $HERON_CONFIG_PATH, else "
        "the built-in clusters (local, localzk, spark).",
    )(func)


def config_property_option(func: F) -> F:
    """``--config-property KEY=VALUE`` (repeatable), passed as ``overrides``."""
    return click.option(
        "--config-property",
        "overrides",
        multiple=True,
        metavar="KEY=VALUE",
        help="Set a config key, overriding the registry defaults, the cluster config and the "
        "topology's own config. Repeatable.",
    )(func)


def progress(message: str) -> None:
    """Print a progress message to stderr."""
    click.echo(message, err=True)
