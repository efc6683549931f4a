"""The in-process streamparse bolt's per-input loop, compiled with the hot path (see
``heron_core/_compiled.py``): the inlined copy of pystorm's ``Bolt._run`` that
`storm_compat.streamparse._adapter` runs over the inputs of a batch, and the state it keeps about
the input being processed.

This module does not import pystorm: what it calls of the component and the adapter comes in
as an argument. Of the kernel it knows the bolt collector and its `InputCursor` (an input
walked without its Tuple), whose methods it calls directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from heron_core.api.constants import DEFAULT_STREAM
from heron_core.instance._anchoring import InputCursor
from heron_core.instance._bolt import BoltCollector

__all__ = ["CURSOR", "AutoAnchoredEmit", "Current", "all_of_length", "run_inputs"]

CURSOR: Final[list[Any]] = []
"""``Current.anchors`` while the input being processed is the current input of the
collector's `InputCursor`: an auto-anchored emit goes to the cursor's emit. (A list, so that
code reading ``anchors`` as a list of anchors still reads a list.)"""

_NEVER_DUE = [False]
"""The pacing flag of inputs that came one by one, not in a batch (never raised)."""


class Current:
    """The input of the running ``process`` call, until it is acked or failed or the call
    returns (then the adapter keeps it in its ``_pending`` by id). Compiled, its fields are C
    fields that the loop of `run_inputs` sets several times per input without a lookup.

    >>> from collections import namedtuple
    >>> now = Current()
    >>> now.current_tups(None), now.id
    ([], None)
    >>> now.received = namedtuple("Tuple", "id values")("7", ["hi"])
    >>> now.native = object()
    >>> now.current_tups(None), now.id
    ([Tuple(id='7', values=['hi'])], '7')
    """

    # None: no input, or settled already; the adapter's _UNBUILT: an input of ``batch``, not
    # settled (acking off: no native Tuple built)
    native: Any
    batch: Any  # the InputBatch being processed
    received: Any  # its pystorm Tuple, from the start to the end of process
    current: Any  # what the component assigned to _current_tups meanwhile
    # with acking on, what an emit without anchors joins while the input is being processed,
    # unsettled, and _current_tups is not assigned (CURSOR: the input the cursor is at); None
    # otherwise
    anchors: Any

    def __init__(self) -> None:
        self.native = None
        self.batch = None
        self.received = None
        self.current = None
        self.anchors = None

    @property
    def id(self) -> Any:
        """The id of the input while it is not settled."""
        return None if self.native is None else self.received.id

    def current_tups(self, component: Any) -> Any:
        """pystorm's ``Bolt._current_tups`` while the inlined loop runs: ``[tup]`` during
        ``process(tup)``, ``[]`` between inputs, unless the component assigned it meanwhile."""
        current = self.current
        if current is None:
            received = self.received
            return [] if received is None else [received]
        return current

    def assign_current_tups(self, component: Any, tups: Any) -> None:
        self.current = tups
        self.anchors = None


class AutoAnchoredEmit:
    """pystorm's ``Bolt.emit`` with acking on, as the component's ``emit``: an emit without
    ``anchors`` while an input is being processed, unsettled and ``_current_tups`` not
    assigned (``now.anchors`` is then what auto-anchoring joins) goes straight to ``emit``
    (the native collector's, which checks the rest), or to the ``emit_current`` of
    ``walker`` (the collector whose cursor walks the batch) when those anchors are `CURSOR`;
    every other emit goes to ``general`` with the same arguments. Compiled, it is a C object:
    no Python frame per emit, and a direct C call of ``emit_current``.

    >>> now, calls = Current(), []
    >>> emit = AutoAnchoredEmit(now, lambda *a: calls.append(("emit", a)),
    ...                         lambda *a: calls.append(("general", a)), None)
    >>> now.anchors = ["native"]
    >>> emit(["w"]); emit(["w"], anchors=[])
    >>> calls[0], calls[1]
    (('emit', (['w'], 'default', ['native'], None, False)), \
('general', (['w'], 'default', [], None, False)))
    """

    def __init__(
        self,
        now: Current,
        emit: Callable[..., Any],
        general: Callable[..., Any],
        walker: BoltCollector | None,
    ) -> None:
        self.now = now
        self.emit = emit
        self.general = general
        self.walker = walker

    def __call__(
        self,
        tup: Any,
        stream: Any = DEFAULT_STREAM,
        anchors: Any = None,
        direct_task: Any = None,
        need_task_ids: bool = False,
    ) -> Any:
        if anchors is None:
            natives = self.now.anchors
            if natives is CURSOR:
                walker = self.walker
                if walker is not None:
                    return walker.emit_current(tup, stream, direct_task, need_task_ids)
            if natives is not None:
                return self.emit(tup, stream, natives, direct_task, need_task_ids)
        return self.general(tup, stream, anchors, direct_task, need_task_ids)


def all_of_length(rows: Sequence[Any], arity: int) -> bool:
    """Whether every row of ``rows`` holds ``arity`` values (a C loop, compiled: about a tenth
    of ``all(map(arity.__eq__, map(len, rows)))``).

    >>> all_of_length([["a"], ["b"]], 1), all_of_length([["a"], ["b", 2]], 1)
    (True, False)
    """
    return all(len(row) == arity for row in rows)


def run_inputs(
    now: Current,
    component: Any,
    received_all: Iterable[Any],
    natives: Iterable[Any],
    batch: Any,
    acking: bool,
    own_ack: bool,
    unbuilt: Any,
    ack: Callable[[Any], None],
    keep: Callable[[Any, Any], None],
    failed: Callable[[Exception], None],
    cursor: InputCursor | None = None,
) -> None:
    """pystorm's ``Bolt._run`` for each input: ``component.process`` with its pystorm Tuple
    (of ``received_all``) and, unless the component settled it meanwhile, auto-ack.

    Each input's native Tuple comes from ``natives``: ``unbuilt`` for an input of ``batch``
    with acking off; ``cursor`` for an input of ``batch`` with acking on walked without its
    Tuple (the cursor moves to it as its processing starts, and ``now.anchors`` is `CURSOR`;
    what needs the Tuple, such as an explicit anchor, has the cursor build it and puts it in
    ``now.native``). The common case (pystorm's own ``ack``, ``auto_ack`` on, not settled
    during ``process``) acks through ``ack``, through the cursor, or, for an unbuilt input,
    counts it in ``batch.acked``; an input neither acked nor failed by the end of its
    ``process`` call, or whose call raised, is handed to ``keep(now.native, received)`` (kept
    by id for a later ack, or pystorm's auto-fail); an exception goes to ``failed`` (which may
    end the task: the inputs counted so far are still added to ``batch.acked``). With
    ``acking``, ``auto_anchor`` is read once per input, as its processing starts.
    ``now.batch`` is ``batch`` meanwhile (None again afterwards)."""
    acked = 0
    now.batch = batch
    if batch is not None:
        due: list[bool] = batch.due
        serve: Any = batch.serve
    else:
        due = _NEVER_DUE
        serve = None
    try:
        for received, native in zip(received_all, natives, strict=False):  # natives may repeat
            if due[0]:
                serve()  # the runtime's pacing: between two inputs, serve what is due
            now.received = received
            now.native = native
            if acking:
                if native is cursor and cursor is not None:
                    cursor.next()
                    now.anchors = CURSOR if component.auto_anchor else []
                else:
                    now.anchors = [native] if component.auto_anchor else []
            try:
                component.process(received)
                if now.native is native and own_ack and component.auto_ack:  # the common case
                    now.native = None
                    now.received = None
                    now.current = None
                    now.anchors = None
                    if native is cursor and cursor is not None:
                        cursor.ack()
                    elif native is unbuilt:
                        acked += 1
                    else:
                        ack(native)
                    continue
                if component.auto_ack:
                    component.ack(received)
            except Exception as exc:
                now.anchors = None
                if now.native is not None:  # kept by id, for pystorm's auto-fail
                    keep(now.native, received)
                    now.native = None
                failed(exc)  # _current_tups stays [received] until the next input
                now.current = None
                continue
            now.received = None
            now.current = None
            now.anchors = None
            if now.native is not None:  # neither acked nor failed: keep it by id
                keep(now.native, received)
                now.native = None
    finally:  # also when failed() ends the task
        now.batch = None
        if batch is not None:
            batch.acked += acked
