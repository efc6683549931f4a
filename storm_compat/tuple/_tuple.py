"""Storm's ``Tuple``: the kernel's tuple with its stream's fields and Storm's getters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM, GlobalStreamId
from heron_core.api import Tuple as NativeTuple
from storm_compat.tuple._fields import Fields

__all__ = ["Tuple"]


_new = NativeTuple.__new__
_native_init = NativeTuple.__init__


class Tuple(NativeTuple):
    """A tuple a bolt receives: values with field names, its source and its message id.

    The runtime builds each input of a Storm bolt as one of these (it is the kernel's tuple
    too, a subclass of ``heron_core.api.Tuple``); use it to ack, fail and anchor. In a unit
    test, build one with :meth:`of`.

    As in Storm (``TupleImpl``), tuples are equal only to themselves: two inputs with the same
    values are two tuples. Storm's API reads values with ``getValue(i)``, ``size()`` and
    ``getValues()``; what the kernel's tuple adds (the ``values``, ``component``, ``stream``,
    ``task`` and ``id`` attributes, and unpacking, indexing and ``len()`` over those five
    fields, as in heronpy) is there for native code handed the tuple, not for Storm code.

    >>> tup = Tuple.of(["storm", 3], Fields("word", "count"), component="split", task=4)
    >>> tup.getStringByField("word"), tup.getInteger(1), tup.getSourceComponent()
    ('storm', 3, 'split')
    >>> tup.select(Fields("count", "word"))
    [3, 'storm']
    >>> tup == Tuple.of(["storm", 3], Fields("word", "count"), component="split", task=4)
    False
    >>> tup.getLong(0)
    Traceback (most recent call last):
    TypeError: field 0 ('word') of a tuple from 'split' stream 'default' holds 'storm' (str), \
expected an int
    """

    # The fields of the source stream, and whether the tuple was acked or failed through an
    # OutputCollector: set by the bolt adapter on each input before the bolt sees it (the
    # runtime builds inputs without __init__, setting only the kernel tuple's slots).
    __slots__ = ("_done", "_schema")
    _done: bool
    _schema: Fields

    def __new__(cls, native: NativeTuple, fields: Fields) -> Tuple:
        """The Storm tuple of the kernel's tuple ``native``: ``native`` itself when it is one
        (every input of a Storm bolt is; it keeps its own fields), else (a tick) a new one
        with its five fields and ``fields``, outside any tuple tree."""
        if isinstance(native, Tuple):
            return native
        tup = _new(cls)
        _native_init(tup, native.id, native.component, native.stream, native.task, native.values)
        tup._schema = fields
        tup._done = False
        return tup

    def __init__(self, native: NativeTuple, fields: Fields) -> None:
        """Everything is set by ``__new__`` (this keeps ``heron_core``'s ``__init__`` away)."""

    def __getnewargs__(self) -> tuple[NativeTuple, Fields]:
        # pickle and copy build the copy through __new__, then set every slot as it is here
        return NativeTuple(
            self.id, self.component, self.stream, self.task, self.values
        ), self._schema

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

    __eq__ = object.__eq__  # identity, as Storm's TupleImpl (the kernel's tuple compares values)
    __hash__ = object.__hash__

    @property
    def native(self) -> NativeTuple:
        """The kernel's tuple: this tuple itself."""
        return self

    def isTick(self) -> bool:
        """Whether this is a tick tuple (from ``__system`` on ``__tick``)."""
        return self.component == SYSTEM_COMPONENT and self.stream == TICK_STREAM

    # --- ITuple ---------------------------------------------------------------------------
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

    def getString(self, i: int) -> str:
        """The str at ``i``.

        Like every typed getter: a value of another type raises TypeError (as Java's cast
        does), and None is returned as is (Java's null).
        """
        value = self.values[i]
        if type(value) is str:
            return value
        return self._typed(i, str, "a str")

    def getInteger(self, i: int) -> int:
        """The int at ``i``."""
        value = self.values[i]
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
        index = self._schema._index.get(field)
        if index is not None:
            value = self.values[index]
            if type(value) is str:
                return value
        return self.getString(self._schema.fieldIndex(field))

    def getIntegerByField(self, field: str) -> int:
        """The int value of ``field``."""
        index = self._schema._index.get(field)
        if index is not None:
            value = self.values[index]
            if type(value) is int:
                return value
        return self.getInteger(self._schema.fieldIndex(field))

    getLongByField = getIntegerByField
    getShortByField = getIntegerByField
    getByteByField = getIntegerByField

    def getBooleanByField(self, field: str) -> bool:
        """The bool value of ``field``."""
        return self.getBoolean(self._schema.fieldIndex(field))

    def getDoubleByField(self, field: str) -> float:
        """The float value of ``field``."""
        return self.getDouble(self._schema.fieldIndex(field))

    getFloatByField = getDoubleByField

    def getBinaryByField(self, field: str) -> bytes:
        """The bytes value of ``field``."""
        return self.getBinary(self._schema.fieldIndex(field))

    # --- Tuple ------------------------------------------------------------------------------
    def getSourceComponent(self) -> str:
        """The emitting component (``"__system"`` for ticks)."""
        return self.component

    def getSourceStreamId(self) -> str:
        """The stream it was emitted on."""
        return self.stream

    def getSourceTask(self) -> int:
        """The emitting task's id (-1 for ticks)."""
        task = self.task
        return -1 if task is None else task

    def getSourceGlobalStreamId(self) -> GlobalStreamId:
        """``GlobalStreamId(source component, stream)``."""
        return GlobalStreamId(self.component, self.stream)

    def getMessageId(self) -> Any:
        """The kernel's id of this tuple (opaque)."""
        return self.id

    def __repr__(self) -> str:
        return (
            f"source: {self.component}:{self.task}, stream: {self.stream}, "
            f"id: {self.id}, {self.values!r}"
        )
