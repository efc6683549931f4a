"""Storm's ``Values`` at run time: one object that builds the plain ``list`` of an emit.

A Storm bolt calls ``Values(...)`` once per emit, so what that call costs is paid per tuple.
Were ``Values`` a class, every call would go through its metaclass's ``__call__`` (about 130 ns
on the bench host); ``Values`` is instead the one instance of `_ValuesType`, compiled with the
hot path (heron_core/_compiled.py), whose call is a C function (about 75 ns; a list literal
about 35). It still acts as the class of every list (``isinstance``, ``issubclass``), and a
user's ``class Pair(Values)`` gets ``storm_compat.tuple._fields.ValuesBase`` as its base
instead, a ``list`` subclass whose constructor takes the values as arguments, as Storm's does.

Type checkers see ``Values`` as a class (storm_compat/tuple/_fields.py declares it so for them).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Values"]


class _ValuesType:
    """The values of one tuple, in field order: ``Values("storm", 3)``.

    Storm's ``Values`` is an ``ArrayList``; here ``Values(...)`` returns a plain ``list`` (it is
    built once per emit, and a list is what the kernel takes as is), and every list is an
    instance of ``Values``. A subclass of ``Values`` builds instances of itself.

    >>> Values("storm", 3)
    ['storm', 3]
    >>> type(Values("storm")) is list, isinstance(["storm"], Values), issubclass(tuple, Values)
    (True, True, False)
    """

    def __call__(self, *values: Any) -> list[Any]:
        return list(values)

    def __instancecheck__(self, instance: object) -> bool:
        return isinstance(instance, list)

    def __subclasscheck__(self, subclass: type) -> bool:
        return issubclass(subclass, list)

    def __mro_entries__(self, bases: tuple[object, ...]) -> tuple[type, ...]:
        from storm_compat.tuple._fields import ValuesBase  # (it imports this module)

        return (ValuesBase,)

    def __reduce__(self) -> str:
        return "Values"  # pickled by reference, as a class is

    def __repr__(self) -> str:
        return "<class 'storm_compat.tuple.Values'>"


Values = _ValuesType()
