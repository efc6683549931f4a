"""The command-line flags every daemon of a topology takes, declared once.

The runtime contract (docs/runtime.md) gives every daemon the topology's name, id and cluster
and its working directory; most also get their container and the state manager's keys. The
parsers of the daemons declare those flags with :func:`add_topology_flags` (and the shared
``--host``, ``--local-endpoint`` and ``--shell-port`` with their helpers), and whoever starts a
daemon writes them with :meth:`DaemonFlags.argv`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heron_core.errors import ConfigurationError

__all__ = [
    "DaemonFlags",
    "add_host_flag",
    "add_local_endpoint_flag",
    "add_shell_port_flag",
    "add_topology_flags",
    "parse_state_config",
    "state_config_of",
]


@dataclass(frozen=True)
class DaemonFlags:
    """What every daemon of a topology is told on its command line.

    >>> DaemonFlags("wc", "wc-1", "local", Path("/w"), container=2).argv()[-4:]
    ['--working-dir', '/w', '--container', '2']
    """

    topology_name: str
    topology_id: str
    cluster: str
    working_dir: Path | str
    container: int | None = None
    state_config: str | None = None
    """The state-manager keys of the config, as a JSON object. Any process's command line is
    visible to every local user, so it never holds a secret: ZooKeeper's password stays in the
    file ``heron.statemgr.zookeeper.auth.file`` names, which each daemon reads itself."""

    def argv(self) -> list[str]:
        """The flags, in the order the daemons' usage shows them."""
        argv = [
            "--topology-name",
            self.topology_name,
            "--topology-id",
            self.topology_id,
            "--cluster",
            self.cluster,
            "--working-dir",
            str(self.working_dir),
        ]
        if self.container is not None:
            argv += ["--container", str(self.container)]
        if self.state_config is not None:
            argv += ["--state-config", self.state_config]
        return argv


def add_topology_flags(
    parser: argparse.ArgumentParser,
    *,
    container: str | None = "this container's id",
    state: bool = True,
) -> None:
    """Declare the topology flags on ``parser``: ``--container`` with the help ``container``
    (None: the daemon takes no container) and ``--state-config`` when ``state``."""
    parser.add_argument("--topology-name", required=True, help="the topology's name")
    parser.add_argument("--topology-id", required=True, help="the topology's id")
    parser.add_argument("--cluster", required=True, help="the cluster the topology runs on")
    parser.add_argument(
        "--working-dir", required=True, type=Path, help="the topology's working directory W"
    )
    if container is not None:
        parser.add_argument("--container", required=True, type=int, help=container)
    if state:
        parser.add_argument(
            "--state-config",
            required=True,
            help="the state-manager keys of the config (JSON object)",
        )


def parse_state_config(text: str) -> dict[str, Any]:
    """Parse a ``--state-config`` value (a JSON object).

    Raises:
        ConfigurationError: the text is not a JSON object.

    >>> parse_state_config('{"heron.class.state.manager": "localfs"}')
    {'heron.class.state.manager': 'localfs'}
    """
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(
            f"--state-config: expected a JSON object, got {text!r}: {exc}"
        ) from None
    if not isinstance(value, dict):
        raise ConfigurationError(f"--state-config: expected a JSON object, got {text!r}")
    return value


def state_config_of(parser: argparse.ArgumentParser, text: str) -> dict[str, Any]:
    """``--state-config`` parsed; a usage error (exit status 2) when it is not a JSON object."""
    try:
        return parse_state_config(text)
    except ConfigurationError as exc:
        parser.error(str(exc))


def add_host_flag(parser: argparse.ArgumentParser, help: str, default: str = "127.0.0.1") -> None:
    """``--host``: the address a daemon binds (and registers, where it does)."""
    parser.add_argument("--host", default=default, help=help)


def add_local_endpoint_flag(parser: argparse.ArgumentParser, help: str) -> None:
    """``--local-endpoint``: the container's ipc endpoint prefix."""
    parser.add_argument("--local-endpoint", required=True, help=help)


def add_shell_port_flag(parser: argparse.ArgumentParser, help: str) -> None:
    """``--shell-port``: the TCP port of the container's shell (its metrics manager)."""
    parser.add_argument("--shell-port", type=int, default=0, help=help)
