"""The Storm bolt adapters' per-input step, compiled with the hot path (see
``heron_core/_compiled.py``): what `storm_compat.topology._adapters` runs for each input of a
batch before and after the user's ``execute``. Compiled, it is a C method called by the
batch's (compiled) loop: no Python frame per input besides the user's own.

This module imports neither the instance nor the adapters: what it calls comes in as
arguments. It takes the inputs as `TypedTuple` s (the compiled base of Storm's ``Tuple``),
whose two fields it sets are then C struct fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from storm_compat.tuple._typed import TypedTuple

__all__ = ["Execute"]


class Execute:
    """Runs a Storm bolt's ``execute`` on one input (`run`), the input's stream having the
    fields `fields` (set by the adapter once per batch).

    Every input first gets its stream's fields and is marked unsettled. A rich bolt's
    ``execute(input)`` (``collector`` None) is then called and nothing else. A basic bolt's
    ``execute(input, collector)`` gets the input as its anchor (``current[0]``, the one list
    its collector anchors emits to) and, once it returns, the input is acked: through
    ``settle`` when the bolt settled it meanwhile or ``ack`` is None (``settle`` warns or logs),
    else straight through ``ack``. When it raises ``failed`` (Storm's ``FailedException``),
    ``on_failed(input, exception)`` is called instead.

    >>> from storm_compat.tuple import Fields, Tuple
    >>> def execute(tup, collector):
    ...     print("execute", tup.values, tup._schema, tup._done, collector)
    >>> def ack(tup):
    ...     print("ack", tup.values, tup._done)
    >>> step = Execute(execute, "basic", [None], ack, print, ValueError, print)
    >>> step.fields = Fields("sentence")
    >>> step.run(Tuple.of(["a b"], Fields("other")))
    execute ['a b'] Fields('sentence') False basic
    ack ['a b'] True
    """

    fields: Any  # Fields

    def __init__(
        self,
        execute: Callable[..., Any],
        collector: Any,
        current: list[Any],
        ack: Callable[[Any], Any] | None,
        settle: Callable[[Any], Any],
        failed: type[BaseException],
        on_failed: Callable[[Any, Any], Any],
    ) -> None:
        self.fields = None
        self._execute = execute
        self._collector = collector
        self._current = current
        self._ack = ack
        self._settle = settle
        self._failed = failed
        self._on_failed = on_failed

    def run(self, tup: TypedTuple) -> None:
        """Execute ``tup`` (an input of a stream with `fields`), then settle it."""
        tup._schema = self.fields
        tup._done = False
        collector = self._collector
        if collector is None:
            self._execute(tup)
            return
        self._current[0] = tup  # never a tick here: ticks go to the adapter's process_tick
        try:
            self._execute(tup, collector)
        except Exception as exc:
            if not isinstance(exc, self._failed):
                raise
            self._on_failed(tup, exc)
            return
        ack = self._ack
        if tup._done or ack is None:
            self._settle(tup)
        else:
            tup._done = True
            ack(tup)
