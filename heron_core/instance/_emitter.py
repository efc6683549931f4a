"""Outgoing tuples: route each emit, buffer per (stream, destination task), send in batches.

Per tuple the emitter does the least it can: one dict lookup for the stream, one length check,
one chooser call per consuming bolt and a list append (the collectors' fast paths do the same
inline, see :meth:`Emitter.simple_routes`). Serialization and the protobuf envelope happen once
per batch: one ``marshal`` of the whole batch, or ``pickle`` once a value of the stream is not of
a core type. With acking on, each copy of a tuple also carries its anchors (spout task, root key,
edge value), marshaled as a second list of the batch.
"""

from __future__ import annotations

import marshal
import pickle
import random
from collections.abc import Callable, Sequence
from typing import Any

from heron_core.errors import EmitTypeError, UserCodeError
from heron_core.instance._plan import PlanView
from heron_core.instance._routing import build_chooser
from heron_core.instance.stmgr_client import StMgrClient
from heron_core.proto import tuple_pb2

Anchors = Sequence[tuple[int, int, int]]
"""(spout task, root key, XOR of edge ids) of each tree a tuple copy belongs to."""
RootsFor = Callable[[int], Anchors]
"""Given a destination task, the anchors of the copy of a tuple sent there."""

_PICKLE = tuple_pb2.PICKLE
_MARSHAL = tuple_pb2.MARSHAL


def _shown(values: Sequence[Any], limit: int = 200) -> str:
    """``values`` for an error message, cut at ``limit`` characters."""
    text = repr(values)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Route:
    """Everything needed to emit on one declared output stream."""

    __slots__ = (
        "anchors",
        "arity",
        "buffers",
        "cache",
        "choose",
        "direct",
        "direct_tasks",
        "emitted",
        "fields",
        "key_index",
        "marshal",
        "multi",
        "silent",
        "single",
        "stream",
    )

    def __init__(self, stream: str, fields: tuple[str, ...], direct: bool) -> None:
        self.stream = stream
        self.fields = fields
        self.arity = len(fields)
        self.direct = direct
        self.single: list[Callable[[Sequence[Any]], int]] = []
        self.multi: list[Callable[[Sequence[Any]], list[int]]] = []
        self.direct_tasks: set[int] = set()
        self.buffers: dict[int, list[Sequence[Any]]] = {}
        # acking only: per destination, the anchors of each buffered tuple (parallel to buffers)
        self.anchors: dict[int, list[Anchors]] = {}
        self.emitted = 0
        # Set by the emitter once the consumers are known (see Emitter.simple_routes):
        self.silent = False  # nobody subscribes
        self.choose: Callable[[Sequence[Any]], int] | None = None  # the only chooser, if one
        self.key_index = -1  # its fields-grouping field index, when it memoizes in `cache`
        self.cache: dict[Any, int] = {}
        self.marshal = True  # values are marshaled until a batch holds something marshal refuses


class Emitter:
    """Routes and batches the tuples one instance emits."""

    def __init__(
        self,
        plan: PlanView,
        component: str,
        task_id: int,
        container: int,
        client: StMgrClient,
        batch_max: int,
        prepare_custom: Callable[[Any, str, list[int]], None],
        rng: random.Random | None = None,
        acking: bool = False,
    ) -> None:
        self._component = component
        self._topology = plan.topology_name
        self._task_id = task_id
        self._client = client
        self.batch_max = batch_max
        self.acking = acking
        # Tuples emitted through emit() on every stream: the spout loop's progress mark (the
        # collectors' fast paths count per route only).
        self.emitted = 0
        self._routes: dict[str, _Route] = {}
        rng = rng or random.Random()
        local = plan.tasks_in_container(container)
        for stream, out in plan.outputs[component].items():
            route = _Route(stream, tuple(out.schema.fields), out.direct)
            for consumer, inp in plan.consumers.get((component, stream), []):
                tasks = plan.component_tasks.get(consumer, [])
                for task in tasks:
                    route.buffers.setdefault(task, [])
                    route.anchors.setdefault(task, [])
                chooser = build_chooser(
                    consumer, inp, route.fields, tasks, local, rng, prepare_custom
                )
                if chooser is None:
                    route.direct_tasks.update(tasks)
                elif chooser.multi:
                    route.multi.append(chooser.choose)
                else:
                    route.single.append(chooser.choose)
                    if chooser.cache is not None:
                        route.key_index, route.cache = chooser.key_index, chooser.cache
            route.silent = not route.buffers
            if len(route.single) == 1 and not route.multi and not route.direct_tasks:
                route.choose = route.single[0]
            else:
                route.key_index = -1
            self._routes[stream] = route
        self.silent_streams = frozenset(s for s, r in self._routes.items() if r.silent)
        """Declared streams nobody subscribes to (emits on them only count)."""

    def simple_routes(self) -> dict[str, _Route]:
        """The streams a caller may route itself (collectors' fast paths): stream -> route, for
        non-direct streams that are silent or go to exactly one task per tuple (``choose``;
        with ``key_index`` >= 0, ``cache.get(values[key_index])`` may answer first). Such a
        caller appends to ``buffers[task]`` (and ``anchors[task]`` with acking on), counts
        ``emitted`` and calls :meth:`flush_one` when a buffer reaches ``batch_max``."""
        return {
            stream: route
            for stream, route in self._routes.items()
            if not route.direct and (route.silent or route.choose is not None)
        }

    def _where(self) -> str:
        return f"topology {self._topology!r}, component {self._component!r}, task {self._task_id}"

    def _bad_emit(self, stream: str, values: Any) -> UserCodeError:
        route = self._routes.get(stream)
        if route is None:
            declared = sorted(self._routes) or "none"
            return UserCodeError(
                f"{self._where()}: emitted on stream {stream!r}, which the component does not "
                f"declare (declared streams: {declared})"
            )
        if not isinstance(values, list | tuple):
            return EmitTypeError(
                f"{self._where()}: emit on stream {stream!r} needs a list or tuple of values, "
                f"got {type(values).__name__}"
            )
        return UserCodeError(
            f"{self._where()}: Tuple created with wrong number of fields. Expected "
            f"{route.arity} fields but got {len(values)} fields (stream {stream!r} declares "
            f"{list(route.fields)}, the emit gave {_shown(values)})"
        )

    def emit(
        self,
        values: Sequence[Any],
        stream: str = "default",
        direct_task: int | None = None,
        need_task_ids: bool = False,
        roots: RootsFor | None = None,
    ) -> list[int] | None:
        """Route ``values`` on ``stream``; return the destination task ids if asked.

        With acking on, ``roots(task)`` gives the anchors of the copy sent to ``task`` (None:
        the tuple belongs to no tree).
        """
        route = self._routes.get(stream)
        kind = type(values)
        if kind is not list and kind is not tuple:
            if isinstance(values, str | bytes) or not isinstance(values, Sequence):
                raise self._bad_emit(stream, values)
            values = list(values)
        if route is None:
            raise self._bad_emit(stream, values)
        if not route.buffers and direct_task is None:  # nobody subscribes to this stream
            # As on Storm, no tuple is built for a stream without subscribers, so values of
            # the wrong number are not an error there.
            route.emitted += 1
            self.emitted += 1
            return [] if need_task_ids else None
        if len(values) != route.arity:
            raise self._bad_emit(stream, values)
        limit = self.batch_max
        buffers = route.buffers
        if direct_task is not None:
            if not route.direct:
                raise UserCodeError(
                    f"{self._where()}: direct emit to task {direct_task} on stream {stream!r}, "
                    "which is not declared direct"
                )
            if direct_task not in route.direct_tasks:
                raise UserCodeError(
                    f"{self._where()}: direct emit to task {direct_task} on stream {stream!r}; "
                    f"the tasks subscribed with a direct grouping are {sorted(route.direct_tasks)}"
                )
            chosen = [direct_task]
        elif route.direct:
            raise UserCodeError(
                f"{self._where()}: stream {stream!r} is direct: emit with a direct task"
            )
        else:
            if need_task_ids or route.multi or self.acking:
                chosen = [choose(values) for choose in route.single]
                for choose_many in route.multi:
                    chosen.extend(choose_many(values))
            else:
                for choose in route.single:
                    task = choose(values)
                    buffer = buffers[task]
                    buffer.append(values)
                    if len(buffer) >= limit:
                        self.flush_one(route, task)
                route.emitted += 1
                self.emitted += 1
                return None
        if self.acking:
            all_anchors = route.anchors
            for task in chosen:
                all_anchors[task].append(() if roots is None else roots(task))
                buffer = buffers[task]
                buffer.append(values)
                if len(buffer) >= limit:
                    self.flush_one(route, task)
        else:
            for task in chosen:
                buffer = buffers[task]
                buffer.append(values)
                if len(buffer) >= limit:
                    self.flush_one(route, task)
        route.emitted += 1
        self.emitted += 1
        return chosen if need_task_ids else None

    def put(self, route: _Route, values: Sequence[Any], anchors: Anchors) -> int:
        """Emit checked ``values`` with ``anchors`` on a non-silent route of
        :meth:`simple_routes` (what a collector's fast path does inline); the task chosen."""
        index = route.key_index
        if index < 0:
            task = route.choose(values)  # type: ignore[misc]
        else:
            try:
                task = route.cache[values[index]]
            except (KeyError, TypeError):
                task = route.choose(values)  # type: ignore[misc]
        if self.acking:
            route.anchors[task].append(anchors)
        buffer = route.buffers[task]
        buffer.append(values)
        if len(buffer) >= self.batch_max:
            self.flush_one(route, task)
        route.emitted += 1
        self.emitted += 1
        return task

    def flush_one(self, route: _Route, task: int) -> None:
        """Send ``route``'s buffer for ``task`` as one batch."""
        buffer = route.buffers[task]
        route.buffers[task] = []
        serializer, values = _PICKLE, b""
        if route.marshal:
            try:
                serializer, values = _MARSHAL, marshal.dumps(buffer)
            except ValueError:  # a value of another type (or a subclass): pickle from now on
                route.marshal = False
        if serializer == _PICKLE:
            values = pickle.dumps(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        batch = tuple_pb2.TupleBatch(
            src_task=self._task_id,
            dest_task=task,
            stream=route.stream,
            src_component=self._component,
            count=len(buffer),
            serializer=serializer,
            values=values,
        )
        if self.acking:
            batch.roots = marshal.dumps(route.anchors[task])
            route.anchors[task] = []
        self._client.send_data(task, batch.SerializeToString())

    def emit_counts(self) -> dict[str, int]:
        """Tuples emitted so far, per stream."""
        return {name: route.emitted for name, route in self._routes.items()}

    def flush(self) -> None:
        """Send every non-empty buffer."""
        for route in self._routes.values():
            for task, buffer in route.buffers.items():
                if buffer:
                    self.flush_one(route, task)
