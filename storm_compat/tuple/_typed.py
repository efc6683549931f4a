"""The part of Storm's ``Tuple`` that Storm code calls per input, compiled with the hot path
(see ``heron_core/_compiled.py``): its stream's fields, whether it was settled, and the
getters of ``ITuple``. Compiled, `TypedTuple` is a C class: a getter is a C method (no Python
frame per ``getString(0)``), and the bolt adapter's step (``storm_compat.topology._execute``)
sets the two fields as struct fields. ``storm_compat.tuple.Tuple`` (plain Python) derives
from it and adds the rest of Storm's API.
"""

from __future__ import annotations

from typing import Any

from heron_core._compiled import mypyc_attr
from heron_core.api import Tuple as NativeTuple
from storm_compat.tuple._fields import Fields

__all__ = ["TypedTuple"]


@mypyc_attr(allow_interpreted_subclasses=True)
class TypedTuple(NativeTuple):
    """The kernel's tuple with the fields of its source stream (``_schema``) and whether it
    was acked or failed through an ``OutputCollector`` (``_done``), both set by the bolt
    adapter on each input before the bolt sees it (the runtime builds inputs without
    ``__init__``, setting only the kernel tuple's slots); and ``ITuple``'s getters over them.
    Only ``storm_compat.tuple.Tuple`` derives from it.

    Every typed getter (``getString``, ``getInteger``, ...) returns the value when it has the
    type, None as is (Java's null), and raises TypeError for any other value; typed ``Any``
    because, compiled, a return type of ``str`` would refuse that None.
    """

    __slots__ = ("_done", "_schema")
    _done: bool
    _schema: Fields

    def size(self) -> int:
        """The number of values."""
        return len(self.values)

    def contains(self, field: str) -> bool:
        """Whether the tuple has a field named ``field``."""
        return self._schema.contains(field)

    def getFields(self) -> Fields:
        """The field names of the source stream."""
        return self._schema

    def fieldIndex(self, field: str) -> int:
        """The position of ``field`` (ValueError if the stream has no such field)."""
        return self._schema.fieldIndex(field)

    def select(self, selector: Fields) -> list[Any]:
        """The values of the fields of ``selector``, in its order."""
        return self._schema.select(selector, self.values)

    def getValues(self) -> list[Any]:
        """All values, in field order."""
        return list(self.values)

    def getValue(self, i: int) -> Any:
        """The value at position ``i``."""
        return self.values[i]

    def getValueByField(self, field: str) -> Any:
        """The value of ``field``."""
        return self.values[self._schema.fieldIndex(field)]

    def _typed(self, i: int, kind: type, name: str) -> Any:
        value = self.values[i]
        if value is None or (isinstance(value, kind) and isinstance(value, bool) == (kind is bool)):
            return value
        field = self._schema.get(i) if i < self._schema.size() else "?"
        raise TypeError(
            f"field {i} ({field!r}) of a tuple from {self.component!r} stream "
            f"{self.stream!r} holds {value!r} ({type(value).__name__}), expected {name}"
        )

    def getString(self, i: int) -> Any:
        """The str at ``i``.

        Like every typed getter: a value of another type raises TypeError (as Java's cast
        does), and None is returned as is (Java's null).
        """
        value = self.values[i]
        if type(value) is str:
            return value
        return self._typed(i, str, "a str")

    def getInteger(self, i: int) -> Any:
        """The int at ``i``."""
        value = self.values[i]
        if type(value) is int:
            return value
        return self._typed(i, int, "an int")

    def getBoolean(self, i: int) -> Any:
        """The bool at ``i``."""
        return self._typed(i, bool, "a bool")

    def getDouble(self, i: int) -> Any:
        """The float at ``i``."""
        return self._typed(i, float, "a float")

    def getBinary(self, i: int) -> Any:
        """The bytes at ``i``."""
        return self._typed(i, bytes, "bytes")

    def getStringByField(self, field: str) -> Any:
        """The str value of ``field``."""
        index = self._schema._index.get(field)
        if index is not None:
            value = self.values[index]
            if type(value) is str:
                return value
        return self.getString(self._schema.fieldIndex(field))

    def getIntegerByField(self, field: str) -> Any:
        """The int value of ``field``."""
        index = self._schema._index.get(field)
        if index is not None:
            value = self.values[index]
            if type(value) is int:
                return value
        return self.getInteger(self._schema.fieldIndex(field))

    def getBooleanByField(self, field: str) -> Any:
        """The bool value of ``field``."""
        return self.getBoolean(self._schema.fieldIndex(field))

    def getDoubleByField(self, field: str) -> Any:
        """The float value of ``field``."""
        return self.getDouble(self._schema.fieldIndex(field))

    def getBinaryByField(self, field: str) -> Any:
        """The bytes value of ``field``."""
        return self.getBinary(self._schema.fieldIndex(field))
