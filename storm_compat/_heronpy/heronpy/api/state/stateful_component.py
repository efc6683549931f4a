"""heronpy's ``state.stateful_component``: the ``StatefulComponent`` mixin.

Heron calls ``init_state(state)`` before ``initialize`` and ``pre_save(checkpoint_id)``
before each checkpoint, only when ``topology.reliability.mode`` is ``EFFECTIVELY_ONCE``.
This engine refuses that mode until checkpointing is built (the config registry rejects it
when the topology is submitted, naming the key), so a stateful topology does not start here
rather than run without its state; in the other modes the hooks are not called, as in Heron.
"""

from __future__ import annotations

import abc
from typing import Any

from heronpy.api.state.state import State

__all__ = ["StatefulComponent"]


class StatefulComponent(abc.ABC):  # noqa: B024 (heronpy's mixin; its methods are hooks)
    """A spout or bolt that keeps its state in a `State` (mix it in)."""

    def init_state(self, state: State) -> None:  # noqa: B027 (an optional hook)
        """Called with the state of the last checkpoint (empty at first), before
        ``initialize``; the component keeps ``state`` and writes its state into it."""

    def pre_save(self, checkpoint_id: Any) -> None:  # noqa: B027 (an optional hook)
        """Called just before ``checkpoint_id`` saves the state given to ``init_state``."""
