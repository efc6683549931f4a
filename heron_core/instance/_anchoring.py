"""Anchoring: the XOR bookkeeping of tuple trees inside an instance, in one place.

Storm's scheme, as Heron keeps it. A tree is named by its spout task and a random 64-bit root key.
Every copy of a tuple sent to a task is an *edge* of each tree it belongs to, with a random
64-bit id (never 0). The stream manager of the spout's container XORs, per tree, every edge id it
hears of: the spout's *init* (the XOR of the edges of the tuple it emitted) and each bolt's *ack*
of an input (the input's edge XOR the edges of the children it anchored to that input). Each
edge is XORed in twice, once when created and once when its tuple is acked, so the tree is
complete when its value comes back to 0.

Here:

- :class:`EdgeIds` draws the random root keys and edge ids;
- :class:`SpoutTree` roots a tree for a spout emit and gives each copy its edge;
- :class:`Anchored` gives each copy of a bolt's emit one edge per anchor, XORed into the anchor's
  pending value (``Tuple._ackval``) and merged per tree;
- :class:`InputTree` does the same for an input without a Tuple (a batch's inputs acked whole);
- :class:`Acker` settles an input: on ack, ``edge ^ pending`` goes to each of its trees; on fail,
  each tree fails.

**Runs.** Copies sent one after another to the same task with the same anchors (the words a
split bolt emits anchored to one sentence, the outputs of the inputs of one run) share one
edge per tree: a *run*. The sender XORs the run's edge into the anchors' pending values once,
at the run's first copy, and sends the run as one entry (:class:`Runs`); the receiving
instance XORs it into the trees once, when the last copy of the run is acked (a received
Tuple's ``_edgerun``, a `heron_core.api._tuple.Run`; ``Acker.ack_input``; `Bolt.emit_and_ack`
settles a whole run at once). So the tree still comes back to 0 exactly when every copy was
acked, and a run of ``n`` copies costs one edge, one anchors entry and one ack of its edge
instead of ``n``. A run never spans two batches (a flush ends it), so nothing outside one
received batch has to be waited for; where a batch must be split (`split_runs`), its runs'
edges are split into one edge per copy that XOR to the run's edge.

The router (`heron_core.instance._router`) hands each copy it sends to the destination's
`Runs` with the emit's `Tree` (``Runs.add``), after it has chosen the destinations, so an emit
that fails its checks changes no tree.

On the wire (``TupleBatch.roots``, marshal), a batch's anchors are a list with one item per
run: a copy's anchors tuple for a run of one copy (``()``: unanchored), or ``[count,
anchors]`` for a run of ``count`` copies; the receiving `InputBatch` keeps that list as its
inputs' trees (``heron_core.api._tuple.count_runs`` checks it).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable
from typing import Any, Final

from heron_core.api import InputBatch, Tuple
from heron_core.api._tuple import Run, count_runs, run_of
from heron_core.errors import UserCodeError, shown
from heron_core.instance._acking import AckSender, Id, InFlight

Anchors = tuple[tuple[int, Id, Id], ...]
"""(spout task, root key, edge value) of each tree one tuple copy belongs to (a tuple: on the
wire, a list is a run)."""

_POOL: Final = 512
"""Ids drawn per call to the generator."""


class EdgeIds:
    """Random 64-bit ids, never 0 (root keys and edges), drawn from ``bits``
    (``random.getrandbits`` unless a test passes a seeded generator's) `_POOL` at a time: a
    call of the generator per 512 ids instead of one per id."""

    __slots__ = ("_bits", "_pool")

    def __init__(self, bits: Callable[[int], int] = random.getrandbits) -> None:
        self._bits = bits
        self._pool: list[Id] = []

    def next(self) -> Id:
        """The next id."""
        pool = self._pool
        if not pool:
            raw = self._bits(64 * _POOL).to_bytes(8 * _POOL, "little")
            pool = self._pool = list(struct.unpack(f"<{_POOL}Q", raw))
        return pool.pop() or 1


_WARN_ACKED = "anchored a new tuple to a tuple already acked or failed"
_WARN_TWICE = "acked or failed the same tuple twice; ignored"


class InputStats:
    """Ack and fail counts and summed process time (s, receipt to ack or fail) of the tuples a
    bolt received on one (source component, stream); each received Tuple's ``_origin``.

    An ack or fail only adds the tuple's receipt time to ``received_s``, without reading the
    clock; :meth:`settle`, called after each batch and tick, counts them done at that time. So
    the process latency is measured to the end of the batch in which the ack happened (about a
    millisecond late at most), for a clock read per batch instead of per tuple.

    Compiled, its fields are C fields: `Acker.count_ack` (acking off, once per input)
    adds to them without a dictionary or descriptor lookup.
    """

    __slots__ = ("acked", "failed", "process_s", "received_s", "settled")

    acked: int
    failed: int
    process_s: float
    received_s: float
    settled: int  # acks and fails counted into process_s

    def __init__(self) -> None:
        self.acked = 0
        self.failed = 0
        self.process_s = 0.0
        self.received_s = 0.0
        self.settled = 0

    def settle(self, now: float) -> None:
        new = self.acked + self.failed - self.settled
        if new:
            self.process_s += new * now - self.received_s
            self.received_s = 0.0
            self.settled += new


class Tree:
    """The anchors of the copies of one emit (a base: `Runs.add` calls ``run_key`` and
    ``copy``)."""

    __slots__ = ()

    def copy(self) -> Anchors:
        """The anchors of one more copy of the tuple, with new edges (one run more)."""
        raise NotImplementedError

    def run_key(self) -> Any:
        """What the run of a copy is known by: the next copy to the same task whose tree has
        the same key (``is``) joins the run instead of taking new edges; None: every copy
        starts a run of its own."""
        return None


class SpoutTree(Tree):
    """The tree a spout's emit with a message id roots: one per collector, restarted by
    :meth:`start` for each emit (the instance is single-threaded and an emit never nests).

    An emit that goes to exactly one task (``start(one=True)``, which the router knows from
    the stream's groupings) roots its tree at an odd key and gives its copy the root key as
    edge: the tree's first value is then its own key, which the tracker assumes for an odd key
    it has not seen (``heron_core.stmgr._trees``), so no *init* is sent for it. An emit that
    may go to several tasks roots an even key and sends its init, the XOR of its copies'
    edges, as Storm's spout does."""

    __slots__ = ("_acks", "_ids", "_in_flight", "copies", "root", "spout_task", "value")

    def __init__(self, spout_task: int, acks: AckSender, in_flight: InFlight, ids: EdgeIds) -> None:
        self.spout_task = spout_task
        self._acks = acks
        self._in_flight = in_flight
        self._ids = ids
        self.root: Id = 0
        self.value: Id = 0
        self.copies = 0

    def start(self, one: bool = False) -> SpoutTree:
        """A new tree (a new root key, no copies yet); ``one``: its emit goes to one task."""
        root = self._ids.next()
        self.root = root | 1 if one else (root & ~1) or 2
        self.value = 0
        self.copies = 0
        return self

    def copy(self) -> Anchors:
        root = self.root
        if root & 1:  # the only copy of an emit to one task: its edge is the root key
            if self.copies:
                raise AssertionError("an emit to one task was sent to a second task")
            edge = root
        else:
            edge = self._ids.next()
        self.value ^= edge
        self.copies += 1
        return ((self.spout_task, root, edge),)

    def commit(self, msg_id: Any, stream: str) -> bool:
        """Track the tree once its copies are sent (the message id in flight, and for an even
        root its *init* to the stream manager); False when no copy was sent: the tree is
        complete already."""
        if not self.copies:
            return False
        root = self.root
        self._in_flight.add(root, msg_id, stream)
        if not root & 1:  # (an odd root's first value is the root key: no init)
            self._acks.init(self.spout_task, root, self.value)
        return True


def _edges(roots: Any, edge: Id) -> Anchors:
    """The anchors of a copy whose one anchor belongs to the trees ``roots`` (a Tuple's
    ``_roots``): ``edge`` in each of them."""
    if type(roots) is tuple and len(roots) == 1:  # one tree: typed tuple reads, compiled
        root = roots[0]
        if type(root) is tuple:
            return ((root[0], root[1], edge),)
    return tuple([(spout_task, root, edge) for spout_task, root, _ in roots])


class InputTree(Tree):
    """The anchors of emits anchored to one input that has no Tuple (`BoltCollector.
    emit_and_ack`): the input's trees, ``roots`` (what its Tuple's ``_roots`` would hold,
    never empty), and the XOR of the edges of the copies made so far, ``pending`` (its
    ``_ackval``). One per acker, pointed at each input in turn."""

    __slots__ = ("_ids", "pending", "roots")

    def __init__(self, ids: EdgeIds) -> None:
        self._ids = ids
        self.roots: Any = ()
        self.pending: Id = 0

    def copy(self) -> Anchors:
        edge = self._ids.next()
        self.pending ^= edge
        return _edges(self.roots, edge)

    def run_key(self) -> Any:
        """The input's trees: the same object for every input of one received run, so the
        copies of their outputs to one task form one run, whose edges the first of them
        carries in its ``pending``. Each tree still gets every edge twice: once from that
        input's ack, once when the last copy of the run is acked downstream."""
        return self.roots


class Anchored(Tree):
    """The anchors of a bolt's emit: per copy, one new edge per live anchor. One per acker,
    pointed at each anchored emit's anchors by `Acker.anchored` (an emit never nests). Which
    of them are live is sorted out at the emit's first copy, so an emit that goes to no task
    (a stream nobody subscribes to) never looks at its anchors, as in Storm, whose executor
    walks the anchors once per receiving task."""

    __slots__ = ("_acker", "_anchors", "_ids", "_live", "_one")

    def __init__(self, acker: Acker, ids: EdgeIds) -> None:
        self._acker = acker
        self._ids = ids
        self._anchors: Any = None  # the emit's anchors, until its first copy sorts them
        self._one: Tuple | None = None  # the only live anchor (the usual case)
        self._live: list[Tuple] = []  # else: every live anchor

    def _sort(self) -> None:
        anchors, self._anchors = self._anchors, None
        acker = self._acker
        one: Any  # checked by _live: a user's emit may anchor to anything
        if isinstance(anchors, Tuple):
            one = anchors
        elif (type(anchors) is list or type(anchors) is tuple) and len(anchors) == 1:
            one = anchors[0]  # the usual case: no list of live anchors to build
        else:
            chosen = [anchor for anchor in anchors if acker._live(anchor)]
            self._one, self._live = (chosen[0], []) if len(chosen) == 1 else (None, chosen)
            return
        self._one = one if acker._live(one) else None
        if self._live:
            self._live = []

    def run_key(self) -> Any:
        """The trees of the only live anchor, as `InputTree` has it (the copies of emits
        anchored to the inputs of one received run form a run), the unanchored key when no
        anchor is live, else None (several anchors: no run)."""
        if self._anchors is not None:
            self._sort()
        one = self._one
        if one is not None:
            return one._roots
        return UNANCHORED if not self._live else None

    def copy(self) -> Anchors:
        if self._anchors is not None:
            self._sort()
        anchor = self._one
        if anchor is not None:
            edge = self._ids.next()
            anchor._ackval ^= edge
            return _edges(anchor._roots, edge)
        if not self._live:
            return ()  # no live anchor: an unanchored copy
        ids = self._ids
        merged: dict[tuple[int, Id], Id] = {}
        for anchor in self._live:
            edge = ids.next()
            anchor._ackval ^= edge
            for spout_task, root, _ in anchor._roots:
                merged[(spout_task, root)] = merged.get((spout_task, root), 0) ^ edge
        return tuple([(spout_task, root, value) for (spout_task, root), value in merged.items()])


UNANCHORED: Final = object()
"""The run key of unanchored copies (anchors ``()``): consecutive ones to a task form one
run."""


class Runs:
    """The anchors of the copies buffered for one destination task, as runs (see the module's
    docstring): `take` gives what the batch's ``roots`` carry. One per (stream, destination),
    emptied by `take` when the batch is sent. The open run is kept as its anchors and a
    count (compiled, a C integer: a copy that joins it costs an increment)."""

    __slots__ = ("anchors", "count", "items", "key")

    def __init__(self) -> None:
        self.items: list[Any] = []  # the runs before the open one
        self.key: Any = None  # the open run's key (None: no run to join)
        self.anchors: Any = ()  # the open run's anchors
        self.count = 0  # its copies (0: no open run)

    def add(self, tree: Tree | None) -> None:
        """One more copy, anchored by ``tree`` (None: unanchored): it joins the open run when
        its tree has the run's key, else starts a run with new edges (``tree.copy()``)."""
        key = UNANCHORED if tree is None else tree.run_key()
        if key is not None and key is self.key:
            self.count += 1
            return
        if self.count:
            self._close()
        self.key = key
        self.anchors = () if tree is None else tree.copy()
        self.count = 1

    def _close(self) -> None:
        count = self.count
        self.items.append(self.anchors if count == 1 else [count, self.anchors])

    def take(self) -> list[Any]:
        """The runs so far (for the batch being sent); the next copy starts a new run."""
        if self.count:
            self._close()
        items = self.items
        self.items = []
        self.key = None
        self.anchors = ()
        self.count = 0
        return items


_SPLIT_IDS: Final = EdgeIds()
"""The edges `split_runs` draws."""


def split_runs(items: list[Any]) -> list[Anchors]:
    """Each copy's own anchors, from the runs ``items`` (`Runs.take`): for a batch that goes
    out in parts, where a run must not span two batches. The copies of a run get one new
    edge each (the same in every tree of the run), the last one what makes each tree's edges
    XOR to the run's, so the trees complete as the run would have."""
    copies: list[Anchors] = []
    for item in items:
        if type(item) is not list:
            copies.append(item)
            continue
        count, anchors = item
        if not anchors:
            copies.extend([()] * count)
            continue
        rest = list(anchors)
        for _ in range(count - 1):
            edge = _SPLIT_IDS.next()
            copies.append(tuple([(spout_task, root, edge) for spout_task, root, _ in anchors]))
            rest = [(spout_task, root, value ^ edge) for spout_task, root, value in rest]
        copies.append(tuple(rest))
    return copies


class Acker:
    """A bolt's trees: which emits are anchored, and acking or failing its inputs.

    Anchoring to, acking or failing a tuple already acked or failed is ignored with a warning
    (Storm would corrupt the tree). With acking off, ``count_ack`` and ``count_fail`` stand for
    ``ack`` and ``fail``: they only count the input.
    """

    def __init__(
        self,
        acks: AckSender,
        where: str,
        warn: Callable[[str], None],
        ids: EdgeIds | None = None,
    ) -> None:
        self._where = where
        self._acks = acks
        self._warn = warn
        self._maps: dict[int, dict[Id, Id]] = {}  # spout task -> AckSender.acks_of(task)
        self._last_task = -1  # the spout task of the last ack, and its map
        self._last_acks: dict[Id, Id] = {}
        ids = ids if ids is not None else EdgeIds()
        self._tree = Anchored(self, ids)
        self.input_tree = InputTree(ids)
        self.cursor = InputCursor(self, ids)

    def anchored(self, anchors: Any) -> Anchored:
        """The tree of an emit anchored to ``anchors`` (a Tuple or a sequence of them); its
        copies are unanchored when none of them belongs to a live tree."""
        tree = self._tree
        tree._anchors = anchors
        return tree

    def _live(self, anchor: Any) -> bool:
        """Whether ``anchor`` belongs to a tree and is not settled yet (warned if settled);
        raises unless it is a Tuple."""
        if not isinstance(anchor, Tuple):
            raise UserCodeError(
                f"{self._where}: anchors must be input Tuples of this bolt, got "
                f"{type(anchor).__name__} {shown(anchor, 100)}"
            )
        if anchor._ackval is None:
            self._warn(_WARN_ACKED)
            return False
        return bool(anchor._roots)

    def ack(self, tup: Tuple) -> None:
        """Ack ``tup``: its edge XOR its children's edges goes to each of its trees."""
        pending = tup._ackval
        if pending is None:
            self._warn(_WARN_TWICE)
            return
        tup._ackval = None
        self.ack_input(tup._roots, tup._edgerun, pending)
        self.count_ack(tup)

    def ack_input(self, roots: Any, run: Run | None, pending: Id) -> None:
        """Ack an input of the trees ``roots`` whose children's edges XOR to ``pending``, of
        the received run ``run`` (None: a run of one copy, the input's own edge): ``pending``
        goes to each tree now, the run's edge once this is the run's last copy acked."""
        if run is None:
            self.ack_trees(roots, pending)
            return
        left = run.left - 1
        run.left = left
        if not left:
            self.ack_trees(roots, pending)
        elif pending:
            self.ack_pending(roots, pending)

    def ack_pending(self, roots: Any, pending: Id) -> None:
        """XOR ``pending`` (children's edges) into each of the trees ``roots``."""
        one = roots[0] if type(roots) is tuple and len(roots) == 1 else None
        if type(one) is tuple:
            self._ack_tree(one[0], one[1], pending)
        else:
            for spout_task, root, _ in roots:
                self._ack_tree(spout_task, root, pending)

    def ack_trees(self, roots: Any, pending: Id) -> None:
        """Ack an input of the trees ``roots`` whose children's edges XOR to ``pending``: its
        edge XOR ``pending`` goes to each tree."""
        one = roots[0] if type(roots) is tuple and len(roots) == 1 else None
        if type(one) is tuple:  # one tree (the usual case): typed tuple reads, compiled
            # pending is 0 for an input without children (a new int saved)
            self._ack_tree(one[0], one[1], one[2] ^ pending if pending else one[2])
        else:
            for spout_task, root, value in roots:
                self._ack_tree(spout_task, root, value ^ pending)

    def _ack_tree(self, spout_task: int, root: Id, value: Id) -> None:
        """XOR ``value`` into the ack entry of ``spout_task``'s tree ``root``."""
        acks = self._last_acks
        if spout_task != self._last_task:  # else the same spout task as the last ack (usual)
            found = self._maps.get(spout_task)
            if found is None:
                found = self._maps[spout_task] = self._acks.acks_of(spout_task)
            acks = self._last_acks = found
            self._last_task = spout_task
        old = acks.get(root)
        acks[root] = value if old is None else old ^ value

    def fail(self, tup: Tuple) -> None:
        """Fail ``tup``: each of its trees fails."""
        if tup._ackval is None:
            self._warn(_WARN_TWICE)
            return
        tup._ackval = None
        for spout_task, root, _ in tup._roots:
            self._acks.fail(spout_task, root)
        self.count_fail(tup)

    def reset_timeout(self, tup: Tuple) -> None:
        """Restart the message timeout of every tree ``tup`` belongs to (Storm's
        resetTimeout)."""
        for spout_task, root, _ in tup._roots:
            self._acks.reset(spout_task, root)

    def flush(self) -> None:
        """Send the buffered acking entries (see `AckSender.flush`)."""
        self._acks.flush()

    @staticmethod
    def count_ack(tup: Tuple) -> None:
        """Count ``tup`` acked (its input stream's counters)."""
        stats: InputStats | None = tup._origin
        if stats is not None:
            stats.acked += 1
            stats.received_s += tup._received

    @staticmethod
    def count_fail(tup: Tuple) -> None:
        """Count ``tup`` failed (its input stream's counters)."""
        stats: InputStats | None = tup._origin
        if stats is not None:
            stats.failed += 1
            stats.received_s += tup._received


class InputCursor(InputTree):
    """The inputs of one batch with acking on, walked one at a time without a Tuple each, for
    a front end that hands its bolt one input at a time and settles it for the bolt (the
    in-process streamparse bolt's auto-anchoring and auto-ack): what `InputBatch._each` and the
    Tuple path would do, without building a Tuple per input.

    `start` points it at a batch, `next` at the batch's next input (its *current* input, in
    arrival order). While the current input is not settled, an emit anchored to it takes the
    cursor as its tree (`tree`; the cursor is the `InputTree` of that input: its trees and the
    XOR of its children's edges), `ack` and `fail` settle it as `Acker.ack` and `Acker.fail`
    would settle its Tuple, run edges included. `tuple` builds the current input's Tuple with
    the state so far, for an input that is named as an anchor or outlives its turn; from then
    on that Tuple is the input (`tree`, `ack` and `fail` go through it, and so may anything
    else). One per acker (`Acker.cursor`): a bolt walks one batch at a time."""

    __slots__ = (
        "_acker",
        "_batch",
        "_index",
        "_left",
        "_next_run",
        "_received",
        "_run",
        "_runs",
        "_stats",
        "built",
    )

    def __init__(self, acker: Acker, ids: EdgeIds) -> None:
        super().__init__(ids)
        self._acker = acker
        self._batch: InputBatch | None = None  # the batch walked
        self._stats: InputStats | None = None  # its stream's counters, and its receipt time
        self._received = 0.0
        self._runs: list[Any] = []  # its trees, as runs (count_runs)
        self._next_run = 0  # the index in _runs of the next run
        self._left = 0  # the inputs of the current run after the current input
        self._run: Run | None = None  # the current run's counter (None: a run of one)
        self._index = -1  # the current input's index in the batch
        self.pending = None  # None: no current input, or settled
        self.built: Tuple | None = None  # the current input's Tuple, once `tuple` built it

    def start(self, batch: InputBatch) -> InputCursor:
        """Walk ``batch`` (an `InputBatch` with acking on, whose Tuples were not built):
        `next` moves to its first input. The batch's Tuples are not to be built after this
        (`InputBatch.tuples` then gives them settled, as after ``emit_and_ack``)."""
        runs: Any = batch._trees
        if runs is None:
            raise ValueError(f"a batch from {batch.component!r} without tuple trees to walk")
        if count_runs(runs) != len(batch.values):
            raise ValueError(
                f"{len(batch.values)} inputs from {batch.component!r} on {batch.stream!r} "
                f"came with {count_runs(runs)} tuple trees"
            )
        batch._settled = True
        self._batch = batch
        self._stats = batch._origin
        self._received = batch._received
        self._runs = runs
        self._next_run = 0
        self._left = 0
        self._run = None
        self._index = -1
        self.roots = ()
        self.pending = None
        self.built = None
        return self

    def next(self) -> None:
        """Move to the next input of the batch; raises IndexError past its last one."""
        if not self._left:
            at = self._next_run
            runs = self._runs
            if at >= len(runs):
                raise IndexError("InputCursor.next past the last input of its batch")
            self._next_run = at + 1
            copies, roots = run_of(runs[at])
            self._left = copies
            self.roots = roots
            self._run = Run(copies) if copies > 1 and roots else None
        self._left -= 1
        self._index += 1
        self.pending = 0
        self.built = None

    def tree(self) -> Tree | None:
        """The tree of an emit anchored to the current input: the cursor, the Tuple's once
        built, None (unanchored copies) for an input outside any tree, or settled (warned)."""
        built = self.built
        if built is not None:
            return self._acker.anchored(built)
        if self.pending is None:
            self._acker._warn(_WARN_ACKED)
            return None
        return self if self.roots else None

    def tuple(self) -> Tuple:
        """The current input's Tuple: built with its trees, its run and the edges of its
        children so far (settled already if the input is), or the one built before."""
        built = self.built
        if built is None:
            batch = self._batch
            assert batch is not None
            built = batch._bare(self._index)
            built._roots = self.roots
            built._edgerun = self._run
            built._ackval = self.pending
            self.pending = None  # from now on the Tuple holds it
            self.built = built
        return built

    def ack(self) -> None:
        """Ack the current input (see `Acker.ack`)."""
        built = self.built
        if built is not None:
            self._acker.ack(built)
            return
        pending = self.pending
        if pending is None:
            self._acker._warn(_WARN_TWICE)
            return
        self.pending = None
        self._acker.ack_input(self.roots, self._run, pending)
        stats = self._stats
        if stats is not None:
            stats.acked += 1
            stats.received_s += self._received

    def fail(self) -> None:
        """Fail the current input's trees (see `Acker.fail`)."""
        if self.built is None:
            self.tuple()  # (settled already: the Tuple warns, as a second fail would)
        built = self.built
        assert built is not None
        self._acker.fail(built)
