"""The bolt side of an instance: what a native ``Bolt``'s ``emit``, ``ack`` and ``fail``
delegate to."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM, InputBatch, Tuple
from heron_core.api._tuple import count_runs, run_of
from heron_core.errors import UserCodeError
from heron_core.instance._anchoring import Acker, InputCursor
from heron_core.instance._router import HookedRouter, Router


class BoltCollector:
    """A bolt's emits, through the router, anchored as Storm anchors (`Acker`); ``ack``,
    ``fail`` and ``reset_timeout`` are the acker's (the runtime binds them onto the bolt itself
    when its class does not override them, saving a call per tuple). With acking off, anchors
    are ignored.

    ``ack`` and ``fail`` are attributes, so that adding a task hook can put the hooked versions
    in their place once (``heron_core.instance._hooks``), and `hook_emits` puts a
    `HookedRouter` in place of the router: a task without hooks pays nothing for them."""

    def __init__(self, router: Router, acker: Acker) -> None:
        self._router = router
        self._acking = router.acking
        self._acker = acker
        self._ack: Callable[[Tuple], None] = acker.ack if self._acking else acker.count_ack
        # replaced by a hooked version when a task hook is added (emit_and_ack checks)
        self.ack: Callable[[Tuple], None] = self._ack
        self.fail: Callable[[Tuple], None] = acker.fail if self._acking else acker.count_fail

    def hook_emits(self, report: Callable[[Sequence[Any], str, list[int]], None]) -> None:
        """From now on, call ``report(values, stream, tasks)`` after each emit."""
        self._router = HookedRouter(self._router, report)

    def emit(
        self,
        tup: Any,
        stream: str | None = DEFAULT_STREAM,
        anchors: Any = None,
        direct_task: Any = None,
        need_task_ids: Any = False,
    ) -> list[int] | None:
        tree = self._acker.anchored(anchors) if anchors and self._acking else None
        tasks = self._router.emit(tup, stream, direct_task, tree, bool(need_task_ids))
        return tasks if need_task_ids else None

    def emit_many(
        self, rows: Any, stream: str | None = DEFAULT_STREAM, anchors: Any = None
    ) -> None:
        tree = self._acker.anchored(anchors) if anchors and self._acking else None
        self._router.emit_many(rows, stream, tree)

    def emit_and_ack(
        self, batch: InputBatch, outputs: Any, stream: str | None = DEFAULT_STREAM
    ) -> None:
        """Emit ``outputs[i]`` (a list of rows) anchored to input ``i`` of ``batch`` and ack
        every input (see ``Bolt.emit_and_ack``), serving what is due between two inputs.

        Once the batch's Tuples exist, or a task hook reports acks, each input goes through
        its Tuple, as ``emit_many`` and ``ack`` do. Else, with acking on, each input is
        anchored and acked from its trees (`InputTree`, `Acker.ack_input`); with acking off the
        rows go out in one ``emit_many`` per served part and the inputs count in
        ``batch.acked``."""
        inputs = len(batch.values)
        where = self._router.where
        groups: list[Any]  # compiled: indexed as a list, without boxing the index
        if type(outputs) is list:
            groups = outputs
        else:
            if isinstance(outputs, str | bytes) or not isinstance(outputs, Iterable):
                raise UserCodeError(
                    f"{where}: emit_and_ack needs a list with the rows of each input of the "
                    f"batch, got {type(outputs).__name__}"
                )
            groups = list(outputs)
        if len(groups) != inputs:
            raise UserCodeError(
                f"{where}: emit_and_ack got {len(groups)} lists of rows for a batch of "
                f"{inputs} inputs from {batch.component!r} on {batch.stream!r}: give one "
                "list (maybe empty) per input, in the batch's order"
            )
        if batch._settled:
            raise UserCodeError(
                f"{where}: emit_and_ack called twice for one batch from {batch.component!r} "
                f"on {batch.stream!r}: its inputs are acked already"
            )
        tuples: list[Tuple] | None = None
        if batch._tuples is not None or self.ack is not self._ack:
            tuples = batch.tuples()  # (built before the batch counts as settled)
        router = self._router
        route = router.route(stream)  # an undeclared stream raises before anything is acked
        # with acking on, through no Tuple, to a stream that sends nothing: every row checked
        # and counted at once (a bad one raises before anything is acked)
        unsent = tuples is None and batch._trees is not None and router.send_none(route, groups)
        batch._settled = True
        due = batch.due
        count = len(groups)
        if tuples is not None:
            for i in range(count):
                tup = tuples[i]
                self.emit_many(groups[i], stream, (tup,))
                self.ack(tup)
                if due[0]:
                    batch._left = count - i - 1
                    batch.serve()
            return
        trees: Any = batch._trees  # each input's trees; None: acking off (or no instance)
        if trees is None:
            out: list[Any] = []
            for i in range(count):
                rows = groups[i]
                if type(rows) is list:
                    listed: list[Any] = rows
                    for row in listed:  # (compiled: faster than extend, a slice assignment)
                        out.append(row)
                else:
                    out.extend(router._rows(route, rows))
                if due[0]:  # send what was emitted so far first
                    router.emit_many(out, stream, None)
                    out = []
                    batch._left = count - i - 1
                    batch.serve()
            router.emit_many(out, stream, None)
            batch.acked += count
            return
        acker = self._acker
        tree = acker.input_tree
        runs: list[Any] = trees  # the inputs' trees, as runs (see count_runs)
        if count_runs(runs) != count:
            raise ValueError(f"{count} inputs from {batch.component!r} came with other trees")
        i = 0
        copies: int
        roots: Any
        if unsent:  # no children: each run's trees get its edge, once
            for entry in runs:
                copies, roots = run_of(entry)
                if roots:
                    acker.ack_trees(roots, 0)
                i += copies
                if due[0]:
                    batch._left = count - i
                    batch.serve()
            self._count_acked(batch, count)
            return
        for entry in runs:
            copies, roots = run_of(entry)  # (copies > 1: inputs sharing their anchors)
            if roots:
                tree.roots = roots
            for _ in range(copies):
                if roots:
                    tree.pending = 0
                    router.send_rows(route, groups[i], tree)
                    if copies == 1:
                        acker.ack_trees(roots, tree.pending)  # its own edge and its children's
                    elif tree.pending:
                        acker.ack_pending(roots, tree.pending)
                else:  # an input outside any tree: its children are unanchored
                    router.send_rows(route, groups[i], None)
                i += 1
                if due[0]:
                    batch._left = count - i
                    batch.serve()
            if roots and copies > 1:
                acker.ack_trees(roots, 0)  # the run's edges, its last input acked
        self._count_acked(batch, count)

    @staticmethod
    def _count_acked(batch: InputBatch, count: int) -> None:
        """Count ``count`` inputs of ``batch`` acked (its stream's counters)."""
        stats = batch._origin
        if stats is not None:
            stats.acked += count
            stats.received_s += count * batch._received

    def walk(self, batch: InputBatch) -> InputCursor | None:
        """The collector's `InputCursor` on ``batch``, for a front end that settles each input
        for its bolt (see there): None where each input needs its Tuple instead (acking off,
        its Tuples built already, or a task hook that reports acks). Emits anchored to the
        cursor's current input go through `emit_current`."""
        if not self._acking or batch._tuples is not None or self.ack is not self._ack:
            return None
        return self._acker.cursor.start(batch)

    def emit_current(
        self, tup: Any, stream: str | None, direct_task: Any, need_task_ids: Any
    ) -> list[int] | None:
        """`emit` anchored to the current input of the cursor (`walk`)."""
        tasks = self._router.emit(
            tup, stream, direct_task, self._acker.cursor.tree(), bool(need_task_ids)
        )
        return tasks if need_task_ids else None

    def reset_timeout(self, tup: Tuple) -> None:
        """Restart the message timeout of every tree ``tup`` belongs to (Storm's
        resetTimeout)."""
        if self._acking:
            self._acker.reset_timeout(tup)

    def flush(self) -> None:
        """Send what the bolt emitted and acked so far now (Storm's ``flush``), instead of at
        the next flush interval."""
        self._router.flush()
        self._acker.flush()

    def input_anchored(self, general: Callable[..., Any]) -> InputAnchored:
        """An emit anchored to the input being processed, for a front end whose bolts emit so
        (Storm's basic bolts): see `InputAnchored`."""
        return InputAnchored(self, general)


class InputAnchored:
    """Emits anchored to the input a bolt is processing, for a front end whose emits are
    (Storm's ``BasicOutputCollector``): ``anchors`` is ``[input]`` while the bolt processes an
    input, ``[]`` outside any tuple tree (a tick), None before the first input; the front end
    sets it per input.

    `emit` takes ``emit(values)`` straight to the collector (compiled, a direct call: split and
    count bolts emit once per output tuple) and returns the receiving tasks; it hands every
    other call, its arguments as given, to ``general`` (other streams, wrong arguments, no
    input yet)."""

    def __init__(self, collector: BoltCollector, general: Callable[..., Any]) -> None:
        self.anchors: list[Any] | None = None
        self._collector = collector
        self._general = general

    def emit(self, first: Any, *more: Any) -> Any:
        """``emit(values)`` anchored to the input: the receiving tasks' ids. (``first`` is
        required: compiled, an optional first parameter costs a third of the call.)"""
        anchors = self.anchors
        if not more and anchors is not None:
            tasks = self._collector.emit(first, DEFAULT_STREAM, anchors, None, True)
            return [] if tasks is None else tasks
        return self._general(first, *more)
