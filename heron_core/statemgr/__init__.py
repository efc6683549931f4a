"""State managers: where topologies, plans and daemon locations are stored.

:class:`StateManager` is the interface; the built-ins are registered under short names in
:data:`BUILTINS` (``localfs``: files on this machine; ``zookeeper``: a ZooKeeper ensemble).
:func:`create_state_manager` builds the one the config names. A manager given a topology's
:class:`StateKey` (made from the topology's key pair in ``W/keys``) seals the nodes it writes
and refuses nodes of that topology whose MAC does not check
(:class:`StateAuthenticationError`); see :class:`StateManager`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from heron_core.config import setting
from heron_core.plugins import load_plugin
from heron_core.statemgr._localfs import LocalFileSystemStateManager
from heron_core.statemgr._seal import Seal, SealBroken, StateKey
from heron_core.statemgr.base import (
    Kind,
    StateAuthenticationError,
    StateManager,
    WatchCallback,
    WatchHandle,
)

if TYPE_CHECKING:
    from heron_core.statemgr._zookeeper import ZooKeeperStateManager

__all__ = [
    "BUILTINS",
    "Kind",
    "LocalFileSystemStateManager",
    "Seal",
    "SealBroken",
    "StateAuthenticationError",
    "StateKey",
    "StateManager",
    "WatchCallback",
    "WatchHandle",
    "ZooKeeperStateManager",
    "create_state_manager",
]

BUILTINS: dict[str, str] = {
    "localfs": "heron_core.statemgr:LocalFileSystemStateManager",
    "zookeeper": "heron_core.statemgr:ZooKeeperStateManager",
}
"""Short name -> ``package.module:Class`` of each built-in state manager."""


def __getattr__(name: str) -> Any:
    """`ZooKeeperStateManager`, imported on first use: a process whose topology keeps its state
    on the local file system never loads kazoo (about 25 ms of each daemon's start-up)."""
    if name == "ZooKeeperStateManager":
        from heron_core.statemgr._zookeeper import ZooKeeperStateManager

        return ZooKeeperStateManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_state_manager(
    config: Mapping[str, Any], cluster: str, *, key: StateKey | None = None
) -> StateManager:
    """The state manager named by ``config["heron.class.state.manager"]`` (default ``localfs``),
    built as ``cls(config, cluster)`` and not yet started.

    Args:
        config: the resolved config. ``heron.class.state.manager`` is a short name from
            :data:`BUILTINS`, a ``package.module:Class`` path to a :class:`StateManager`
            subclass, or a :class:`StateManager` instance (returned unchanged).
        cluster: the cluster's name.
        key: the `StateKey` of the topology whose nodes the manager must authenticate (see
            `StateManager.add_key`); every daemon passes its topology's.

    Raises:
        ConfigurationError: an unknown short name (the message lists the known ones), a path
            that does not import, a class that is not a :class:`StateManager`, or a bad value
            of one of the manager's keys.

    >>> import tempfile
    >>> from heron_core.proto import topology_pb2
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with create_state_manager({"heron.statemgr.root.path": tmp.name}, "local") as sm:
    ...     sm.set_topology("word_count", topology_pb2.Topology(name="word_count"))
    ...     sm.list_topologies()
    ['word_count']
    >>> tmp.cleanup()
    >>> create_state_manager({"heron.class.state.manager": "etcd"}, "local")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: unknown state manager 'etcd'; known: localfs, \
zookeeper, or a 'package.module:Class' path
    """
    spec = setting(config, "heron.class.state.manager")
    manager: StateManager = load_plugin(
        "state manager", spec, BUILTINS, StateManager, config=config, cluster=cluster
    )
    if key is not None:
        manager.add_key(key)
    return manager
