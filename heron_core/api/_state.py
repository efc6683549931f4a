"""Stateful components (``topology.reliability.mode`` ``EFFECTIVELY_ONCE``): the `State` a
component keeps its state in, and the `StatefulComponent` mixin whose hooks the instance calls.

The instance's contract, as Heron's Python instance has it:

* at start and after every rollback: ``init_state(state)`` with the state of the newest
  consistent checkpoint (an empty `HashMapState` when there is none), then ``initialize``
  (``open``/``prepare``); after a rollback of a component that was running, ``close`` first.
  Facades that must keep a component's object model (Storm's ``prepare`` once, state rolled back
  in place) override `StatefulComponent.restart_from_state`;
* before each checkpoint: ``pre_save(checkpoint_id)``, then the state given to ``init_state``
  is pickled and stored.

>>> state = HashMapState()
>>> state.put("heron", 3)
>>> state.get("heron"), state.get("storm"), len(state)
(3, None, 1)
>>> list(state.enumerate())
[(0, 'heron')]
>>> state["heron"] = 4; "heron" in state, state["heron"], dict(state.items())
(True, 4, {'heron': 4})
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import Any

__all__ = ["HashMapState", "State", "StatefulComponent"]


class State(abc.ABC):
    """A key/value store a stateful component keeps its state in (heronpy's interface)."""

    @abc.abstractmethod
    def put(self, key: Any, value: Any) -> None:
        """Store ``value`` under ``key``."""

    @abc.abstractmethod
    def get(self, key: Any, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default``."""

    @abc.abstractmethod
    def enumerate(self) -> Any:
        """``enumerate`` over the keys (heronpy's contract: ``(index, key)`` pairs)."""

    @abc.abstractmethod
    def clear(self) -> None:
        """Remove every key."""


class HashMapState(State):
    """A `State` in a dict; also a mapping (``[]``, ``in``, ``len``, ``items``, ``keys``,
    ``values``, ``pop``), as heronpy's window bolts and the examples use their state."""

    def __init__(self, items: dict[Any, Any] | None = None) -> None:
        self._dict: dict[Any, Any] = dict(items or {})

    def put(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def get(self, key: Any, default: Any = None) -> Any:
        return self._dict.get(key, default)

    def enumerate(self) -> enumerate[Any]:
        return enumerate(self._dict)

    def clear(self) -> None:
        self._dict.clear()

    def pop(self, key: Any, default: Any = None) -> Any:
        return self._dict.pop(key, default)

    def items(self) -> Any:
        return self._dict.items()

    def keys(self) -> Any:
        return self._dict.keys()

    def values(self) -> Any:
        return self._dict.values()

    def __getitem__(self, key: Any) -> Any:
        return self._dict[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._dict[key]

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def __iter__(self) -> Iterator[Any]:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HashMapState) and other._dict == self._dict

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HashMapState({self._dict!r})"

    def __str__(self) -> str:
        return str(self._dict)


class StatefulComponent(abc.ABC):  # noqa: B024 (a mixin; its methods are hooks)
    """A spout or bolt whose state is checkpointed in ``EFFECTIVELY_ONCE`` mode (mix it in).

    In the other modes the hooks are never called, as in Heron.
    """

    def init_state(self, state: State) -> None:  # noqa: B027 (an optional hook)
        """Called with the state of the newest consistent checkpoint (empty at first),
        before ``initialize``; keep ``state`` and write the component's state into it."""

    def pre_save(self, checkpoint_id: str) -> None:  # noqa: B027 (an optional hook)
        """Called just before checkpoint ``checkpoint_id`` saves the state given to
        ``init_state``."""

    def restart_from_state(self, state: State, config: Any, context: Any) -> None:
        """After a rollback, with the component already running: by default ``close``, then
        ``init_state(state)`` and ``initialize(config, context)`` again (Heron's Python
        instance does the same)."""
        close = getattr(self, "close", None)
        if close is not None:
            close()
        self.init_state(state)
        initialize = getattr(self, "initialize", None)
        if initialize is not None:
            initialize(config, context)
