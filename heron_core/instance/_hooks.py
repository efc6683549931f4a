"""Task hooks inside an instance: the hooks of the task, and the hooked paths installed in
place of the plain ones when the first hook is added.

A task without hooks pays nothing per tuple: nothing here runs, and no path tests for hooks.
Adding the first hook puts, once, a ``HookedRouter`` (``heron_core.instance._router``) in the
collector, which reports each emit, and `hooked_settle` wrappers in place of the collector's
``ack`` and ``fail`` attributes (and of the copies the runtime bound onto the component);
once ``initialize`` has returned, the bolt's ``process``, ``process_tick`` and
``process_batch`` are wrapped too. Spout acks and fails are reported by the runtime where it
calls the spout (per ack batch, not per tuple).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from heron_core.api import InputBatch, Tuple
from heron_core.api._hooks import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    SpoutAckInfo,
    SpoutFailInfo,
    TaskHook,
)
from heron_core.errors import UserCodeError
from heron_core.plugins import resolve_class

if TYPE_CHECKING:
    from heron_core.api import TopologyContext

_perf = time.perf_counter


class TaskHooks:
    """The hooks of one task, in registration order, and the calls that invoke them.

    Args:
        task_id: the task (every info record names it).
        where: names the topology, component and task in messages.
        clock: seconds, the clock tuples' arrival times are read on (``perf_counter``).

    >>> from heron_core.api.hooks import TaskHook
    >>> class Printing(TaskHook):
    ...     def emit(self, info):
    ...         print(info)
    >>> hooks = TaskHooks(4, "task 4")
    >>> hooks.add(Printing())
    >>> hooks.emit(["a"], "default", [7])
    EmitInfo(values=['a'], stream_id='default', task_id=4, out_tasks=[7])
    """

    def __init__(self, task_id: int, where: str, clock: Callable[[], float] = _perf) -> None:
        self.task_id = task_id
        self.where = where
        self.clock = clock
        self.hooks: list[TaskHook] = []
        self._prepared = 0  # hooks[:_prepared] had their prepare called

    def add(self, hook: TaskHook) -> None:
        if not isinstance(hook, TaskHook):
            raise TypeError(
                f"{self.where}: add_task_hook takes a heron_core.api.hooks.TaskHook (heronpy's "
                f"ITaskHook), got {type(hook).__qualname__}"
            )
        self.hooks.append(hook)

    def prepare(self, conf: dict[str, Any], context: TopologyContext) -> None:
        """Call ``prepare`` of each hook not prepared yet."""
        while self._prepared < len(self.hooks):
            hook = self.hooks[self._prepared]
            self._prepared += 1
            hook.prepare(conf, context)

    def clean_up(self) -> None:
        for hook in self.hooks:
            hook.clean_up()

    def emit(self, values: Any, stream: str, out_tasks: list[int]) -> None:
        info = EmitInfo(values, stream, self.task_id, out_tasks)
        for hook in self.hooks:
            hook.emit(info)

    def spout_acked(self, done: Iterable[tuple[Any, str, float]], now: float) -> None:
        """Report the trees of ``done`` (message id, stream, emit time on the instance's
        clock) completed at ``now``."""
        for msg_id, _, start in done:
            info = SpoutAckInfo(msg_id, self.task_id, (now - start) * 1000.0)
            for hook in self.hooks:
                hook.spout_ack(info)

    def spout_acked_at_once(self, msg_id: Any) -> None:
        """Report the tree of ``msg_id`` complete as soon as emitted (acking off, or an emit
        that reached nobody)."""
        info = SpoutAckInfo(msg_id, self.task_id, 0.0)
        for hook in self.hooks:
            hook.spout_ack(info)

    def spout_failed(self, msg_id: Any, latency_ms: float | None) -> None:
        info = SpoutFailInfo(msg_id, self.task_id, latency_ms)
        for hook in self.hooks:
            hook.spout_fail(info)

    def bolt_executed(self, tup: Tuple, latency_ms: float) -> None:
        info = BoltExecuteInfo(tup, self.task_id, latency_ms)
        for hook in self.hooks:
            hook.bolt_execute(info)

    def bolt_acked(self, tup: Tuple) -> None:
        info = BoltAckInfo(tup, self.task_id, (self.clock() - tup._received) * 1000.0)
        for hook in self.hooks:
            hook.bolt_ack(info)

    def bolt_failed(self, tup: Tuple) -> None:
        info = BoltFailInfo(tup, self.task_id, (self.clock() - tup._received) * 1000.0)
        for hook in self.hooks:
            hook.bolt_fail(info)


def auto_hook_classes(names: Sequence[Any], where: str) -> list[type]:
    """The classes ``topology.auto.task.hooks`` names (each ``package.module:Class`` or
    ``package.module.Class``), resolved: at submit, so a bad entry fails there rather than in
    every instance, and again in each instance.

    Raises:
        UserCodeError: an entry is not a string, or does not resolve to a class.
    """
    classes = []
    for name in names:
        setting = f"{where}: topology.auto.task.hooks entry {name!r}"
        if not isinstance(name, str):
            raise UserCodeError(f"{setting}: expected a 'package.module:Class' string")
        try:
            cls = resolve_class(name)
        except Exception as exc:
            raise UserCodeError(f"{setting}: cannot build the hook: {exc}") from exc
        if not isinstance(cls, type):
            raise UserCodeError(f"{setting}: cannot build the hook: {cls!r} is not a class")
        classes.append(cls)
    return classes


def load_auto_hooks(names: Sequence[Any], context: TopologyContext, where: str) -> list[TaskHook]:
    """The hooks ``topology.auto.task.hooks`` names: each class is built with no arguments;
    an object that is not a `TaskHook` but has ``to_task_hook(context)`` (a front end's hook,
    such as a Storm ``ITaskHook``) is replaced by what that returns.

    Raises:
        UserCodeError: a name does not resolve, its class cannot be built, or it is no hook.
    """
    loaded = []
    for name, cls in zip(names, auto_hook_classes(names, where), strict=True):
        setting = f"{where}: topology.auto.task.hooks entry {name!r}"
        try:
            hook = cls()
        except Exception as exc:
            raise UserCodeError(f"{setting}: cannot build the hook: {exc}") from exc
        if not isinstance(hook, TaskHook):
            adapt = getattr(hook, "to_task_hook", None)
            if adapt is None:
                raise UserCodeError(
                    f"{setting}: {type(hook).__qualname__} is not a task hook (subclass "
                    "heron_core.api.hooks.TaskHook, heronpy's ITaskHook, or Storm's ITaskHook)"
                )
            try:
                hook = adapt(context)
            except Exception as exc:
                raise UserCodeError(
                    f"{setting}: {type(hook).__qualname__}.to_task_hook() raised {exc!r}"
                ) from exc
        loaded.append(hook)
    return loaded


# --- the hooked paths -------------------------------------------------------------------------
def hooked_settle(
    settle: Callable[[Tuple], None], report: Callable[[Tuple], None]
) -> Callable[[Tuple], None]:
    """A bolt collector's ``ack`` or ``fail`` that reports the tuple after settling it."""

    def hooked(tup: Tuple) -> None:
        settle(tup)
        report(tup)

    return hooked


def hooked_process(process: Callable[[Tuple], Any], hooks: TaskHooks) -> Callable[[Tuple], None]:
    """A bolt's ``process`` (or ``process_tick``) that reports each input it processed."""
    clock = hooks.clock

    def hooked(tup: Tuple) -> None:
        start = clock()
        process(tup)
        hooks.bolt_executed(tup, (clock() - start) * 1000.0)

    return hooked


def hooked_process_batch(
    process_batch: Callable[[InputBatch], Any], hooks: TaskHooks
) -> Callable[[InputBatch], None]:
    """A bolt's ``process_batch`` that reports each input of the batch once it is processed:
    with its own execute latency when ``process_batch`` takes the inputs one by one through
    ``batch.each`` (as the Storm facade's bolts do: Storm's ``boltExecute`` times each tuple),
    else after the call, with the batch's time shared evenly."""
    clock = hooks.clock

    def timed(process: Callable[[Tuple], Any]) -> Callable[[Tuple], None]:
        return hooked_process(process, hooks)

    def hooked(batch: InputBatch) -> None:
        batch._wrap = timed
        start = clock()
        process_batch(batch)
        if batch._wrap is None:  # `each` reported every input as it processed it
            return
        elapsed_ms = (clock() - start) * 1000.0
        batch._wrap = None
        tuples = batch.tuples()
        share = elapsed_ms / len(tuples) if tuples else 0.0
        for tup in tuples:
            hooks.bolt_executed(tup, share)

    return hooked
