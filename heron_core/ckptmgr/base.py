"""The interface of a state store: where checkpointed instance state lives.

A store keeps opaque bytes per (checkpoint id, task): the checkpoint manager seals them
before they reach the store and checks the seal of what it loads, so a store needs no
authentication of its own. Checkpoint ids sort in the order they were made. Every built-in
passes ``heron_core.testing.store_conformance``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["StateStore"]


class StateStore(ABC):
    """Stores the checkpointed state of one topology's tasks.

    Args:
        config: the topology's resolved config (its ``heron.statefulstorage.*`` keys).
        topology_name: the topology whose state this store holds.

    Methods may be called from a thread other than the one that built the store, one call at
    a time.
    """

    def __init__(self, config: Mapping[str, Any], topology_name: str) -> None:
        self.config = config
        self.topology_name = topology_name

    @abstractmethod
    def save(self, checkpoint_id: str, task_id: int, data: bytes) -> None:
        """Store ``data`` as task ``task_id``'s state of ``checkpoint_id``, atomically: a
        reader sees the whole of it or nothing.

        Raises:
            OSError: it could not be stored (the checkpoint then does not complete).
        """

    @abstractmethod
    def load(self, checkpoint_id: str, task_id: int) -> bytes | None:
        """Task ``task_id``'s state of ``checkpoint_id``, or None if it was never stored."""

    @abstractmethod
    def dispose(self, task_ids: Iterable[int], oldest_kept: str) -> None:
        """Delete the checkpoints of ``task_ids`` older than ``oldest_kept`` (every one of
        them when ``oldest_kept`` is empty)."""

    def location(self, checkpoint_id: str, task_id: int) -> str:
        """Where task ``task_id``'s state of ``checkpoint_id`` is kept, for messages (a file
        path, a URL); the default names the store and the topology."""
        return f"{type(self).__name__} of topology {self.topology_name!r}"

    def close(self) -> None:  # noqa: B027 (optional)
        """Release what the store holds (connections); the default holds nothing."""
