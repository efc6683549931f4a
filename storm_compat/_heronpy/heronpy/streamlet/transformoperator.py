"""``TransformOperator``: a user operator for ``Streamlet.transform`` (heronpy's module path)."""

from __future__ import annotations

import abc

from heron_core.api import Tuple
from heronpy.streamlet.context import Context

__all__ = ["TransformOperator"]


class TransformOperator(abc.ABC):
    """An operator that may emit any number of elements per input: subclass it, implement
    ``setup`` and ``transform``, and pass an instance to ``Streamlet.transform``. Each task
    of the stage gets its own (unpickled) copy.

    >>> class Twice(TransformOperator):
    ...     def setup(self, context):
    ...         self.context = context
    ...     def transform(self, tup):
    ...         self.context.emit(tup.values[0])
    ...         self.context.emit(tup.values[0])
    """

    @abc.abstractmethod
    def setup(self, context: Context) -> None:
        """Called once in each task before any ``transform``; keep ``context`` to emit."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement setup()")

    @abc.abstractmethod
    def transform(self, tup: Tuple) -> None:
        """Handle one input: ``tup`` is the received tuple (the element is
        ``tup.values[0]``; ``tup.component`` and ``tup.task`` say where it came from). Emit
        with ``context.emit(value)``, any number of times."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement transform()")
