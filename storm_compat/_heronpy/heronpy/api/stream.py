"""heronpy's ``stream``: ``Stream`` (an output declaration) and ``Grouping``.

Both produce the native objects (`heron_core.api.Stream`, `heron_core.api.Grouping`), with
heronpy's rules: ``Stream(direct=True)`` raises ``NotImplementedError``; ``Grouping.DIRECT``
exists but a topology subscribing with it is refused when built; ``LOCAL_OR_SHUFFLE`` is
``SHUFFLE``; ``custom`` takes an ``ICustomGrouping`` or its ``"module.Class"`` path;
``custom_serialized`` takes a pickled Python grouping (the Java form raises
``NotImplementedError``, as does ``custom_object``).

>>> Stream(fields=["error_msg"], name="error")
Stream(fields=('error_msg',), name='error', direct=False)
>>> Grouping.fields("word"), Grouping.GLOBAL == Grouping.LOWEST
(Grouping.fields('word'), True)
>>> Stream(["word"], direct=True)
Traceback (most recent call last):
...
NotImplementedError: Stream(direct=True): direct streams are not supported by heronpy (nor \
Grouping.DIRECT)
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any, ClassVar

from heron_core.api import CustomGrouping
from heron_core.api import Grouping as NativeGrouping
from heron_core.api import Stream as NativeStream
from heron_core.api.constants import DEFAULT_STREAM
from heron_core.plan import GroupingKind
from heronpy.api.custom_grouping import ICustomGrouping

__all__ = ["Grouping", "Stream"]


class Stream(NativeStream):
    """An output stream declared in a component's ``outputs``.

    Args:
        fields: the field names (a list or tuple of str, or None).
        name: the stream name (``Stream.DEFAULT_STREAM_ID`` by default).
        direct: must be False (heronpy has no direct streams).

    Raises:
        TypeError: fields is not a list/tuple of str, or name is not a str.
        NotImplementedError: ``direct=True``.
    """

    __slots__ = ()

    DEFAULT_STREAM_ID: ClassVar[str] = DEFAULT_STREAM

    def __init__(
        self, fields: Sequence[str] | None = None, name: str = DEFAULT_STREAM, direct: bool = False
    ) -> None:
        if fields is not None and not isinstance(fields, list | tuple):
            raise TypeError(f"Stream fields must be a list, tuple or None, given: {fields!r}")
        if not isinstance(name, str):
            raise TypeError(f"Stream name must be a string, given: {name!r}")
        if direct is True:
            raise NotImplementedError(
                "Stream(direct=True): direct streams are not supported by heronpy "
                "(nor Grouping.DIRECT)"
            )
        super().__init__(fields, name, direct)


class Grouping:
    """How a bolt's input is partitioned over its tasks: heronpy's constants and
    constructors, producing native groupings."""

    SHUFFLE: ClassVar[NativeGrouping] = NativeGrouping.SHUFFLE
    ALL: ClassVar[NativeGrouping] = NativeGrouping.ALL
    LOWEST: ClassVar[NativeGrouping] = NativeGrouping.LOWEST
    NONE: ClassVar[NativeGrouping] = NativeGrouping.NONE
    DIRECT: ClassVar[NativeGrouping] = NativeGrouping.DIRECT
    """Exists as in heronpy, and is refused as in heronpy when a topology subscribes with it."""
    GLOBAL: ClassVar[NativeGrouping] = NativeGrouping.LOWEST
    LOCAL_OR_SHUFFLE: ClassVar[NativeGrouping] = NativeGrouping.SHUFFLE
    """heronpy's alias of ``SHUFFLE`` (streamparse compatibility)."""

    @classmethod
    def is_grouping_sane(cls, gtype: Any) -> bool:
        """Whether heronpy accepts ``gtype`` in a bolt's inputs (every grouping but DIRECT).

        >>> Grouping.is_grouping_sane(Grouping.ALL), Grouping.is_grouping_sane(Grouping.DIRECT)
        (True, False)
        """
        return isinstance(gtype, NativeGrouping) and gtype.kind in (
            GroupingKind.SHUFFLE,
            GroupingKind.ALL,
            GroupingKind.LOWEST,
            GroupingKind.NONE,
            GroupingKind.FIELDS,
            GroupingKind.CUSTOM,
        )

    @classmethod
    def fields(cls, *fields: str | list[str]) -> NativeGrouping:
        """Tuples with equal values of ``fields`` go to the same task: ``fields("a", "b")``
        or ``fields(["a", "b"])``.

        Raises:
            TypeError: a field name is not a str.
            ValueError: no field names.
        """
        return NativeGrouping.fields(*fields)

    @classmethod
    def custom(cls, customgrouper: ICustomGrouping | CustomGrouping | str) -> NativeGrouping:
        """A grouping chosen by ``customgrouper``: an ``ICustomGrouping`` instance, or the
        ``"module.Class"`` path of one (instantiated with no arguments now).

        Raises:
            TypeError: neither, or it cannot be pickled.
        """
        if customgrouper is None or not isinstance(customgrouper, CustomGrouping | str):
            raise TypeError(
                "Argument to Grouping.custom() must be an ICustomGrouping instance or its "
                f"class path, given: {customgrouper!r}"
            )
        return NativeGrouping.custom(customgrouper)

    @classmethod
    def custom_serialized(cls, serialized: bytes, is_java: bool = True) -> NativeGrouping:
        """A custom grouping given pickled (``is_java=False``); Java groupings raise.

        Raises:
            TypeError: ``serialized`` is not bytes of a pickled ``ICustomGrouping``.
            NotImplementedError: ``is_java`` (no JVM runs here, nor in heronpy's Python
                topologies).
        """
        if not isinstance(serialized, bytes):
            raise TypeError(
                "Argument to custom_serialized() must be a serialized Python grouping as "
                f"bytes, given: {serialized!r}"
            )
        if is_java:
            raise NotImplementedError(
                "Grouping.custom_serialized(is_java=True): custom groupings implemented in Java "
                "are not supported for Python topologies"
            )
        try:
            grouping = pickle.loads(serialized)
        except Exception as exc:
            raise TypeError(f"custom_serialized(): the bytes do not unpickle: {exc!r}") from exc
        if not isinstance(grouping, CustomGrouping):
            raise TypeError(
                f"custom_serialized(): the bytes hold a {type(grouping).__name__}, not an "
                "ICustomGrouping"
            )
        return NativeGrouping(GroupingKind.CUSTOM, custom_object=serialized)

    @classmethod
    def custom_object(cls, java_class_name: str, arg_list: Any) -> NativeGrouping:
        """Not supported (as in heronpy).

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError(
            f"Grouping.custom_object({java_class_name!r}, ...): Java custom groupings are not "
            "supported for Python topologies; use Grouping.custom(ICustomGrouping instance)"
        )
