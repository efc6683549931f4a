"""Output stream declarations and input groupings."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from heron_core.api._pickling import dumps
from heron_core.api.constants import DEFAULT_STREAM
from heron_core.plan import GroupingKind
from heron_core.plugins import resolve_class

if TYPE_CHECKING:
    from heron_core.api._context import TopologyContext

__all__ = ["CustomGrouping", "Grouping", "Stream"]


class Stream:
    """An output stream a component declares in its ``outputs``.

    A plain str in ``outputs`` is a field of the default stream; a ``Stream`` declares a
    whole stream. Direct streams are supported: only ``Grouping.DIRECT`` may subscribe to
    them, and emitters pass ``direct_task``.

    Attributes:
        stream_id: the stream's name.
        fields: the field names, in emit order.
        direct: whether the stream is direct.

    >>> Stream(["word", "count"], name="counts")
    Stream(fields=('word', 'count'), name='counts', direct=False)
    """

    __slots__ = ("direct", "fields", "stream_id")

    def __init__(
        self, fields: Sequence[str] | None = None, name: str = DEFAULT_STREAM, direct: bool = False
    ) -> None:
        if isinstance(fields, str):
            raise TypeError(f"Stream fields must be a list of str, got the str {fields!r}")
        field_names = tuple(fields or ())
        bad = [f for f in field_names if not isinstance(f, str)]
        if bad:
            raise TypeError(f"Stream field names must be str, got {bad!r}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"Stream name must be a non-empty str, got {name!r}")
        if not isinstance(direct, bool):
            raise TypeError(f"Stream direct must be a bool, got {direct!r}")
        self.stream_id = name
        self.fields = field_names
        self.direct = direct

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        return (self.stream_id, self.fields, self.direct) == (
            other.stream_id,
            other.fields,
            other.direct,
        )

    def __hash__(self) -> int:
        return hash((self.stream_id, self.fields, self.direct))

    def __repr__(self) -> str:
        return f"Stream(fields={self.fields!r}, name={self.stream_id!r}, direct={self.direct!r})"


class CustomGrouping(abc.ABC):
    """A grouping evaluated by the emitting task: it picks the target tasks of each tuple.

    It is pickled into the logical plan by ``Grouping.custom``; each emitting task unpickles
    its own copy, calls ``prepare`` once, then ``choose_tasks`` per tuple (on the task's
    thread, so it must not block).
    """

    @abc.abstractmethod
    def prepare(
        self, context: TopologyContext, component: str, stream: str, target_tasks: list[int]
    ) -> None:
        """Called once before any ``choose_tasks``.

        Args:
            context: the emitting task's context.
            component: the subscribing component.
            stream: the stream being grouped.
            target_tasks: the subscribing component's task ids, ascending.
        """

    @abc.abstractmethod
    def choose_tasks(self, values: list[Any]) -> list[int]:
        """The task ids (a subset of ``target_tasks``) that receive a tuple with ``values``."""


@dataclass(frozen=True, repr=False)
class Grouping:
    """How a bolt's input stream is partitioned over its tasks (equal and hashed by value).

    Use the constants ``SHUFFLE``, ``ALL``, ``LOWEST`` (alias ``GLOBAL``), ``NONE``,
    ``DIRECT`` and ``LOCAL_OR_SHUFFLE``, or the constructors ``fields``, ``partial_key`` and
    ``custom``.

    Attributes:
        kind: the grouping kind of the logical plan.
        grouping_fields: the key fields (FIELDS and PARTIAL_KEY).
        custom_object: the pickled CustomGrouping (CUSTOM).

    >>> Grouping.fields("word")
    Grouping.fields('word')
    >>> Grouping.GLOBAL == Grouping.LOWEST, Grouping.LOCAL_OR_SHUFFLE == Grouping.SHUFFLE
    (True, False)
    """

    kind: GroupingKind
    grouping_fields: tuple[str, ...] = ()
    custom_object: bytes = b""

    SHUFFLE: ClassVar[Grouping]
    ALL: ClassVar[Grouping]
    LOWEST: ClassVar[Grouping]
    GLOBAL: ClassVar[Grouping]
    NONE: ClassVar[Grouping]
    DIRECT: ClassVar[Grouping]
    LOCAL_OR_SHUFFLE: ClassVar[Grouping]

    @classmethod
    def fields(cls, *names: str | Iterable[str]) -> Grouping:
        """Tuples with equal values of ``names`` go to the same task.

        Accepts ``fields("a", "b")`` or ``fields(["a", "b"])``.
        """
        return cls(GroupingKind.FIELDS, _field_names("fields", names))

    @classmethod
    def partial_key(cls, *names: str | Iterable[str]) -> Grouping:
        """Like ``fields``, but each key goes to the less loaded of two tasks (Storm's
        partialKeyGrouping)."""
        return cls(GroupingKind.PARTIAL_KEY, _field_names("partial_key", names))

    @classmethod
    def custom(cls, grouping: CustomGrouping | str) -> Grouping:
        """A ``CustomGrouping`` instance, or the ``"module:Class"`` path of one (instantiated
        with no arguments now); it is pickled into the plan.

        Raises:
            TypeError: not a CustomGrouping, or it cannot be pickled.
        """
        if isinstance(grouping, str):
            target = resolve_class(grouping)
            if not (isinstance(target, type) and issubclass(target, CustomGrouping)):
                raise TypeError(f"{grouping!r} is not a CustomGrouping subclass")
            grouping = target()
        if not isinstance(grouping, CustomGrouping):
            raise TypeError(f"expected a CustomGrouping, got {type(grouping).__name__}")
        try:
            return cls(GroupingKind.CUSTOM, custom_object=dumps(grouping))
        except Exception as exc:
            raise TypeError(f"custom grouping {grouping!r} cannot be pickled: {exc}") from exc

    def __repr__(self) -> str:
        if self.kind in (GroupingKind.FIELDS, GroupingKind.PARTIAL_KEY):
            method = "fields" if self.kind is GroupingKind.FIELDS else "partial_key"
            return f"Grouping.{method}({', '.join(map(repr, self.grouping_fields))})"
        if self.kind is GroupingKind.CUSTOM:
            return f"Grouping.custom(<{len(self.custom_object)} pickled bytes>)"
        return f"Grouping.{self.kind.name}"


def _field_names(method: str, names: tuple[str | Iterable[str], ...]) -> tuple[str, ...]:
    given: tuple[object, ...] = names
    if len(names) == 1 and isinstance(names[0], Iterable) and not isinstance(names[0], str):
        given = tuple(names[0])
    if not given:
        raise ValueError(f"Grouping.{method}() needs at least one field name")
    fields = tuple(n for n in given if isinstance(n, str))
    if len(fields) != len(given):
        bad = [n for n in given if not isinstance(n, str)]
        raise TypeError(f"Grouping.{method}() field names must be str, got {bad!r}")
    return fields


Grouping.SHUFFLE = Grouping(GroupingKind.SHUFFLE)
Grouping.ALL = Grouping(GroupingKind.ALL)
Grouping.LOWEST = Grouping(GroupingKind.LOWEST)
Grouping.GLOBAL = Grouping.LOWEST
Grouping.NONE = Grouping(GroupingKind.NONE)
Grouping.DIRECT = Grouping(GroupingKind.DIRECT)
Grouping.LOCAL_OR_SHUFFLE = Grouping(GroupingKind.LOCAL_OR_SHUFFLE)
