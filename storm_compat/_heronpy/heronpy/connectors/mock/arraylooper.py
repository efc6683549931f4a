"""``ArrayLooper``: a Generator that cycles through a list forever (heronpy's module path)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from typing import Any

from heronpy.streamlet.context import Context
from heronpy.streamlet.generator import Generator

__all__ = ["ArrayLooper"]


class ArrayLooper(Generator):
    """Emits the items of ``user_iterable`` in order, over and over.

    Args:
        user_iterable: the items (each task of the source stage cycles through all of them).
        sleep: seconds to sleep before each item (None: no pause).

    >>> looper = ArrayLooper(["a", "b"])
    >>> looper.setup(None)
    >>> [looper.get() for _ in range(3)]
    ['a', 'b', 'a']
    """

    def __init__(self, user_iterable: Iterable[Any], sleep: float | None = None) -> None:
        super().__init__()
        if not isinstance(user_iterable, Iterable):
            raise TypeError(
                f"ArrayLooper takes an iterable of items, got {type(user_iterable).__name__}"
            )
        self._user_iterable = user_iterable
        self._sleep = sleep

    def setup(self, context: Context | None) -> None:
        self._curiter: Iterator[Any] = itertools.cycle(self._user_iterable)

    def get(self) -> Any:
        if self._sleep is not None:
            time.sleep(self._sleep)
        return next(self._curiter)
