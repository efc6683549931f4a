"""Checkpoint manager and state stores (effectively-once processing).

Each container's stream manager runs a `CheckpointManager`: a thread that saves the states
its instances send at each checkpoint through the topology's `StateStore` and loads them back
at a rollback, so that no store call ever holds up routing; what it saves is sealed with a key
derived from the topology's secret, and a state whose seal does not check is never restored.
The store is a plug-in named by ``heron.statefulstorage.classname``: ``localfs`` built in, or
a ``package.module:Class``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heron_core.ckptmgr._manager import (
    CHECKPOINT_LABEL,
    CheckpointAuthenticationError,
    CheckpointManager,
    Saved,
    checkpoint_context,
    checkpoint_seal,
)
from heron_core.ckptmgr.base import StateStore
from heron_core.config import setting
from heron_core.errors import ConfigurationError
from heron_core.plugins import load_plugin

__all__ = [
    "BUILTINS",
    "CHECKPOINT_LABEL",
    "CheckpointAuthenticationError",
    "CheckpointManager",
    "Saved",
    "StateStore",
    "check_store",
    "checkpoint_context",
    "checkpoint_seal",
    "create_state_store",
]

BUILTINS = {"localfs": "heron_core.ckptmgr.localfs:LocalFileSystemStore"}
"""The built-in stores by short name."""


def create_state_store(config: Mapping[str, Any], topology_name: str) -> StateStore:
    """The store named by ``config["heron.statefulstorage.classname"]`` for ``topology_name``.

    Raises:
        ConfigurationError: an unknown short name (the message lists the known ones), a path
            that does not import, or a class that is not a `StateStore`.

    >>> create_state_store({"heron.statefulstorage.classname": "s3"}, "wc")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: unknown state store 's3'; known: localfs, or a \
'package.module:Class' path
    """
    spec = setting(config, "heron.statefulstorage.classname")
    store: StateStore = load_plugin(
        "state store", spec, BUILTINS, StateStore, config=config, topology_name=topology_name
    )
    return store


def check_store(config: Mapping[str, Any]) -> None:
    """At submit, for an ``EFFECTIVELY_ONCE`` topology: the store must load, and past one
    machine (a scheduler other than ``local``) the ``localfs`` store needs a directory named in
    ``heron.statefulstorage.localfs.root.path`` (every host must reach the same checkpoints,
    or a container restarted elsewhere would find none).

    Raises:
        ConfigurationError: naming the key.

    >>> check_store({"topology.reliability.mode": "EFFECTIVELY_ONCE",
    ...              "heron.class.scheduler": "spark", "topology.name": "wc"})
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: topology 'wc' runs EFFECTIVELY_ONCE on the 'spark' \
scheduler: set heron.statefulstorage.localfs.root.path to a directory every host mounts (NFS, \
a mounted HDFS), or heron.statefulstorage.classname to a store every host reaches
    """
    if config.get("topology.reliability.mode") != "EFFECTIVELY_ONCE":
        return
    name = str(config.get("topology.name") or "topology")
    create_state_store(config, name)
    scheduler = setting(config, "heron.class.scheduler")
    store = setting(config, "heron.statefulstorage.classname")
    shared = config.get("heron.statefulstorage.localfs.root.path")
    if scheduler != "local" and store == "localfs" and not shared:
        raise ConfigurationError(
            f"topology {name!r} runs EFFECTIVELY_ONCE on the {scheduler!r} scheduler: set "
            "heron.statefulstorage.localfs.root.path to a directory every host mounts (NFS, "
            "a mounted HDFS), or heron.statefulstorage.classname to a store every host "
            "reaches"
        )
