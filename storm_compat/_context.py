"""Errors of the kernel's client, told in the terms of the front end the user called."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from heron_core.errors import ConfigurationError, StateManagerError

__all__ = ["naming_where"]


@contextlib.contextmanager
def naming_where(where: str, topology: str | None = None) -> Iterator[None]:
    """Within the block, a `ConfigurationError` or `StateManagerError` (a bad or missing
    cluster setting: an unknown key or cluster, a bad master URL, a ZooKeeper that does not
    answer) is raised again, of the same class, chained, with its message prefixed by the
    topology, if any, and ``where`` the setting comes from (the Storm conf, an environment of
    ``config.json``). Other errors pass unchanged.

    >>> with naming_where("the conf of StormSubmitter", "wc"):
    ...     raise ConfigurationError("topology 'wc': heron.scheduler.spark.master: bad")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: topology 'wc', the conf of StormSubmitter: \
heron.scheduler.spark.master: bad
    """
    try:
        yield
    except (ConfigurationError, StateManagerError) as exc:
        if type(exc) not in (ConfigurationError, StateManagerError):
            raise
        text = str(exc)
        if topology is not None:
            text = text.removeprefix(f"topology {topology!r}: ")
            where = f"topology {topology!r}, {where}"
        raise type(exc)(f"{where}: {text}") from exc
