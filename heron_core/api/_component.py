"""The base classes users subclass: ``Spout`` and ``Bolt`` (heronpy-shaped).

Runtime contract (the instance process): it builds the user object by calling its class
with no arguments (when the plan's ``pickled_object`` is empty) or by unpickling the
instance; sets ``_collector`` to a :class:`SpoutCollector` / :class:`BoltCollector`; calls
``initialize(config, context)`` once; then calls the other hooks from one thread, never
concurrently; ``close`` is called at most once, at orderly shutdown, and no hook after it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from heron_core.api._spec import ComponentSpec, Inputs
from heron_core.api._tuple import InputBatch, Tuple
from heron_core.api.constants import DEFAULT_STREAM, SYSTEM_COMPONENT, TICK_STREAM
from heron_core.errors import HeronError

if TYPE_CHECKING:
    from heron_core.api._context import TopologyContext
    from heron_core.api._stream import Stream

__all__ = ["Bolt", "BoltCollector", "Spout", "SpoutCollector"]

_LOG_LEVELS = {
    "trace": 5,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}


class SpoutCollector(Protocol):
    """What the runtime gives a spout to emit with (the spout's ``_collector``)."""

    def emit(
        self,
        tup: Sequence[Any],
        tup_id: Any,
        stream: str,
        direct_task: int | None,
        need_task_ids: bool,
        /,
    ) -> list[int] | None:
        """Emit ``tup`` (see ``Spout.emit``); the task ids when ``need_task_ids``, else None."""
        ...


class BoltCollector(Protocol):
    """What the runtime gives a bolt to emit, ack and fail with (the bolt's ``_collector``)."""

    def emit(
        self,
        tup: Sequence[Any],
        stream: str,
        anchors: Iterable[Tuple] | None,
        direct_task: int | None,
        need_task_ids: bool,
        /,
    ) -> list[int] | None:
        """Emit ``tup`` (see ``Bolt.emit``); the task ids when ``need_task_ids``, else None."""
        ...

    def emit_many(
        self, rows: Iterable[Sequence[Any]], stream: str, anchors: Iterable[Tuple] | None, /
    ) -> None:
        """Emit each of ``rows`` (see ``Bolt.emit_many``)."""
        ...

    def emit_and_ack(self, batch: InputBatch, outputs: Any, stream: str, /) -> None:
        """Emit each input's rows anchored to it and ack the batch (see
        ``Bolt.emit_and_ack``)."""
        ...

    def ack(self, tup: Tuple, /) -> None:
        """Mark ``tup`` processed."""
        ...

    def fail(self, tup: Tuple, /) -> None:
        """Fail ``tup``'s tuple trees."""
        ...


class _Detached:
    """The collector of a component that is not running: every call raises."""

    @staticmethod
    def _raise(what: str) -> NoReturn:
        raise HeronError(
            f"{what} called outside a running topology: the runtime sets the component's "
            "_collector before initialize() (in a unit test, set it to a fake collector)"
        )

    def emit(self, *args: Any) -> NoReturn:
        self._raise("emit")

    def emit_many(self, *args: Any) -> NoReturn:
        self._raise("emit_many")

    def emit_and_ack(self, *args: Any) -> NoReturn:
        self._raise("emit_and_ack")

    def ack(self, *args: Any) -> NoReturn:
        self._raise("ack")

    def fail(self, *args: Any) -> NoReturn:
        self._raise("fail")


_DETACHED = _Detached()


class _Component:
    """What spouts and bolts share: ``outputs``, ``logger``, ``initialize``, ``close``, ``log``."""

    outputs: Sequence[str | Stream] = ()
    """Declared outputs: str items are fields of the default stream; each ``Stream`` declares
    a stream. An instance attribute of the same name wins over the class attribute."""

    logger: logging.Logger = logging.getLogger("heron.user._Component")
    """The logger ``heron.user.<class qualname>``, a class attribute (so unpickled instances
    have it without pickling it)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "logger" not in cls.__dict__:
            cls.logger = logging.getLogger(f"heron.user.{cls.__qualname__}")

    def initialize(self, config: dict[str, Any], context: TopologyContext) -> None:
        """Called once, before any other hook, with the effective config and the context."""

    def close(self) -> None:
        """Called at most once, at orderly shutdown; no hook is called after it."""

    def log(self, message: object, level: str | int | None = None) -> None:
        """Log ``message`` to ``self.logger``.

        Args:
            message: logged with ``str()``.
            level: trace, debug, info (the default), warn/warning, error, critical, or a
                ``logging`` level number.

        Raises:
            ValueError: an unknown level name.
        """
        if level is None:
            number = logging.INFO
        elif isinstance(level, int):
            number = level
        else:
            found = _LOG_LEVELS.get(str(level).lower())
            if found is None:
                raise ValueError(
                    f"unknown log level {level!r}; use one of {', '.join(_LOG_LEVELS)}"
                )
            number = found
        self.logger.log(number, "%s", message)


class Spout(_Component):
    """A source of tuples. Subclass it, set ``outputs`` and implement ``next_tuple``.

    Construction: a class is instantiated with no arguments in each task; an instance
    (given to ``TopologyBuilder.add_spout``) is pickled and unpickled in each task. The
    runtime sets ``_collector`` before ``initialize``; emitting earlier raises HeronError.

    >>> class WordSpout(Spout):
    ...     outputs = ["word"]
    ...     def next_tuple(self):
    ...         self.emit(["hello"], tup_id=1)
    >>> WordSpout.spec(par=2)["default"]
    GlobalStreamId(None, 'default')
    >>> WordSpout().next_tuple()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    heron_core.errors.HeronError: emit called outside a running topology: ...
    """

    _collector: SpoutCollector = _DETACHED

    def next_tuple(self) -> None:
        """Emit zero or more tuples. Must not block: return when there is nothing to emit.

        Not called while the spout is deactivated, while its pending (un-acked) tuples reach
        ``topology.max.spout.pending``, or under back pressure.
        """
        raise NotImplementedError(f"{type(self).__qualname__} must implement next_tuple()")

    def ack(self, tup_id: Any) -> None:
        """The tuple tree emitted with ``tup_id`` completed. Ids no longer known must be
        tolerated."""

    def fail(self, tup_id: Any) -> None:
        """The tuple tree emitted with ``tup_id`` failed or timed out; replaying is up to the
        spout. Ids no longer known must be tolerated."""

    def activate(self) -> None:
        """The topology was activated; ``next_tuple`` calls resume."""

    def deactivate(self) -> None:
        """The topology was deactivated; no ``next_tuple`` until ``activate``."""

    def emit(
        self,
        tup: Sequence[Any],
        tup_id: Any = None,
        stream: str = DEFAULT_STREAM,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit ``tup`` (one value per declared field of ``stream``).

        Args:
            tup: the values.
            tup_id: a message id to track the tuple tree (``ack``/``fail`` get it back);
                None emits unreliably.
            stream: a declared output stream (the runtime takes None for the default
                stream, as pystorm does).
            direct_task: the target task, for direct streams only.
            need_task_ids: return the ids of the tasks the tuple was sent to.

        Returns:
            The target task ids when ``need_task_ids``, else None.

        Raises:
            HeronError: called before the runtime attached the spout.
        """
        return self._collector.emit(tup, tup_id, stream, direct_task, need_task_ids)

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> ComponentSpec:
        """This spout as a topology component (for a ``Topology`` class or ``add_spec``).

        Args:
            name: the component name (default: the ``Topology`` attribute name).
            par: the number of tasks.
            config: component config, overriding the topology config.
            optional_outputs: outputs declared in addition to ``cls.outputs``.
        """
        return ComponentSpec(
            cls,
            is_spout=True,
            name=name,
            par=par,
            config=config,
            optional_outputs=optional_outputs,
        )


class Bolt(_Component):
    """A tuple processor. Subclass it, implement ``process``, and set ``outputs`` if it emits.

    Nothing is acked or anchored automatically: call ``self.ack(tup)`` (or ``fail``) for
    every input, and pass ``anchors=[tup]`` to emits that belong to ``tup``'s tree.
    Construction and ``_collector`` work as for ``Spout``.

    >>> class Upper(Bolt):
    ...     outputs = ["word"]
    ...     def process(self, tup):
    ...         self.emit([tup.values[0].upper()], anchors=[tup])
    ...         self.ack(tup)
    >>> class PrintingCollector:  # a fake BoltCollector, as in a unit test
    ...     def emit(self, tup, stream, anchors, direct_task, need_task_ids):
    ...         print("emit", tup, stream, [a.id for a in anchors])
    ...     def ack(self, tup):
    ...         print("ack", tup.id)
    ...     def fail(self, tup):
    ...         print("fail", tup.id)
    >>> from heron_core.api import Tuple
    >>> bolt = Upper()
    >>> bolt._collector = PrintingCollector()
    >>> bolt.process(Tuple("1", "words", "default", 3, ["hi"]))
    emit ['HI'] default ['1']
    ack 1
    """

    _collector: BoltCollector = _DETACHED

    tuple_type: type[Tuple] = Tuple
    """The class the runtime builds this bolt's input tuples as: ``Tuple`` or a subclass that
    adds methods or slots (the runtime sets only ``Tuple``'s own slots, without calling
    ``__init__``). Ticks are always plain ``Tuple`` s."""

    def process(self, tup: Tuple) -> None:
        """Handle one input tuple (never a tick tuple)."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement process()")

    def process_tick(self, tup: Tuple) -> None:
        """Handle a tick tuple (``topology.tick.tuple.freq.secs``); ticks need no ack."""

    def process_batch(self, batch: InputBatch) -> None:
        """Handle the inputs of one received batch at once, in arrival order (optional).

        The runtime calls it instead of ``process`` once per input where the bolt overrides it
        (in its class, or on the instance by ``initialize``). With acking on, each input
        belongs to tuple trees: ack or fail (and anchor to) its Tuple, from ``batch.tuples()``,
        as ``process`` would. With acking off (``batch.tracked`` false) the bolt may instead
        count an input it settles in ``batch.acked`` or ``batch.failed`` and never build its
        Tuple, which is what saves time; ``batch.tuple(i)`` builds one Tuple, for an input
        acked or failed through the collector later. ``emit_and_ack(batch, outputs)`` settles
        a whole batch either way without a Tuple per input: each input's rows emitted anchored
        to it, then every input acked. This default does what the runtime does without it:
        ``process`` of each input's Tuple (``batch.each(self.process)``).

        >>> from heron_core.api import InputBatch
        >>> class Lengths(Bolt):
        ...     outputs = ["length"]
        ...     def process_batch(self, batch):
        ...         for values in batch.values:
        ...             self.emit([len(values[0])])
        ...         batch.acked += len(batch.values)
        >>> class PrintingCollector:
        ...     def emit(self, tup, stream, anchors, direct_task, need_task_ids):
        ...         print("emit", tup)
        >>> bolt = Lengths()
        >>> bolt._collector = PrintingCollector()
        >>> batch = InputBatch("words", "default", 3, [["hi"], ["there"]])
        >>> bolt.process_batch(batch)
        emit [2]
        emit [5]
        >>> batch.acked
        2
        """
        batch.each(self.process)

    def emit(
        self,
        tup: Sequence[Any],
        stream: str = DEFAULT_STREAM,
        anchors: Iterable[Tuple] | None = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit ``tup`` (one value per declared field of ``stream``).

        Args:
            tup: the values.
            stream: a declared output stream (the runtime takes None for the default
                stream, as pystorm does).
            anchors: received tuples whose trees the new tuple joins; None or empty emits
                unanchored.
            direct_task: the target task, for direct streams only.
            need_task_ids: return the ids of the tasks the tuple was sent to.

        Returns:
            The target task ids when ``need_task_ids``, else None (unlike heronpy, which
            always returns None).

        Raises:
            HeronError: called before the runtime attached the bolt.
        """
        return self._collector.emit(tup, stream, anchors, direct_task, need_task_ids)

    def emit_many(
        self,
        rows: Iterable[Sequence[Any]],
        stream: str = DEFAULT_STREAM,
        anchors: Iterable[Tuple] | None = None,
    ) -> None:
        """Emit each of ``rows`` on ``stream``, all with the same ``anchors``: what
        ``for tup in rows: self.emit(tup, stream, anchors)`` does, in one call (a loop in the
        instance's compiled router instead of a call per tuple; Bytewax's ``flat_map_batch``
        returns its outputs as a list for the same reason). Not for a direct stream.

        An error (a row of the wrong arity, an undeclared stream) is raised at the row that
        caused it; the rows before it were emitted.

        >>> class Words(Bolt):
        ...     outputs = ["word"]
        ...     def process(self, tup):
        ...         self.emit_many([[word] for word in tup.values[0].split()], anchors=[tup])
        >>> class PrintingCollector:
        ...     def emit_many(self, rows, stream, anchors):
        ...         print("emit", rows, "on", stream)
        >>> bolt = Words()
        >>> bolt._collector = PrintingCollector()
        >>> bolt.process(Tuple(None, "lines", "default", 3, ["to be"]))
        emit [['to'], ['be']] on default
        """
        self._collector.emit_many(rows, stream, anchors)

    def emit_and_ack(
        self,
        batch: InputBatch,
        outputs: Sequence[Iterable[Sequence[Any]]],
        stream: str = DEFAULT_STREAM,
    ) -> None:
        """Emit ``outputs[i]``, the rows that input ``i`` of ``batch`` produced, on ``stream``
        anchored to that input, then ack every input of the batch: for a ``process_batch``
        that works out each input's outputs (maybe none) and settles them all the same way.
        The same code serves acking on and off, and neither builds a Tuple per input (with
        acking on, each input's edges come from its trees; with acking off the rows go out in
        one ``emit_many``, the inputs counted acked). Between two inputs it serves what is due
        (``batch.due``). It equals, in one call::

            for tup, rows in zip(batch.tuples(), outputs):
                self.emit_many(rows, stream, anchors=[tup])
                self.ack(tup)

        Once for a batch, in place of acking or failing its inputs one by one (a Tuple built
        afterwards is acked already). ``outputs`` must have one list per input, in order.

        >>> from heron_core.api import InputBatch
        >>> class Words(Bolt):
        ...     outputs = ["word"]
        ...     def process_batch(self, batch):
        ...         split = [[[word] for word in line.split()] for (line,) in batch.values]
        ...         self.emit_and_ack(batch, split)
        >>> class PrintingCollector:
        ...     def emit_and_ack(self, batch, outputs, stream):
        ...         print(len(batch), "inputs:", outputs, "on", stream)
        >>> bolt = Words()
        >>> bolt._collector = PrintingCollector()
        >>> bolt.process_batch(InputBatch("lines", "default", 3, [["to be"], ["or"]]))
        2 inputs: [[['to'], ['be']], [['or']]] on default
        """
        self._collector.emit_and_ack(batch, outputs, stream)

    def ack(self, tup: Tuple) -> None:
        """Mark the received ``tup`` processed."""
        self._collector.ack(tup)

    def fail(self, tup: Tuple) -> None:
        """Fail the trees the received ``tup`` belongs to (their spouts' ``fail`` is called)."""
        self._collector.fail(tup)

    @staticmethod
    def is_tick(tup: Tuple) -> bool:
        """Whether ``tup`` is a tick tuple."""
        return tup.component == SYSTEM_COMPONENT and tup.stream == TICK_STREAM

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        inputs: Inputs | None = None,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> ComponentSpec:
        """This bolt as a topology component (for a ``Topology`` class or ``add_spec``).

        Args:
            name: the component name (default: the ``Topology`` attribute name).
            inputs: ``{spec or GlobalStreamId: Grouping}``, or a list of them (SHUFFLE).
                A spec means its default stream; ``spec["name"]`` is another stream.
            par: the number of tasks.
            config: component config, overriding the topology config.
            optional_outputs: outputs declared in addition to ``cls.outputs``.
        """
        return ComponentSpec(
            cls,
            is_spout=False,
            name=name,
            par=par,
            config=config,
            inputs=inputs,
            optional_outputs=optional_outputs,
        )
