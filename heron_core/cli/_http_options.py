"""Options shared by the verbs that serve HTTP (``heron tracker``, ``heron ui``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ["allowed_host_option"]

F = TypeVar("F", bound=Callable[..., Any])


def allowed_host_option(func: F) -> F:
    """``--allowed-host NAME[:PORT]`` (repeatable), passed as ``allowed_hosts``."""
    return click.option(
        "--allowed-host",
        "allowed_hosts",
        multiple=True,
        metavar="NAME[:PORT]",
        help="One more name the server answers to in the Host header, e.g. the name a proxy "
        "or the users reach it by (NAME: any port; NAME:PORT: that port). Repeatable. "
        "Without it only the --address (with the port), and on a loopback or wildcard "
        "address localhost, 127.0.0.1 and [::1], are answered: a page of another site "
        "cannot read or act through DNS rebinding.",
    )(func)
