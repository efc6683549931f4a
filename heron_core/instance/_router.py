"""The router: the one place an instance decides where an emitted tuple goes.

Storm asks ``Task.getOutgoingTasks(stream, values)`` over groupers built once per stream; the
router has the same shape. The :class:`Router` holds one :class:`StreamRoute` per declared output
stream, built once from the physical plan: its groupings (``heron_core.instance._groupings``),
its per-destination batches and its serializer. Every emit of a spout, a bolt, the Storm facade,
in-process streamparse and multilang goes through a route's :meth:`StreamRoute.send` (or
:meth:`StreamRoute.send_direct`).

Per tuple a route does the least it can: a type and length check, the groupings' choice of
destinations, and a list append per copy (with acking on, the copy goes to the destination's
`Runs` with the emit's `Tree`: it joins the run of the copy before it or takes new edges, see
``heron_core.instance._anchoring``). Serialization and the protobuf envelope happen once per
batch: one ``marshal`` of the whole batch, or ``pickle`` once a value of the stream is not of
a core type (under the topology's `ValuePolicy`: a value of a class that is neither a standard
value type nor registered in ``topology.kryo.register`` stops its batch with an error that
names it, see ``heron_core.instance._values``); with acking on, the batch also carries its
copies' anchors, one entry per run, marshaled as a second list.

Sizes are checked once per batch, on bytes that exist anyway: a batch whose serialized values
pass ``heron.instance.max.tuple.bytes``, or whose sealed frame passes
``heron.network.max.frame.bytes``, takes the slow path (`StreamRoute.flush_one`): its tuples
are serialized one by one, a tuple over the tuple limit is refused (the error names the
topology, component, task, stream, the tuple's size and the key), and the others go out in
batches that fit. So no batch an instance sends is ever too large for a stream manager or its
peer to take (the tuple limit is below the frame limit, which leaves room for the envelope).

zmq's queues count messages, not bytes, so a route also keeps its batches' bytes near
``heron.instance.batch.max.bytes``: after a batch over it, the route's batches take half as many
tuples, and twice as many again (up to ``heron.instance.batch.max.tuples``) after a full batch
under a quarter of it (a comparison per batch; `StreamRoute.limit`).

``send`` is specialised once per stream when the route is built (`StreamRoute.kind`): a stream
nobody subscribes to only counts; a stream with one consuming task per tuple (one grouping that
is not ``ALL`` or custom, the usual case) asks its one grouping (through the fields grouping's
memo first); any other stream gets the general send, which asks every grouping. The general
send gives the same result for every stream (a property test checks it against the specialised
one).
"""

from __future__ import annotations

import marshal
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Protocol

from heron_core.api import DEFAULT_STREAM
from heron_core.config import REGISTRY
from heron_core.errors import EmitTypeError, UserCodeError, shown
from heron_core.instance._anchoring import Anchors, Runs, Tree, split_runs
from heron_core.instance._groupings import build_chooser
from heron_core.instance._plan import PlanView
from heron_core.instance._values import (
    FALL_BACK_KEY,
    REGISTER_KEY,
    ValueClassError,
    ValuePolicy,
)
from heron_core.network._framing import DEFAULT_MAX_FRAME_BYTES, MAX_FRAME_KEY
from heron_core.proto import tuple_pb2

_PICKLE = tuple_pb2.PICKLE
_MARSHAL = tuple_pb2.MARSHAL
ONE: Final = 0
SILENT: Final = 1
GENERAL: Final = 2
UNDIRECTED: Final = 3
"""`StreamRoute.kind`: which send a route has (see `StreamRoute.specialise`). Final, so that
the compiled module reads them as C constants, not from its globals (a dict lookup per emit)."""
MAX_TUPLE_KEY = "heron.instance.max.tuple.bytes"
"""The config key bounding one tuple's serialized values."""
DEFAULT_MAX_TUPLE_BYTES: int = REGISTRY[MAX_TUPLE_KEY].default
"""Its default (the registry's)."""
BATCH_BYTES_KEY = "heron.instance.batch.max.bytes"
"""The config key of the serialized size a route keeps its batches under."""
DEFAULT_BATCH_BYTES: int = REGISTRY[BATCH_BYTES_KEY].default
"""Its default (the registry's)."""
DEFAULT_VALUES = ValuePolicy()
"""The value classes a router without a topology's registrations allows: the builtin and
standard value types."""


def _serialized(
    values: Any, serializer: tuple_pb2.Serializer.ValueType, policy: ValuePolicy
) -> bytes:
    """``values`` (a tuple, or a list of them) as ``serializer`` writes a batch (pickle:
    under ``policy``)."""
    if serializer == _MARSHAL:
        return marshal.dumps(values)
    return policy.dumps(values)


def _refused(row: Sequence[Any], policy: ValuePolicy) -> bool:
    """Whether ``policy`` refuses a value of ``row`` (to name the tuple in an error)."""
    try:
        policy.dumps(row)
    except ValueClassError:
        return True
    except Exception:  # another error of pickling: not the one reported
        return False
    return False


class DataSink(Protocol):
    """Where sealed batches go (the instance's `StMgrClient`)."""

    def send_data(self, task: int, batch: bytes, /) -> None: ...


class StreamRoute:
    """One declared output stream: its consumers' groupings and a batch per destination."""

    __slots__ = (
        "_router",
        "acking",
        "anchors",
        "arity",
        "buffers",
        "cache",
        "choose",
        "direct",
        "direct_tasks",
        "emitted",
        "fields",
        "fixed",
        "key_index",
        "kind",
        "limit",
        "marshal",
        "multi",
        "one",
        "silent",
        "single",
        "stream",
    )

    def __init__(
        self, router: Router, stream: str, fields: tuple[str, ...], direct: bool, acking: bool
    ) -> None:
        self._router = router
        self.stream = stream
        self.fields = fields
        self.arity = len(fields)
        self.direct = direct
        self.acking = acking
        self.single: list[Callable[[Sequence[Any]], int]] = []
        self.multi: list[Callable[[Sequence[Any]], list[int]]] = []
        self.direct_tasks: set[int] = set()
        self.buffers: dict[int, list[Sequence[Any]]] = {}
        self.anchors: dict[int, Runs] = {}  # acking: the anchors of the buffered copies
        self.emitted = 0
        self.silent = True  # nobody subscribes (until a consumer is added)
        self.choose: Callable[[Sequence[Any]], int] | None = None  # the one grouping, if one
        self.fixed = -1  # its only task, when it has one (see Chooser.fixed)
        self.key_index = -1  # its field's index, when it memoizes value -> task in `cache`
        self.cache: dict[Any, int] = {}
        self.marshal = True  # values are marshaled until a batch holds something marshal refuses
        self.kind = GENERAL
        """Which send `send` calls (set by `specialise`)."""
        self.one = False
        """Whether every tuple goes to exactly one task (one grouping, not ``ALL`` or custom;
        set by `specialise`, whichever send it picks)."""
        self.limit = router.batch_max
        """Tuples per batch now: ``batch_max``, halved while batches pass ``batch_bytes``."""

    # --- building ----------------------------------------------------------------------------
    def add_destinations(self, tasks: Sequence[int]) -> None:
        self.silent = False
        for task in tasks:
            self.buffers.setdefault(task, [])
            self.anchors.setdefault(task, Runs())

    def specialise(self, fast: bool = True) -> None:
        """Pick ``send`` for this stream's consumers (done once, when the plan is known;
        ``fast`` False: the general send even where a specialised one exists)."""
        self.one = not self.direct and len(self.single) == 1 and not self.multi
        if self.direct:
            self.kind = UNDIRECTED
        elif fast and self.silent:
            self.kind = SILENT
        elif fast and len(self.single) == 1 and not self.multi:
            self.choose = self.single[0]
            self.kind = ONE
        else:
            self.fixed = self.key_index = -1
            self.kind = GENERAL

    # --- sending -----------------------------------------------------------------------------
    def send(self, values: Sequence[Any], tree: Tree | None, need: bool = True) -> list[int] | None:
        """Send ``values`` (with anchors from ``tree``, acking on) to the tasks the stream's
        groupings choose; those tasks (None, unless ``need``, where listing them would take a
        new list). Dispatches on `kind` (compiled: direct calls)."""
        kind = self.kind
        if kind == ONE:
            return self._send_one(values, tree, need)
        if kind == SILENT:
            return self._send_silent(values, tree, need)
        if kind == GENERAL:
            return self._send_general(values, tree)
        return self._send_undirected(values, tree)

    def _checked(self, values: Any) -> Sequence[Any]:
        """``values`` as a list or tuple of the stream's arity, or the error that says why not
        (a stream nobody subscribes to takes any number: Storm checks it only when it builds a
        tuple for a consumer)."""
        kind = type(values)
        if kind is not list and kind is not tuple:
            if isinstance(values, str | bytes) or not isinstance(values, Sequence):
                raise EmitTypeError(
                    f"{self._router.where}: emit on stream {self.stream!r} needs a list or "
                    f"tuple of values, got {type(values).__name__}"
                )
            values = list(values)
        if len(values) != self.arity and not self.silent:
            raise UserCodeError(
                f"{self._router.where}: Tuple created with wrong number of fields. Expected "
                f"{self.arity} fields but got {len(values)} fields (stream {self.stream!r} "
                f"declares {list(self.fields)}, the emit gave {shown(values)})"
            )
        return values

    def _send_one(self, values: Sequence[Any], tree: Tree | None, need: bool) -> list[int] | None:
        """``send`` for a stream with one consuming task per tuple (see `specialise`)."""
        kind = type(values)
        if (kind is not list and kind is not tuple) or len(values) != self.arity:
            values = self._checked(values)
        task = self.fixed
        if task < 0:
            index = self.key_index
            if index < 0:
                task = self.choose(values)  # type: ignore[misc]
            else:
                try:
                    task = self.cache[values[index]]
                except (KeyError, TypeError):
                    task = self.choose(values)  # type: ignore[misc]
        if self.acking:
            self.anchors[task].add(tree)
        buffer = self.buffers[task]
        buffer.append(values)
        if len(buffer) >= self.limit:
            self.flush_one(task)
        self.emitted += 1
        return [task] if need else None

    def send_many(self, rows: Sequence[Any], tree: Tree | None) -> None:
        """`send` each of ``rows`` (a list or tuple), all with anchors from ``tree``; on a
        stream nobody subscribes to, only checked and counted."""
        if self.kind == SILENT:
            for values in rows:
                kind = type(values)
                if kind is not list and kind is not tuple:
                    self._checked(values)
            self.emitted += len(rows)
            return
        for values in rows:
            self.send(values, tree, False)

    def _send_silent(
        self, values: Sequence[Any], tree: Tree | None, need: bool
    ) -> list[int] | None:
        """``send`` for a stream nobody subscribes to: values are only counted."""
        kind = type(values)
        if kind is not list and kind is not tuple:
            self._checked(values)
        self.emitted += 1
        return [] if need else None

    def _send_general(self, values: Sequence[Any], tree: Tree | None) -> list[int]:
        """``send`` for any stream that is not direct: every grouping chooses."""
        kind = type(values)
        if (kind is not list and kind is not tuple) or (
            len(values) != self.arity and not self.silent
        ):
            values = self._checked(values)
        chosen = [choose(values) for choose in self.single]
        for choose_many in self.multi:
            chosen.extend(choose_many(values))
        self._put(chosen, values, tree)
        return chosen

    def send_direct(self, values: Sequence[Any], task: Any, tree: Tree | None) -> list[int]:
        """Send ``values`` to ``task``, which subscribes with a direct grouping."""
        if not self.direct:
            raise UserCodeError(
                f"{self._router.where}: direct emit to task {task} on stream {self.stream!r}, "
                "which is not declared direct"
            )
        if task not in self.direct_tasks:
            raise UserCodeError(
                f"{self._router.where}: direct emit to task {task} on stream {self.stream!r}; "
                f"the tasks subscribed with a direct grouping are {sorted(self.direct_tasks)}"
            )
        values = self._checked(values)
        self._put([task], values, tree)
        return [task]

    def _send_undirected(self, values: Sequence[Any], tree: Tree | None) -> list[int]:
        """``send`` for a direct stream: an error, the emit must name the task."""
        raise UserCodeError(
            f"{self._router.where}: stream {self.stream!r} is direct: emit with a direct task"
        )

    def _put(self, chosen: list[int], values: Sequence[Any], tree: Tree | None) -> None:
        limit = self.limit
        buffers = self.buffers
        if self.acking:
            anchors = self.anchors
            for task in chosen:
                anchors[task].add(tree)
        for task in chosen:
            buffer = buffers[task]
            buffer.append(values)
            if len(buffer) >= limit:
                self.flush_one(task)
        self.emitted += 1

    # --- batches -----------------------------------------------------------------------------
    def flush_one(self, task: int) -> None:
        """Send the batch for ``task``: as one batch when it fits (two length checks per
        batch), else through `_send_split`.

        Raises:
            UserCodeError: a tuple of the batch is over ``heron.instance.max.tuple.bytes`` (or,
                with its anchors, over the frame limit); the batch's other tuples were sent.
        """
        buffer = self.buffers[task]
        self.buffers[task] = []
        runs: list[Any] = []
        if self.acking:
            runs = self.anchors[task].take()
        serializer, values = _PICKLE, b""
        if self.marshal:
            try:
                serializer, values = _MARSHAL, marshal.dumps(buffer)
            except ValueError:  # a value of another type (or a subclass): pickle from now on
                self.marshal = False
        if serializer == _PICKLE:
            values = self._pickled(buffer)
        router = self._router
        size = len(values)
        if size > router.batch_bytes:  # smaller batches from now on (zmq queues count them)
            self.limit = max(1, self.limit // 2)
        elif size * 4 < router.batch_bytes and router.batch_max > self.limit <= len(buffer):
            self.limit = min(router.batch_max, self.limit * 2)  # full ones well under it
        if size > router.max_tuple_bytes:
            self._send_split(task, buffer, split_runs(runs), serializer)
            return
        data = self._seal(task, len(buffer), serializer, values, runs)
        if len(data) > router.max_frame_bytes:
            self._send_split(task, buffer, split_runs(runs), serializer)
            return
        router.sink.send_data(task, data)

    def _pickled(self, buffer: list[Sequence[Any]]) -> bytes:
        """``buffer`` pickled under the router's `ValuePolicy`.

        Raises:
            UserCodeError: a value is of a class tuple values may not hold; nothing of the
                batch was sent.
        """
        policy = self._router.values
        try:
            return policy.dumps(buffer)
        except ValueClassError as exc:
            first = next((row for row in buffer if _refused(row, policy)), buffer[0])
            raise UserCodeError(
                f"{self._router.where}: a tuple emitted on stream {self.stream!r} holds "
                f"{exc}, which tuple values may not hold (values: {shown(first, 120)}); its "
                f"batch of {len(buffer)} tuples was not sent. List {exc.name!r} in "
                f"{REGISTER_KEY} (Storm's Config.registerSerialization), or emit builtin "
                f"values; {FALL_BACK_KEY}=true pickles any class, and lets any holder of the "
                "topology's key run code in its instances"
            ) from None

    def _seal(
        self,
        task: int,
        count: int,
        serializer: tuple_pb2.Serializer.ValueType,
        values: bytes,
        anchors: list[Any],
    ) -> bytes:
        """The frame of a batch of ``count`` tuples serialized as ``values``, with ``anchors``
        (acking on: their runs, or each copy's anchors)."""
        router = self._router
        batch = tuple_pb2.TupleBatch(
            src_task=router.task_id,
            dest_task=task,
            stream=self.stream,
            src_component=router.component,
            count=count,
            serializer=serializer,
            values=values,
        )
        if self.acking:
            batch.roots = marshal.dumps(anchors)
        return batch.SerializeToString()

    def _send_split(
        self,
        task: int,
        buffer: list[Sequence[Any]],
        anchors: list[Anchors],
        serializer: tuple_pb2.Serializer.ValueType,
    ) -> None:
        """The slow path of a batch too large to send whole: serialize its tuples one by one,
        refuse those over the tuple limit, send the others in batches whose values stay under
        it, then raise for the first refused one. ``anchors`` are each copy's (`split_runs`),
        so that no run spans two batches."""
        limit = self._router.max_tuple_bytes
        refused: list[str] = []
        part: list[Sequence[Any]] = []
        part_anchors: list[Anchors] = []
        part_size = 0
        for index in range(len(buffer)):
            values = buffer[index]
            size = len(_serialized(values, serializer, self._router.values))
            if size > limit:
                refused.append(self._too_large(values, size, serializer))
                continue
            if part and part_size + size > limit:
                self._send_part(task, part, part_anchors, serializer, refused)
                part, part_anchors, part_size = [], [], 0
            part.append(values)
            if self.acking:
                part_anchors.append(anchors[index])
            part_size += size
        if part:
            self._send_part(task, part, part_anchors, serializer, refused)
        if refused:
            others = len(buffer) - len(refused)
            more = (
                f"; {len(refused) - 1} more of its batch were refused" if len(refused) > 1 else ""
            )
            raise UserCodeError(
                f"{refused[0]}{more}; the batch's {others} other tuples were sent. Emit smaller "
                f"tuples, or raise {MAX_TUPLE_KEY} (it must stay below {MAX_FRAME_KEY}, "
                f"{self._router.max_frame_bytes} bytes)"
            )

    def _send_part(
        self,
        task: int,
        part: list[Sequence[Any]],
        anchors: list[Anchors],
        serializer: tuple_pb2.Serializer.ValueType,
        refused: list[str],
    ) -> None:
        """Send ``part`` (tuples each under the tuple limit) as one batch, or as halves when
        its frame, anchors included, passes the frame limit; a tuple that alone does is
        refused (its message added to ``refused``)."""
        router = self._router
        values = _serialized(part, serializer, self._router.values)
        data = self._seal(task, len(part), serializer, values, anchors)
        if len(data) <= router.max_frame_bytes:
            router.sink.send_data(task, data)
            return
        if len(part) == 1:
            refused.append(
                f"{router.where}: a tuple emitted on stream {self.stream!r} with "
                f"{len(anchors[0]) if anchors else 0} anchors makes a batch of {len(data)} "
                f"bytes, over the {router.max_frame_bytes}-byte limit of {MAX_FRAME_KEY}; it was "
                f"not sent (values: {shown(part[0], 120)})"
            )
            return
        half = len(part) // 2
        self._send_part(task, part[:half], anchors[:half], serializer, refused)
        self._send_part(task, part[half:], anchors[half:], serializer, refused)

    def _too_large(
        self, values: Sequence[Any], size: int, serializer: tuple_pb2.Serializer.ValueType
    ) -> str:
        router = self._router
        how = "marshal" if serializer == _MARSHAL else "pickle"
        return (
            f"{router.where}: a tuple emitted on stream {self.stream!r} is {size} bytes "
            f"serialized ({how}), over the {router.max_tuple_bytes}-byte limit of "
            f"{MAX_TUPLE_KEY}; it was not sent (values: {shown(values, 120)})"
        )

    def flush(self) -> None:
        for task, buffer in self.buffers.items():
            if buffer:
                self.flush_one(task)

    def discard(self) -> None:
        """Drop every batch being filled (a rollback: they belong to the run before it)."""
        for task in self.buffers:
            self.buffers[task] = []
            self.anchors[task].take()


class Router:
    """Routes and batches the tuples one instance emits: a `StreamRoute` per declared stream.

    Args:
        plan: the physical plan.
        component, task_id, container: the emitting instance.
        sink: where sealed batches go.
        batch_max: tuples per batch at most (a full batch is sent at once).
        batch_bytes: ``heron.instance.batch.max.bytes``: after a batch whose serialized
            values pass it, a route's batches take half as many tuples (down to one), and
            twice as many again (up to ``batch_max``) after a full one under a quarter of it.
        prepare_custom: called with (grouping object, stream id, target tasks) to prepare a
            custom grouping in the emitter's context.
        rng: the round-robin groupings' start offsets.
        acking: whether copies carry anchors.
        max_tuple_bytes: ``heron.instance.max.tuple.bytes``: a tuple serialized bigger is
            refused, and no batch's serialized values pass it (bigger batches are split).
        max_frame_bytes: ``heron.network.max.frame.bytes``: no batch sent is bigger.
        specialise: pick each stream's specialised ``send`` (False: the general one for every
            stream; the property test compares the two).
        values: the classes values may hold beyond marshal's types, and their pickle
            (``heron_core.instance._values``; default: the builtin and standard value types).
    """

    def __init__(
        self,
        plan: PlanView,
        component: str,
        task_id: int,
        container: int,
        sink: DataSink,
        batch_max: int,
        prepare_custom: Callable[[Any, str, list[int]], None],
        rng: random.Random | None = None,
        acking: bool = False,
        specialise: bool = True,
        max_tuple_bytes: int = DEFAULT_MAX_TUPLE_BYTES,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
        values: ValuePolicy = DEFAULT_VALUES,
    ) -> None:
        self.component = component
        self.values = values
        self.task_id = task_id
        self.sink = sink
        self.batch_max = batch_max
        self.acking = acking
        self.max_tuple_bytes = max_tuple_bytes
        self.max_frame_bytes = max_frame_bytes
        self.batch_bytes = batch_bytes
        self.where = f"topology {plan.topology_name!r}, component {component!r}, task {task_id}"
        self.routes: dict[str, StreamRoute] = {}
        """Declared stream -> its route."""
        rng = rng or random.Random()
        local = plan.tasks_in_container(container)
        for stream, out in plan.outputs[component].items():
            route = StreamRoute(self, stream, tuple(out.schema.fields), out.direct, acking)
            for consumer, inp in plan.consumers.get((component, stream), []):
                tasks = plan.component_tasks.get(consumer, [])
                route.add_destinations(tasks)
                chooser = build_chooser(
                    consumer, inp, route.fields, tasks, local, rng, prepare_custom
                )
                if chooser is None:
                    route.direct_tasks.update(tasks)
                elif chooser.multi:
                    route.multi.append(chooser.choose)
                else:
                    route.single.append(chooser.choose)
                    route.fixed = chooser.fixed
                    if chooser.cache is not None:
                        route.key_index, route.cache = chooser.key_index, chooser.cache
            route.specialise(fast=specialise)
            self.routes[stream] = route

    def route(self, stream: str | None) -> StreamRoute:
        """The route of ``stream`` (None: the default stream, as pystorm's emit has it), or the
        error that names the streams the component declares."""
        route = self.routes.get(DEFAULT_STREAM if stream is None else stream)
        if route is None:
            declared = sorted(self.routes) or "none"
            raise UserCodeError(
                f"{self.where}: emitted on stream {stream!r}, which the component does not "
                f"declare (declared streams: {declared})"
            )
        return route

    def one_copy(self, stream: str | None, direct_task: Any) -> bool:
        """Whether an emit on ``stream`` (to ``direct_task``) goes to exactly one task: a
        direct emit, or a stream with one consuming task per tuple (`StreamRoute.one`)."""
        route = self.routes.get(DEFAULT_STREAM if stream is None else stream)
        return route is not None and (direct_task is not None or route.one)

    def emit(
        self,
        values: Sequence[Any],
        stream: str | None = DEFAULT_STREAM,
        direct_task: Any = None,
        tree: Tree | None = None,
        need: bool = True,
    ) -> list[int] | None:
        """Send ``values`` on ``stream`` (to ``direct_task``; None: the default stream, as
        pystorm's emit has it); the destination tasks, or possibly None unless ``need``. What
        every collector's emit does."""
        route = self.routes.get(stream)  # type: ignore[arg-type]
        if route is None:  # None, or an undeclared stream (the error names the declared ones)
            route = self.route(stream)
        if direct_task is not None:
            return route.send_direct(values, direct_task, tree)
        return route.send(values, tree, need)

    def emit_many(
        self, rows: Any, stream: str | None = DEFAULT_STREAM, tree: Tree | None = None
    ) -> None:
        """Send each of ``rows`` on ``stream`` (all with anchors from ``tree``) as `emit` would,
        in one call; not on a direct stream (its emits name their task). An error stops at the
        row that caused it: the rows before it are sent."""
        route, rows = self._many(rows, stream)
        route.send_many(rows, tree)

    def send_rows(self, route: StreamRoute, rows: Any, tree: Tree | None) -> None:
        """`emit_many` on ``route``, one of this router's (resolved once for many calls)."""
        if type(rows) is not list and type(rows) is not tuple:
            rows = self._rows(route, rows)
        route.send_many(rows, tree)

    def send_none(self, route: StreamRoute, groups: list[Any]) -> bool:
        """Where ``route`` sends nothing (nobody subscribes to its stream), check and count
        every row of ``groups`` (each a list, or an iterable, of rows) at once, as
        `send_rows` of each would, and say so (True); False, having done nothing, where each
        group must go through `send_rows`. A bad row raises before any is counted."""
        if route.kind != SILENT:
            return False
        rows = 0
        for group in groups:
            if type(group) is list:
                listed: list[Any] = group
                for values in listed:
                    kind = type(values)
                    if kind is not list and kind is not tuple:
                        route._checked(values)
                rows += len(listed)
            else:
                other: Sequence[Any] = group if type(group) is tuple else self._rows(route, group)
                for values in other:
                    if type(values) is not list and type(values) is not tuple:
                        route._checked(values)
                rows += len(other)
        route.emitted += rows
        return True

    def _many(self, rows: Any, stream: str | None) -> tuple[StreamRoute, Any]:
        """The route of ``stream`` and ``rows`` as a list or tuple, or the error that says
        what is wrong with them."""
        route = self.route(stream)
        if type(rows) is list or type(rows) is tuple:
            return route, rows
        return route, self._rows(route, rows)

    def _rows(self, route: StreamRoute, rows: Any) -> list[Any]:
        """``rows``, not a list or tuple, as a list, or the error that says why not."""
        if isinstance(rows, str | bytes) or not isinstance(rows, Iterable):
            raise EmitTypeError(
                f"{self.where}: emit_many on stream {route.stream!r} needs a list (or an "
                f"iterable) of rows, each a list or tuple of values; got {type(rows).__name__}"
            )
        return list(rows)

    def emit_counts(self) -> dict[str, int]:
        """Tuples emitted so far, per stream."""
        return {name: route.emitted for name, route in self.routes.items()}

    def flush(self) -> None:
        """Send every non-empty batch."""
        for route in self.routes.values():
            route.flush()

    def discard(self) -> None:
        """Drop every batch being filled, unsent (a rollback)."""
        for route in self.routes.values():
            route.discard()


class HookedRouter(Router):
    """A router that reports each emit to task hooks: ``report(values, stream, tasks)``
    after the tuple is routed. Put in place of a collector's router when the task's first
    hook is added (so a task without hooks never pays for them); it shares the routes, and
    so the batches, of the router it replaces.
    """

    def __init__(
        self, router: Router, report: Callable[[Sequence[Any], str, list[int]], None]
    ) -> None:
        self.component = router.component
        self.task_id = router.task_id
        self.sink = router.sink
        self.batch_max = router.batch_max
        self.acking = router.acking
        self.max_tuple_bytes = router.max_tuple_bytes
        self.max_frame_bytes = router.max_frame_bytes
        self.batch_bytes = router.batch_bytes
        self.values = router.values
        self.where = router.where
        self.routes = router.routes
        self._report = report

    def emit(
        self,
        values: Sequence[Any],
        stream: str | None = DEFAULT_STREAM,
        direct_task: Any = None,
        tree: Tree | None = None,
        need: bool = True,
    ) -> list[int] | None:
        tasks = Router.emit(self, values, stream, direct_task, tree)
        assert tasks is not None
        self._report(values, DEFAULT_STREAM if stream is None else stream, tasks)
        return tasks

    def emit_many(
        self, rows: Any, stream: str | None = DEFAULT_STREAM, tree: Tree | None = None
    ) -> None:
        for values in self._many(rows, stream)[1]:
            self.emit(values, stream, None, tree)

    def send_rows(self, route: StreamRoute, rows: Any, tree: Tree | None) -> None:
        self.emit_many(rows, route.stream, tree)

    def send_none(self, route: StreamRoute, groups: list[Any]) -> bool:
        return False  # every emit is reported, even where it goes nowhere
