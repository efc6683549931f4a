"""``Utils``: the static helpers of ``org.apache.storm.utils.Utils`` that topologies call."""

from __future__ import annotations

import time
from typing import Any

__all__ = ["Utils"]


class Utils:
    """Static helpers of Storm's ``Utils`` that spouts and bolts use.

    >>> Utils.tuple("a", 1)
    ['a', 1]
    >>> Utils.sleep(0)
    """

    @staticmethod
    def sleep(millis: float) -> None:
        """Sleep ``millis`` milliseconds (storm-starter's spouts call ``Utils.sleep(100)`` in
        ``nextTuple``: the instance keeps sending, acking and timing out meanwhile)."""
        time.sleep(millis / 1000.0)

    @staticmethod
    def tuple(*values: Any) -> list[Any]:
        """The values as a list, to emit (``Utils.tuple(word, count)``)."""
        return list(values)
