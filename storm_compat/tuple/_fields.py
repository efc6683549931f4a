"""``Fields`` and ``Values`` (Storm's ``org.apache.storm.tuple``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

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


class ValuesBase(list[Any]):
    """The base of a user's subclass of ``Values`` (``class Pair(Values)`` derives from this):
    builds instances of that subclass from the values as arguments (``Pair("a", 1)``)."""

    __slots__ = ()

    def __init__(self, *values: Any) -> None:
        list.__init__(self, values)


if TYPE_CHECKING:

    class Values(list[Any]):
        """What type checkers see of ``Values`` (at run time it is `storm_compat.tuple.
        _values.Values`, which builds a plain ``list`` and is the class of every list)."""

        def __init__(self, *values: Any) -> None: ...

else:
    from storm_compat.tuple._values import Values
