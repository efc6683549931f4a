"""heronpy's ``state.state``: ``State`` and its dict-backed ``HashMapState``.

The state of a `StatefulComponent` is checkpointed only in ``EFFECTIVELY_ONCE`` mode, which
this engine refuses until it is built (see ``stateful_component``); the classes are usable on
their own.

>>> state = HashMapState()
>>> state.put("heron", 3)
>>> state.get("heron"), state.get("storm")
(3, None)
>>> list(state.enumerate())
[(0, 'heron')]
>>> state["heron"] = 4; "heron" in state, state["heron"]
(True, 4)
"""

from __future__ import annotations

import abc
from typing import Any

__all__ = ["HashMapState", "State"]


class State(abc.ABC):
    """A key/value store a stateful component keeps its state in."""

    @abc.abstractmethod
    def put(self, key: Any, value: Any) -> None:
        """Store ``value`` under ``key``."""

    @abc.abstractmethod
    def get(self, key: Any) -> Any:
        """The value stored under ``key``, or None."""

    @abc.abstractmethod
    def enumerate(self) -> Any:
        """``enumerate`` over the keys (heronpy's contract: ``(index, key)`` pairs)."""

    @abc.abstractmethod
    def clear(self) -> None:
        """Remove every key."""


class HashMapState(State):
    """A `State` in a dict. Also a mapping for ``[]`` and ``in``, as heronpy's window bolts
    use their state (``state['tuples']``)."""

    def __init__(self) -> None:
        self._dict: dict[Any, Any] = {}

    def put(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def get(self, key: Any) -> Any:
        return self._dict.get(key)

    def enumerate(self) -> enumerate[Any]:
        return enumerate(self._dict)

    def clear(self) -> None:
        self._dict.clear()

    def __getitem__(self, key: Any) -> Any:
        return self._dict[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def __str__(self) -> str:
        return str(self._dict)
