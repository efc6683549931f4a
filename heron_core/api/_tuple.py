"""The tuple a bolt receives."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import length_hint
from types import FunctionType
from typing import Any, ClassVar

from heron_core._compiled import mypyc_attr

__all__ = ["InputBatch", "Tuple"]


@mypyc_attr(allow_interpreted_subclasses=True)
class Tuple:
    """A received tuple: ``Tuple(id, component, stream, task, values)``.

    Field names and order are those of heronpy's and pystorm's namedtuple, and it unpacks
    and indexes like one. It is built once per received tuple, so it is a ``__slots__`` class
    with a plain ``__init__`` (about 2x cheaper to build than a namedtuple subclass that
    carries the acking slots). Compiled (``heron_core._compiled``), it is a C class: the
    instance's anchoring reads its slots as struct fields, and Python subclasses (the Storm
    facade's, a bolt's ``tuple_type``) are allowed; ``Tuple.__new__(cls)`` makes an instance
    without ``__init__`` (``object.__new__`` refuses a C class; for a subclass with a compiled
    base of its own, see `_allocator`). Equality is by the five
    fields; the hash leaves out ``values`` so tuples with list values can be dict keys.

    Tick tuples come from component ``"__system"`` on stream ``"__tick"``.

    Attributes:
        id: the tuple's id (opaque; use the Tuple itself to ack, fail and anchor).
        component: the source component.
        stream: the source stream.
        task: the source task id (None for system tuples).
        values: the field values, in declared order.

    >>> tup = Tuple("7", "words", "default", 3, ["hello"])
    >>> tup
    Tuple(id='7', component='words', stream='default', task=3, values=['hello'])
    >>> id_, component, stream, task, values = tup
    >>> tup[1], component, values
    ('words', 'words', ['hello'])
    """

    __slots__ = (
        "_ackval",
        "_edgerun",
        "_origin",
        "_received",
        "_roots",
        "component",
        "id",
        "stream",
        "task",
        "values",
    )

    _fields: ClassVar[tuple[str, ...]] = ("id", "component", "stream", "task", "values")

    # Any (the docstring says what they hold): compiled, a narrower type would be checked on
    # every set and in __init__, refusing what the plain class takes (a test's int component).
    id: Any
    component: Any
    stream: Any
    task: Any
    values: Any

    def __init__(self, id: Any, component: Any, stream: Any, task: Any, values: Any) -> None:
        self.id = id
        self.component = component
        self.stream = stream
        self.task = task
        self.values = values
        # Kernel-private state, set by the instance process, never read by users: the
        # (spout task, root key, edge value) triples of the trees this tuple belongs to, and the
        # XOR of the edges of the tuples anchored to it (None once it is acked or failed), and
        # the run of copies it came in, which share its edges (None: its edges are its own;
        # heron_core.instance._anchoring); the counters of its input stream and when the
        # instance got it (perf_counter), for the ack and fail counts and latencies. The
        # instance builds received tuples without calling __init__, setting only what its
        # acking mode reads.
        self._roots: Any = ()
        self._ackval: Any = 0
        self._edgerun: Any = None
        self._origin: Any = None
        self._received: float = 0.0

    def _astuple(self) -> tuple[Any, Any, Any, Any, Any]:
        return (self.id, self.component, self.stream, self.task, self.values)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._astuple())

    def __getitem__(self, index: int | slice) -> Any:
        return self._astuple()[index]

    def __len__(self) -> int:
        return 5

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tuple):
            return NotImplemented
        return self._astuple() == other._astuple()

    def __hash__(self) -> int:
        return hash((self.id, self.component, self.stream, self.task))

    def __repr__(self) -> str:
        return (
            f"Tuple(id={self.id!r}, component={self.component!r}, stream={self.stream!r}, "
            f"task={self.task!r}, values={self.values!r})"
        )


@mypyc_attr(allow_interpreted_subclasses=True)
class InputBatch:
    """The inputs of one received batch, handed whole to a bolt that overrides
    ``Bolt.process_batch`` (see there).

    Attributes:
        component: the source component of every input.
        stream: their source stream.
        task: their source task id.
        values: each input's field values, in arrival order.
        acked: with acking off, how many inputs the bolt acked during the call without their
            Tuple (the bolt adds to it; counted in the ack count and the process latency).
        failed: the same for failed inputs.
        due: a one-element list; ``due[0]`` turns true when the instance's flush interval
            (``heron.instance.batch.flush.interval.ms``) has passed since it last sent what the
            bolt emitted. A bolt that works through a batch input by input checks it between
            two inputs and, when it is true, calls ``serve()``. Never true outside an instance.

    >>> batch = InputBatch("split", "default", 3, [["a"], ["b"]])
    >>> batch.tuple(1)
    Tuple(id=None, component='split', stream='default', task=3, values=['b'])
    >>> [tup.values for tup in batch.tuples()]
    [['a'], ['b']]
    """

    __slots__ = (
        "_kind",
        "_left",
        "_origin",
        "_received",
        "_settled",
        "_trees",
        "_tuples",
        "_wrap",
        "acked",
        "component",
        "due",
        "failed",
        "serve",
        "stream",
        "task",
        "values",
    )

    component: Any  # Any, as in Tuple: compiled, a narrower type would be checked
    stream: Any
    task: Any
    values: Any

    def __init__(
        self,
        component: Any,
        stream: Any,
        task: Any,
        values: Sequence[Any],
        origin: Any = None,
        received: float = 0.0,
        kind: type[Tuple] = Tuple,
        trees: Sequence[Any] | None = None,
        due: list[bool] | None = None,
        serve: Callable[[], None] | None = None,
    ) -> None:
        self.component = component
        self.stream = stream
        self.task = task
        self.values = values
        self.acked = 0
        self.failed = 0
        # Kernel-private, as in Tuple: the stream's counters, the receipt time, the tuple
        # class, and with acking on the inputs' trees as runs (see count_runs; None: acking off).
        self._origin = origin
        self._received = received
        self._kind = kind
        self._trees = trees
        self._tuples: list[Tuple] | None = None
        self._settled = False  # every input was acked by Bolt.emit_and_ack, without its Tuple
        self._left = -1  # inputs not yet processed when a paced _each last served
        # set by task hooks for one call of `each`, which then calls wrap(process) instead
        # (each input's own execute latency); None again once used
        self._wrap: Callable[[Callable[[Tuple], Any]], Callable[[Tuple], Any]] | None = None
        self.due = due if due is not None else [False]
        self.serve: Callable[[], None] = serve if serve is not None else _serve_nothing
        """Does what is due (see ``due``) and lowers ``due[0]``: the instance sends the
        batches emitted so far and the acks, runs a tick or publishes metrics if their time
        came, all on the calling thread. Call it only between two inputs, from
        ``process_batch``. When a stop was requested it does not return: the rest of the batch
        is left unprocessed (an exception that ``except Exception`` does not catch)."""

    @property
    def timed(self) -> bool:
        """Whether task hooks time each input of this batch: then `each` reports every input
        with its own execute latency (Storm's ``boltExecute``), while inputs worked through
        any other way are reported after ``process_batch`` with the batch's time shared
        evenly. A ``process_batch`` with a faster loop of its own that should keep the
        per-input figures takes the inputs through `each` when this is true."""
        return self._wrap is not None

    @property
    def tracked(self) -> bool:
        """Whether the inputs belong to tuple trees (acking is on): then each must be acked or
        failed through its Tuple, and ``acked`` and ``failed`` must stay 0."""
        return self._trees is not None

    def tuples(self) -> list[Tuple]:
        """Every input as a Tuple (of the bolt's ``tuple_type``), built on the first call."""
        if self._tuples is None:
            built: list[Tuple] = []
            self._each(built.append)
            self._tuples = built
        return self._tuples

    def each(self, process: Callable[[Tuple], Any]) -> None:
        """Call ``process`` with each input's Tuple, one at a time in arrival order, calling
        ``serve()`` between two inputs whenever it is due: what the runtime does with
        ``process`` for a bolt without ``process_batch``, for a ``process_batch`` that works
        out something once per batch (from ``component`` and ``stream``) and then takes the
        inputs one by one. `tuples` then returns the same Tuples (built here, or there if it
        was called first).

        >>> batch = InputBatch("split", "default", 3, [["a"], ["b"]])
        >>> batch.each(lambda tup: print(tup.values))
        ['a']
        ['b']
        >>> [tup.values for tup in batch.tuples()]
        [['a'], ['b']]
        """
        wrap = self._wrap
        if wrap is not None:
            self._wrap = None
            process = wrap(process)
        if self._tuples is not None:
            self._each(process, paced=True, built=self._tuples)
            return
        built: list[Tuple] = []
        self._each(process, paced=True, keep=built)
        self._tuples = built

    def tuple(self, index: int) -> Tuple:
        """The input ``index`` as a Tuple: for an input the bolt acks or fails later, through
        the collector, or hands to code written for Tuples."""
        if self._trees is not None or self._tuples is not None:
            return self.tuples()[index]
        built: list[Tuple] = []
        self._each(built.append, (self.values[index],))
        return built[0]

    def _bare(self, index: int) -> Tuple:
        """Input ``index`` as a Tuple (of the bolt's ``tuple_type``) with its receipt state and
        the tree state of a Tuple outside any tree, which the caller sets
        (`heron_core.instance._anchoring.InputCursor`: an input walked without its Tuple)."""
        kind = self._kind
        tup: Tuple = _allocator(kind)(kind)
        tup.id = None
        tup.component = self.component
        tup.stream = self.stream
        tup.task = self.task
        tup.values = self.values[index]
        tup._origin = self._origin
        tup._received = self._received
        tup._roots = ()
        tup._ackval = 0
        tup._edgerun = None
        return tup

    def _each(
        self,
        process: Callable[[Tuple], Any],
        rows: Iterable[Any] | None = None,
        paced: bool = False,
        keep: list[Tuple] | None = None,
        built: list[Tuple] | None = None,
    ) -> None:
        """Build the Tuple of each input (of ``rows`` instead, with acking off) and call
        ``process`` with it, one at a time: also the runtime's path for a bolt that takes its
        inputs one by one (``paced``: calling `serve` between two calls when it is due).
        Built without ``__init__``, with only the slots that the acking mode reads (a plain
        `Tuple`, compiled, by its constructor: see `_COMPILED`); appended to ``keep`` when
        given. With ``built``, the Tuples built before instead."""
        due = self.due if paced else _NEVER
        serve = self.serve
        kind = self._kind
        new = _allocator(kind)
        component, stream, task = self.component, self.stream, self.task
        origin, received = self._origin, self._received
        runs: Iterator[Any] | None = None
        if built is not None:
            inputs: Iterator[Any] = iter(built)
        else:
            if self._trees is not None:
                copies = count_runs(self._trees)
                if copies != len(self.values):
                    raise ValueError(
                        f"{len(self.values)} inputs from {component!r} on {stream!r} came with "
                        f"{copies} tuple trees"
                    )
                runs = iter(self._trees)
            inputs = iter(self.values if rows is None else rows)
        left = 0  # inputs still to come of the current run
        roots: Any = ()
        run: Run | None = None
        direct = kind is Tuple and _COMPILED
        tup: Tuple  # compiled: its slots are struct fields
        for item in inputs:
            if built is not None:
                tup = item
            elif direct:
                tup = Tuple(None, component, stream, task, item)
            else:
                tup = new(kind)
                tup.id = None
                tup.component = component
                tup.stream = stream
                tup.task = task
                tup.values = item
            if built is None:
                tup._origin = origin
                tup._received = received
                if runs is not None:
                    if not left:  # the next run's first input
                        left, roots = run_of(next(runs))
                        run = Run(left) if left > 1 and roots else None
                    left -= 1
                    # a Tuple built after emit_and_ack acked its input is settled already
                    tup._ackval = None if self._settled else 0
                    tup._roots = roots
                    tup._edgerun = run
                if keep is not None:
                    keep.append(tup)
            process(tup)
            if due[0]:
                self._left = length_hint(inputs)
                serve()

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return (
            f"InputBatch(component={self.component!r}, stream={self.stream!r}, "
            f"task={self.task!r}, {len(self.values)} inputs)"
        )


def _allocator(kind: type) -> Callable[[type], Any]:
    """What makes a ``kind`` without calling ``__init__``: the ``__new__`` of the first class of
    its MRO whose ``__new__`` is not written in Python (one written in Python, as Storm's
    ``Tuple`` has, takes arguments of its own). Compiled, a C class takes no other: neither
    ``object.__new__`` nor the ``__new__`` of a base class that is not its nearest C one.

    >>> class Received(Tuple):
    ...     __slots__ = ()
    ...     def __new__(cls, text):
    ...         return _allocator(cls)(cls)
    >>> type(_allocator(Received)(Received)).__name__
    'Received'
    """
    for base in kind.__mro__:
        new = base.__dict__.get("__new__")
        if new is not None and not isinstance(new, staticmethod):
            return new
    return object.__new__  # (object's __dict__ has one: never reached)


class Run:
    """The inputs of one received run (copies that share their anchors, see
    ``heron_core.instance._anchoring``) not yet acked, ``left``: the run's edges go to its trees
    when the last of them is acked. Shared by the Tuples of the run (``_edgerun``)."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


def count_runs(runs: Any) -> int:
    """The number of inputs whose trees ``runs`` holds: a list with one item per run, the
    inputs' anchors (a tuple of (spout task, root key, edge) triples, ``()`` outside any tree)
    for a run of one input, ``[count, anchors]`` for ``count`` > 1 consecutive inputs sharing
    them (what a sender's ``heron_core.instance._anchoring.Runs`` sent).

    Raises:
        ValueError: ``runs`` is not such a list.

    >>> count_runs([((1, 7, 9),), [3, ((1, 8, 5),)], ()])
    5
    """
    if type(runs) is not list:
        raise ValueError(f"a batch's trees are a list of runs, got {type(runs).__name__}")
    listed: list[Any] = runs
    count = 0
    for item in listed:
        if type(item) is tuple:
            count += 1
            continue
        if type(item) is list and len(item) == 2:
            copies, anchors = item[0], item[1]
            if type(copies) is int and copies > 1 and type(anchors) is tuple:
                count += copies
                continue
        raise ValueError(f"a run is a tuple or [count > 1, anchors tuple], got {repr(item)[:80]}")
    return count


def run_of(entry: Any) -> tuple[int, Any]:
    """(copies, anchors) of one item of a batch's runs, which `count_runs` checked: a run of
    one input is its anchors tuple, a longer one ``[count, anchors]``.

    >>> run_of([3, ((1, 8, 5),)]), run_of(((1, 7, 9),))
    ((3, ((1, 8, 5),)), (1, ((1, 7, 9),)))
    """
    if type(entry) is list:
        return entry[0], entry[1]
    return 1, entry


_NEVER = [False]
"""The ``due`` flag of an unpaced loop (never raised)."""


def _serve_nothing() -> None:
    """``InputBatch.serve`` outside an instance: nothing is ever due."""


_COMPILED = not isinstance(_serve_nothing, FunctionType)
"""Whether this module runs compiled (its functions are then C functions). `InputBatch._each`
builds a plain `Tuple` with its constructor there, a direct C call that sets every slot (79 ns
an input against 120 for ``Tuple.__new__`` and the slots one by one); in plain Python that
constructor is a Python call (260 ns against 163), so the plain module keeps the other way."""
