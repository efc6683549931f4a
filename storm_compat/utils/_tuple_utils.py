"""``TupleUtils``."""

from __future__ import annotations

from storm_compat.tuple import Tuple

__all__ = ["TupleUtils"]


class TupleUtils:
    """Static helpers about tuples."""

    @staticmethod
    def isTick(tuple: Tuple) -> bool:
        """Whether ``tuple`` is a tick tuple (source ``__system``, stream ``__tick``)."""
        return tuple.isTick()
