"""``Fields`` and ``Values`` (Storm's ``org.apache.storm.tuple``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = ["Fields", "Values"]


class Fields:
    """An ordered list of unique field names: a stream's schema or a grouping's key.

    ``Fields("word", "count")`` and ``Fields(["word", "count"])`` are the same.

    >>> fields = Fields("word", "count")
    >>> fields.size(), fields.get(1), fields.fieldIndex("count"), fields.contains("x")
    (2, 'count', 1, False)
    >>> fields.select(Fields("count"), ["storm", 3])
    [3]
    >>> Fields("a", "a")
    Traceback (most recent call last):
    ValueError: Fields: duplicate field name 'a' in ['a', 'a']
    """

    __slots__ = ("_fields", "_index")

    def __init__(self, *fields: str | Iterable[str]) -> None:
        given: tuple[Any, ...] = fields
        if len(fields) == 1 and not isinstance(fields[0], str):
            given = tuple(fields[0])
        bad = [f for f in given if not isinstance(f, str)]
        if bad:
            raise TypeError(f"Fields: field names must be str, got {bad!r}")
        self._fields: tuple[str, ...] = given
        self._index: dict[str, int] = {}
        for position, name in enumerate(given):
            if name in self._index:
                raise ValueError(f"Fields: duplicate field name {name!r} in {list(given)}")
            self._index[name] = position

    def size(self) -> int:
        """The number of fields."""
        return len(self._fields)

    def get(self, index: int) -> str:
        """The name of the field at ``index``."""
        return self._fields[index]

    def fieldIndex(self, field: str) -> int:
        """The position of ``field``.

        Raises:
            ValueError: ``field`` is not one of the fields (the message lists them).
        """
        try:
            return self._index[field]
        except KeyError:
            raise ValueError(
                f"field {field!r} does not exist; fields: {list(self._fields)}"
            ) from None

    def contains(self, field: str) -> bool:
        """Whether ``field`` is one of the fields."""
        return field in self._index

    def select(self, selector: Fields, values: Sequence[Any]) -> list[Any]:
        """The items of ``values`` (laid out as these fields) named by ``selector``, in its order.

        Raises:
            ValueError: ``selector`` names a field these fields do not have.
        """
        return [values[self.fieldIndex(name)] for name in selector]

    def toList(self) -> list[str]:
        """The field names as a new list."""
        return list(self._fields)

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fields):
            return NotImplemented
        return self._fields == other._fields

    def __hash__(self) -> int:
        return hash(self._fields)

    def __repr__(self) -> str:
        return f"Fields({', '.join(map(repr, self._fields))})"


class _ValuesType(type):
    """``Values``'s metaclass: ``Values(...)`` builds a plain ``list`` (no per-emit ``__init__``
    and no conversion before the kernel), and every list is an instance of ``Values``."""

    def __call__(cls, *values: Any) -> list[Any]:
        if cls is Values:
            return [*values]
        return super().__call__(*values)  # a user's subclass builds instances of itself

    def __instancecheck__(cls, instance: object) -> bool:
        if cls is Values:
            return isinstance(instance, list)
        return super().__instancecheck__(instance)

    def __subclasscheck__(cls, subclass: type) -> bool:
        if cls is Values:
            return issubclass(subclass, list)
        return super().__subclasscheck__(subclass)


class Values(list[Any], metaclass=_ValuesType):
    """The values of one tuple, in field order: ``Values("storm", 3)``.

    Storm's ``Values`` is an ``ArrayList``; here ``Values(...)`` returns a plain ``list`` (it is
    built once per emit, and a list is what the kernel takes as is), and every list is an
    instance of ``Values``. A subclass of ``Values`` builds instances of itself.

    >>> Values("storm", 3)
    ['storm', 3]
    >>> type(Values("storm")) is list, isinstance(["storm"], Values)
    (True, True)
    """

    __slots__ = ()

    def __init__(self, *values: Any) -> None:
        list.__init__(self, values)  # only a subclass's instances get here
