"""Storm's ``Tuple``: a received tuple with its fields, over the kernel's native tuple."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM, GlobalStreamId
from heron_core.api import Tuple as NativeTuple
from storm_compat.tuple._fields import Fields

__all__ = ["Tuple"]


class Tuple:
    """A tuple a bolt receives: values with field names, its source and its message id.

    Built by the runtime around the kernel's tuple (the ``native`` argument); use it to ack,
    fail and anchor. In a unit test, build one with :meth:`of`.

    >>> tup = Tuple.of(["storm", 3], Fields("word", "count"), component="split", task=4)
    >>> tup.getStringByField("word"), tup.getInteger(1), tup.getSourceComponent()
    ('storm', 3, 'split')
    >>> tup.select(Fields("count", "word"))
    [3, 'storm']
    >>> tup.getLong(0)
    Traceback (most recent call last):
    TypeError: field 0 ('word') of a tuple from 'split' stream 'default' holds 'storm' (str), \
expected an int
    """

    __slots__ = ("_done", "_fields", "native")

    def __init__(self, native: NativeTuple, fields: Fields) -> None:
        self.native = native
        self._fields = fields
        self._done = False  # acked or failed through an OutputCollector

    @classmethod
    def of(
        cls,
        values: Sequence[Any],
        fields: Fields,
        component: str = "component",
        stream: str = DEFAULT_STREAM,
        task: int = 1,
    ) -> Tuple:
        """A tuple for unit tests (Storm's ``Testing.testTuple``).

        Raises:
            ValueError: ``values`` and ``fields`` differ in length.
        """
        if len(values) != fields.size():
            raise ValueError(f"{len(values)} values for {fields.size()} fields {fields.toList()}")
        return cls(NativeTuple(None, component, stream, task, list(values)), fields)

    def isTick(self) -> bool:
        """Whether this is a tick tuple (from ``__system`` on ``__tick``)."""
        native = self.native
        return native.component == SYSTEM_COMPONENT and native.stream == TICK_STREAM

    # --- ITuple ---------------------------------------------------------------------------
    def size(self) -> int:
        """The number of values."""
        return len(self.native.values)

    def contains(self, field: str) -> bool:
        """Whether the tuple has a field named ``field``."""
        return self._fields.contains(field)

    def getFields(self) -> Fields:
        """The field names of the source stream."""
        return self._fields

    def fieldIndex(self, field: str) -> int:
        """The position of ``field`` (ValueError if the stream has no such field)."""
        return self._fields.fieldIndex(field)

    def select(self, selector: Fields) -> list[Any]:
        """The values of the fields of ``selector``, in its order."""
        return self._fields.select(selector, self.native.values)

    def getValues(self) -> list[Any]:
        """All values, in field order."""
        return list(self.native.values)

    def getValue(self, i: int) -> Any:
        """The value at position ``i``."""
        return self.native.values[i]

    def getValueByField(self, field: str) -> Any:
        """The value of ``field``."""
        return self.native.values[self._fields.fieldIndex(field)]

    def _typed(self, i: int, kind: type, name: str) -> Any:
        value = self.native.values[i]
        if value is None or (isinstance(value, kind) and isinstance(value, bool) == (kind is bool)):
            return value
        field = self._fields.get(i) if i < self._fields.size() else "?"
        raise TypeError(
            f"field {i} ({field!r}) of a tuple from {self.native.component!r} stream "
            f"{self.native.stream!r} holds {value!r} ({type(value).__name__}), expected {name}"
        )

    def getString(self, i: int) -> str:
        """The str at ``i``.

        Like every typed getter: a value of another type raises TypeError (as Java's cast
        does), and None is returned as is (Java's null).
        """
        value = self.native.values[i]
        if type(value) is str:
            return value
        return self._typed(i, str, "a str")

    def getInteger(self, i: int) -> int:
        """The int at ``i``."""
        value = self.native.values[i]
        if type(value) is int:
            return value
        return self._typed(i, int, "an int")

    getLong = getInteger
    getShort = getInteger
    getByte = getInteger

    def getBoolean(self, i: int) -> bool:
        """The bool at ``i``."""
        return self._typed(i, bool, "a bool")

    def getDouble(self, i: int) -> float:
        """The float at ``i``."""
        return self._typed(i, float, "a float")

    getFloat = getDouble

    def getBinary(self, i: int) -> bytes:
        """The bytes at ``i``."""
        return self._typed(i, bytes, "bytes")

    def getStringByField(self, field: str) -> str:
        """The str value of ``field``."""
        index = self._fields._index.get(field)
        if index is not None:
            value = self.native.values[index]
            if type(value) is str:
                return value
        return self.getString(self._fields.fieldIndex(field))

    def getIntegerByField(self, field: str) -> int:
        """The int value of ``field``."""
        index = self._fields._index.get(field)
        if index is not None:
            value = self.native.values[index]
            if type(value) is int:
                return value
        return self.getInteger(self._fields.fieldIndex(field))

    getLongByField = getIntegerByField
    getShortByField = getIntegerByField
    getByteByField = getIntegerByField

    def getBooleanByField(self, field: str) -> bool:
        """The bool value of ``field``."""
        return self.getBoolean(self._fields.fieldIndex(field))

    def getDoubleByField(self, field: str) -> float:
        """The float value of ``field``."""
        return self.getDouble(self._fields.fieldIndex(field))

    getFloatByField = getDoubleByField

    def getBinaryByField(self, field: str) -> bytes:
        """The bytes value of ``field``."""
        return self.getBinary(self._fields.fieldIndex(field))

    # --- Tuple ------------------------------------------------------------------------------
    def getSourceComponent(self) -> str:
        """The emitting component (``"__system"`` for ticks)."""
        return self.native.component

    def getSourceStreamId(self) -> str:
        """The stream it was emitted on."""
        return self.native.stream

    def getSourceTask(self) -> int:
        """The emitting task's id (-1 for ticks)."""
        task = self.native.task
        return -1 if task is None else task

    def getSourceGlobalStreamId(self) -> GlobalStreamId:
        """``GlobalStreamId(source component, stream)``."""
        return GlobalStreamId(self.native.component, self.native.stream)

    def getMessageId(self) -> Any:
        """The kernel's id of this tuple (opaque)."""
        return self.native.id

    def __repr__(self) -> str:
        native = self.native
        return (
            f"source: {native.component}:{native.task}, stream: {native.stream}, "
            f"id: {native.id}, {native.values!r}"
        )
