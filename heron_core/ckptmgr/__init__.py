"""Checkpoint manager and state stores (effectively-once processing).

Each container's stream manager runs a `CheckpointManager`: a thread that saves the states
its instances send at each checkpoint through the topology's `StateStore` and loads them back
at a rollback, so that no store call ever holds up routing. The store is a plug-in named by
``heron.statefulstorage.classname``: ``localfs`` built in, or a ``package.module:Class``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heron_core.ckptmgr._manager import CheckpointManager, Saved
from heron_core.ckptmgr.base import StateStore
from heron_core.plugins import load_plugin

__all__ = ["BUILTINS", "CheckpointManager", "Saved", "StateStore", "create_state_store"]

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
    spec = config.get("heron.statefulstorage.classname", "localfs")
    store: StateStore = load_plugin(
        "state store", spec, BUILTINS, StateStore, config=config, topology_name=topology_name
    )
    return store
