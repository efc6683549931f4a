"""Groupings: which consumer tasks get each emitted tuple (the router asks them).

Routing is a pure function of the physical plan, computed once per output stream. Each consuming
input becomes one *chooser*; a chooser maps the emitted values to one task id (``multi`` False) or
to a list of task ids (``multi`` True). Fields hashing uses :func:`stable_hash`, which gives the
same number in every process and on every host (Python's ``hash`` of ``str`` is salted per process).
"""

from __future__ import annotations

import itertools
import pickle
import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from heron_core.proto import topology_pb2

G = topology_pb2.Grouping

_CACHE_LIMIT: Final = 1 << 16
_H2_MULT: Final = 0x9E3779B1


def stable_hash(value: Any) -> int:
    """A non-negative 32-bit hash of ``value`` that is identical in every process.

    >>> stable_hash("word") == stable_hash("word")
    True
    >>> stable_hash(7)
    7
    """
    kind = type(value)
    if kind is str:
        return zlib.crc32(value.encode("utf-8", "surrogatepass"))
    if kind is int:
        return value & 0xFFFFFFFF
    if kind is bytes:
        return zlib.crc32(value)
    return zlib.crc32(pickle.dumps(value, protocol=4))


def _fields_hash(values: Sequence[Any], indices: Sequence[int]) -> int:
    h = 0
    for i in indices:
        h = (h * 31 + stable_hash(values[i])) & 0xFFFFFFFF
    return h


@dataclass(frozen=True)
class Chooser:
    """One consuming input of a stream: picks destination tasks for emitted values."""

    component: str
    grouping: int
    tasks: tuple[int, ...]
    choose: Callable[[Sequence[Any]], Any]
    multi: bool
    key_index: int = -1
    """For a fields grouping on one field: its index in the values (else -1)."""
    cache: dict[Any, int] | None = None
    """For a fields grouping on one field: value -> task memo that ``choose`` fills (callers
    may read it first and call ``choose`` on a miss)."""
    fixed: int = -1
    """The one task every tuple goes to, for a grouping that picks among a single task (all
    but custom ones, which may refuse it, and all, which is multi), else -1: callers may skip
    ``choose``."""


def _round_robin(tasks: Sequence[int], rng: random.Random) -> Callable[[Sequence[Any]], int]:
    ordered = list(tasks)
    start = rng.randrange(len(ordered))
    step = itertools.cycle(ordered[start:] + ordered[:start]).__next__

    def choose(values: Sequence[Any], _step: Callable[[], int] = step) -> int:
        return _step()

    return choose


def _fields_one(
    tasks: Sequence[int], index: int, cache: dict[Any, int]
) -> Callable[[Sequence[Any]], int]:
    ordered = sorted(tasks)
    n = len(ordered)

    def choose_one(values: Sequence[Any]) -> int:
        key = values[index]
        try:
            return cache[key]
        except KeyError:
            task = ordered[stable_hash(key) % n]
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[key] = task
            return task
        except TypeError:  # unhashable value: hash it every time
            return ordered[stable_hash(key) % n]

    return choose_one


def _fields(tasks: Sequence[int], indices: Sequence[int]) -> Callable[[Sequence[Any]], int]:
    ordered = sorted(tasks)
    n = len(ordered)

    def choose_many(values: Sequence[Any]) -> int:
        return ordered[_fields_hash(values, indices) % n]

    return choose_many


def _partial_key(tasks: Sequence[int], indices: Sequence[int]) -> Callable[[Sequence[Any]], int]:
    ordered = sorted(tasks)
    n = len(ordered)
    load = dict.fromkeys(ordered, 0)

    def choose(values: Sequence[Any]) -> int:
        h1 = _fields_hash(values, indices)
        first = ordered[h1 % n]
        second = ordered[((h1 * _H2_MULT + 1) & 0xFFFFFFFF) % n]
        task = first if load[first] <= load[second] else second
        load[task] += 1
        return task

    return choose


_ONE_OF = (G.SHUFFLE, G.NONE, G.LOCAL_OR_SHUFFLE, G.LOWEST, G.FIELDS, G.PARTIAL_KEY)
"""The groupings that send each tuple to one of the consumer's tasks, by a rule of their own."""


def build_chooser(
    component: str,
    inp: topology_pb2.InputStream,
    stream_fields: Sequence[str],
    tasks: Sequence[int],
    local_tasks: set[int],
    rng: random.Random,
    prepare_custom: Callable[[Any, str, list[int]], None],
) -> Chooser | None:
    """The chooser for one consuming input, or None for a DIRECT grouping (the emitter names
    the task).

    Args:
        component: the consuming bolt.
        inp: its input declaration.
        stream_fields: the fields the source stream declares.
        tasks: the consuming bolt's task ids.
        local_tasks: task ids in the emitter's container.
        rng: source of the round-robin start offsets.
        prepare_custom: called with (grouping object, stream id, target tasks) to prepare a
            custom grouping in the emitter's context.
    """
    gtype = inp.gtype
    if gtype == G.DIRECT:
        return None
    ordered = tuple(sorted(tasks))
    if len(ordered) == 1 and gtype in _ONE_OF:
        only = ordered[0]
        return Chooser(component, gtype, ordered, lambda values: only, False, fixed=only)
    if gtype in (G.SHUFFLE, G.NONE):
        return Chooser(component, gtype, ordered, _round_robin(ordered, rng), False)
    if gtype == G.LOCAL_OR_SHUFFLE:
        local = [t for t in ordered if t in local_tasks]
        return Chooser(component, gtype, ordered, _round_robin(local or ordered, rng), False)
    if gtype == G.LOWEST:
        lowest = ordered[0]
        return Chooser(component, gtype, ordered, lambda values: lowest, False)
    if gtype == G.ALL:
        everyone = list(ordered)
        return Chooser(component, gtype, ordered, lambda values: everyone, True)
    if gtype in (G.FIELDS, G.PARTIAL_KEY):
        indices = [list(stream_fields).index(f) for f in inp.grouping_fields]
        if gtype == G.FIELDS and len(indices) == 1:
            cache: dict[Any, int] = {}
            choose = _fields_one(ordered, indices[0], cache)
            return Chooser(component, gtype, ordered, choose, False, indices[0], cache)
        make = _fields if gtype == G.FIELDS else _partial_key
        return Chooser(component, gtype, ordered, make(ordered, indices), False)
    if gtype == G.CUSTOM:
        grouping = pickle.loads(inp.custom_grouping_object)
        prepare_custom(grouping, inp.stream.id, list(ordered))
        allowed = frozenset(ordered)

        def choose_custom(values: Sequence[Any]) -> list[int]:
            chosen = [int(t) for t in grouping.choose_tasks(list(values))]
            for t in chosen:
                if t not in allowed:
                    raise ValueError(
                        f"custom grouping {type(grouping).__name__} for bolt {component!r} chose "
                        f"task {t}, which is not one of its tasks {sorted(allowed)}"
                    )
            return chosen

        return Chooser(component, gtype, ordered, choose_custom, True)
    raise ValueError(f"bolt {component!r}: unsupported grouping {gtype}")
