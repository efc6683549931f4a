"""Storm's ``Tuple``: the kernel's tuple with its stream's fields and Storm's getters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM, GlobalStreamId
from heron_core.api import Tuple as NativeTuple
from storm_compat.tuple._fields import Fields
from storm_compat.tuple._typed import TypedTuple

__all__ = ["Tuple"]


_new = TypedTuple.__new__  # its nearest C class's (see heron_core.api._tuple._allocator)
_native_init = NativeTuple.__init__


class Tuple(TypedTuple):
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

    __slots__ = ()  # the two of TypedTuple (fields and settled) are all it adds

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

    # Storm's other names of the getters (aliases in a compiled class would be attributes)
    getLong = TypedTuple.getInteger
    getShort = TypedTuple.getInteger
    getByte = TypedTuple.getInteger
    getFloat = TypedTuple.getDouble
    getLongByField = TypedTuple.getIntegerByField
    getShortByField = TypedTuple.getIntegerByField
    getByteByField = TypedTuple.getIntegerByField
    getFloatByField = TypedTuple.getDoubleByField

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
