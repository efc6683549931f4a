"""Storm's ``State``, ``KeyValueState`` and ``InMemoryKeyValueState``.

Storm's two-phase protocol on the in-memory state: ``prepareCommit(txid)`` snapshots the
current key/values as prepared, ``commit(txid)`` makes that snapshot the committed one, and
``rollback()`` drops the prepared snapshot and puts the committed key/values back (none
committed: empty). Only one transaction may be prepared at a time.

>>> state = InMemoryKeyValueState()
>>> state.put("storm", 1)
>>> state.prepareCommit(7); state.commit(7)
>>> state.put("storm", 2); state.put("heron", 3)
>>> state.rollback()
>>> dict(state), state.get("heron", 0)
({'storm': 1}, 0)
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from typing import Generic, NamedTuple, TypeVar

__all__ = ["Entry", "InMemoryKeyValueState", "KeyValueState", "State"]

K = TypeVar("K")
V = TypeVar("V")

DEFAULT_TXID = -1
"""The txid of a ``commit()`` without one (a state the component commits itself)."""


class State(abc.ABC):
    """The state of a component, saved and restored by the framework (Storm's interface)."""

    @abc.abstractmethod
    def prepareCommit(self, txid: int) -> None:
        """Prepare transaction ``txid``: it can be committed later. The same txid may be
        prepared again; a newer one only once the pending one is committed."""

    @abc.abstractmethod
    def commit(self, txid: int | None = None) -> None:
        """Commit the prepared transaction ``txid``; without a txid, persist the current
        state as it is (a component that manages its state itself)."""

    @abc.abstractmethod
    def rollback(self) -> None:
        """Drop the prepared transaction and return to the last committed state."""


class Entry(NamedTuple, Generic[K, V]):
    """One key/value of a `KeyValueState`, as iteration yields it: a ``(key, value)`` pair
    with Java's ``Map.Entry`` getters.

    >>> key, value = entry = Entry("storm", 1)
    >>> (key, value) == (entry.getKey(), entry.getValue())
    True
    """

    key: K
    value: V

    def getKey(self) -> K:
        """The key."""
        return self.key

    def getValue(self) -> V:
        """The value."""
        return self.value


class KeyValueState(State, Generic[K, V]):
    """A `State` of key/value mappings; iterating it yields `Entry` pairs."""

    @abc.abstractmethod
    def put(self, key: K, value: V) -> None:
        """Map ``key`` to ``value``."""

    @abc.abstractmethod
    def get(self, key: K, defaultValue: V | None = None) -> V | None:
        """The value of ``key``, or ``defaultValue`` when it has none (or None)."""

    @abc.abstractmethod
    def delete(self, key: K) -> V | None:
        """Remove ``key``; return the value it had (None if it had none)."""

    @abc.abstractmethod
    def iterator(self) -> Iterator[Entry[K, V]]:
        """An iterator over the key/values (``for key, value in state`` does the same)."""

    def __iter__(self) -> Iterator[Entry[K, V]]:
        return self.iterator()


class InMemoryKeyValueState(KeyValueState[K, V]):
    """Storm's default state: a dict, with the committed and prepared snapshots in memory.

    A stateful bolt's instance gets one in ``initState``; the runtime checkpoints its committed
    key/values and, after a failure anywhere in the topology, puts the checkpointed ones back
    into this same object (``rollback``). Keys and values must pickle.

    Iteration runs over a snapshot, so the state may change while it is iterated (as Java's
    concurrent map allows). A value of None reads as missing (``get`` gives the default).
    """

    def __init__(self) -> None:
        self._state: dict[K, V] = {}
        self._committed: tuple[int, dict[K, V]] | None = None
        self._prepared: tuple[int, dict[K, V]] | None = None

    def put(self, key: K, value: V) -> None:
        self._state[key] = value

    def get(self, key: K, defaultValue: V | None = None) -> V | None:
        value = self._state.get(key)
        return defaultValue if value is None else value

    def delete(self, key: K) -> V | None:
        return self._state.pop(key, None)

    def iterator(self) -> Iterator[Entry[K, V]]:
        return iter([Entry(key, value) for key, value in self._state.items()])

    def prepareCommit(self, txid: int) -> None:
        """Snapshot the current key/values as transaction ``txid``.

        Raises:
            RuntimeError: a transaction older than ``txid`` is prepared and not committed.
        """
        if self._prepared is not None and txid > self._prepared[0]:
            raise RuntimeError(
                f"InMemoryKeyValueState: cannot prepare txid {txid} while txid "
                f"{self._prepared[0]} is prepared and not committed"
            )
        self._prepared = (txid, dict(self._state))

    def commit(self, txid: int | None = None) -> None:
        """Commit the prepared transaction ``txid`` (without one: the current key/values).

        Raises:
            RuntimeError: ``txid`` is not the prepared transaction.
        """
        if txid is None:
            self._committed = (DEFAULT_TXID, dict(self._state))
            return
        if self._prepared is None or self._prepared[0] != txid:
            prepared = None if self._prepared is None else self._prepared[0]
            raise RuntimeError(
                f"InMemoryKeyValueState: cannot commit txid {txid}: the prepared txid is {prepared}"
            )
        self._committed, self._prepared = self._prepared, None

    def rollback(self) -> None:
        self._prepared = None
        self._state = {} if self._committed is None else dict(self._committed[1])

    def _committed_items(self) -> dict[K, V]:
        """A copy of the committed key/values (empty when nothing is committed): what the
        runtime's checkpoint stores."""
        return {} if self._committed is None else dict(self._committed[1])

    def _restore(self, items: Iterable[tuple[K, V]], txid: int = DEFAULT_TXID) -> None:
        """Make ``items`` the committed and the current key/values, in this same object
        (what a checkpoint restores); a prepared transaction is dropped."""
        self._committed = (txid, dict(items))
        self._prepared = None
        self._state = dict(self._committed[1])

    def __repr__(self) -> str:
        return f"InMemoryKeyValueState({self._state!r})"
