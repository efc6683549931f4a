"""The client's view of config: layering with HERON_HOME, and where a topology's files live."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from heron_core.ckptmgr import check_store
from heron_core.config import build_config, load_cluster_config, parse_override, resolve_path
from heron_core.errors import SchedulerError
from heron_core.metricsmgr.sinks import check_sinks
from heron_core.proto import topology_pb2
from heron_core.statemgr import Kind, StateKey, StateManager, create_state_manager

__all__ = [
    "HERON_HOME_ENV",
    "Progress",
    "client_config",
    "cluster_state",
    "hold_key",
    "quiet",
    "stored_topology",
    "topology_dir",
    "working_dir",
]

HERON_HOME_ENV = "HERON_HOME"
"""Environment variable overriding ``heron.directory.home`` (and the localfs state root)."""

Progress = Callable[[str], None]
"""Receives one human-readable progress message at a time."""


def quiet(message: str) -> None:
    """A `Progress` that drops every message."""


def client_config(
    cluster: str,
    *,
    config_path: str | os.PathLike[str] | None = None,
    heron_home: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
    topology_config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Resolve the config: registry defaults < cluster YAML < topology config < command line.

    The command-line layer holds the heron home (``heron_home``, else ``$HERON_HOME``, if
    either is set) and then the ``key=value`` ``overrides``, which win. A heron home sets
    ``heron.directory.home`` and, when the state manager is ``localfs``, puts the state root
    at ``<home>/repository/state``.

    Raises:
        ConfigurationError: an unknown cluster, a bad override, or an invalid value, naming
            the key and the layer it came from; a bad ``heron.metrics.sinks`` (see
            `check_sinks`); for EFFECTIVELY_ONCE, a store that does not load or that not
            every host reaches (see `check_store`).

    >>> cfg = client_config("local", heron_home="/tmp/h", overrides=["topology.stmgrs=3"])
    >>> cfg["heron.directory.home"], cfg["heron.statemgr.root.path"], cfg["topology.stmgrs"]
    ('/tmp/h', '/tmp/h/repository/state', 3)
    """
    cluster_config = load_cluster_config(cluster, config_path)
    parsed = dict(parse_override(text) for text in overrides)
    home = heron_home if heron_home is not None else os.environ.get(HERON_HOME_ENV) or None
    command_line: dict[str, Any] = {}
    if home is not None:
        home_path = resolve_path(home).absolute()
        command_line["heron.directory.home"] = str(home_path)
        probe = build_config(cluster_config, topology_config, parsed)
        if probe["heron.class.state.manager"] == "localfs":
            command_line["heron.statemgr.root.path"] = str(home_path / "repository" / "state")
    command_line.update(parsed)
    config = build_config(cluster_config, topology_config, command_line)
    check_sinks(config)
    check_store(config)
    return config


def working_dir(config: Mapping[str, Any], cluster: str, name: str) -> Path:
    """The topology's working directory: ``<heron.directory.home>/topologies/<cluster>/<name>``.

    >>> working_dir({"heron.directory.home": "/h"}, "local", "wc")
    PosixPath('/h/topologies/local/wc')
    """
    return resolve_path(config["heron.directory.home"]).absolute() / "topologies" / cluster / name


def stored_topology(state: StateManager, cluster: str, name: str) -> topology_pb2.Topology:
    """Topology ``name`` as stored in ``cluster``'s state manager ``state`` (a verb's first
    step).

    Raises:
        SchedulerError: there is no such topology; the message lists the ones there.
    """
    topology = state.get_topology(name)
    if topology is None:
        known = ", ".join(state.list_topologies()) or "none"
        raise SchedulerError(
            f"no topology {name!r} on cluster {cluster!r}; topologies there: {known}"
        )
    return topology


def hold_key(state: StateManager, config: Mapping[str, Any], cluster: str, name: str) -> StateKey:
    """Give ``state`` the `StateKey` of topology ``name`` (unless it holds it already), made
    from the key pair in the topology's working directory on this host (`working_dir`: the
    heron home's, never one a state node names): from then on ``state`` writes its nodes
    sealed and reads them only when their MAC checks.

    Raises:
        ConfigurationError: there is no readable key pair there (the topology was submitted
            from another machine or heron home), naming the topology and the directory.
    """
    key = state.key_of(name)
    if key is None:
        key = StateKey.load(name, working_dir(config, cluster, name))
        state.add_key(key)
    return key


@contextlib.contextmanager
def cluster_state(
    cluster: str,
    config_path: str | os.PathLike[str] | None = None,
    *,
    heron_home: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
    topology: str | None = None,
) -> Iterator[tuple[dict[str, Any], StateManager]]:
    """A verb's opening: ``cluster``'s resolved config (`client_config`) and its started
    state manager, closed when the block ends.

    With ``topology``, a verb that reads what only the topology's key may vouch for: when
    the topology is stored, the manager holds its key (`hold_key`), so its nodes are read
    only when their MAC checks (a node that fails raises `StateAuthenticationError`).
    Without it, the manager holds no key: its reads are unchecked, for describing or
    deleting topologies, never for unpickling anything of them.

    Raises:
        ConfigurationError, StateManagerError: the cluster's config or state is unusable,
            or ``topology`` is stored but its key pair is not on this host.
    """
    config = client_config(
        cluster, config_path=config_path, heron_home=heron_home, overrides=overrides
    )
    with create_state_manager(config, cluster) as state:
        if topology is not None and state.read_unverified(Kind.TOPOLOGY, topology) is not None:
            hold_key(state, config, cluster, topology)
        yield config, state


def topology_dir(state: StateManager, config: Mapping[str, Any], cluster: str, name: str) -> Path:
    """W of topology ``name``: the working directory its execution state names (the one made
    at submit; checked when ``state`` holds the topology's key), else where ``config`` puts
    it (`working_dir`)."""
    execution = state.get_execution_state(name)
    if execution is not None and execution.working_directory:
        return Path(execution.working_directory)
    return working_dir(config, cluster, name)
