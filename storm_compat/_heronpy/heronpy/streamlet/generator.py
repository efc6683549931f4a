"""``Generator``: a source of elements for ``Builder.new_source`` (heronpy's module path)."""

from __future__ import annotations

import abc
from typing import Any

from heronpy.streamlet.context import Context

__all__ = ["Generator"]


class Generator(abc.ABC):
    """A source: subclass it, implement ``setup`` and ``get``, and pass an instance to
    ``Builder.new_source``. The instance is pickled into the topology and each task of the
    source stage gets its own copy.

    >>> class Numbers(Generator):
    ...     def setup(self, context):
    ...         self.n = 0
    ...     def get(self):
    ...         self.n += 1
    ...         return self.n
    >>> numbers = Numbers()
    >>> numbers.setup(None)
    >>> numbers.get(), numbers.get()
    (1, 2)
    """

    @abc.abstractmethod
    def setup(self, context: Context) -> None:
        """Called once in each task before any ``get``: open files or connections here."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement setup()")

    @abc.abstractmethod
    def get(self) -> Any:
        """The next element, or None when there is none right now (nothing is emitted).

        Called again and again on the task's thread; it should not block for long.
        """
        raise NotImplementedError(f"{type(self).__qualname__} must implement get()")
