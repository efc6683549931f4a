"""The pystorm Tuples that the in-process streamparse bolt hands ``process`` for a run of inputs
(pystorm's ``read_tuple``, for many inputs at once).

This file is the reference and the fallback: ``pip install`` also builds ``_received.c``, the
same function in C, which Python imports instead of this file wherever it was built (see
``heron_core/_compiled.py``: ``HERON_PURE_PYTHON=1``, or the C source edited since the build,
bring this file back). The C build exists because Python has no cheap way to build a tuple
subclass: ``tuple.__new__(kind, row)`` makes an argument tuple, its slice and a copy of the
row before the object, about 110 ns a namedtuple on the test machine, where the C build
allocates the object and fills it (``bench/RESULTS.md``, 2026-11-28: 295 ns an input here
against 125 for the id, the values and the Tuple).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice, repeat
from typing import Any

__all__ = ["received"]

_new = tuple.__new__


def received(
    tuple_type: type,
    kind: type | None,
    ids: Iterator[int],
    source: str,
    stream: str,
    task: Any,
    rows: Sequence[Sequence[Any]],
) -> list[Any]:
    """``tuple_type(str(id), source, stream, task, values)`` for each row of ``rows``, where the
    ids are the next ``len(rows)`` of ``ids`` and ``values`` is the row as a ``kind`` (a
    namedtuple class of the stream's fields, whose arity the caller checked), or as a plain
    tuple when ``kind`` is None.

    >>> from collections import namedtuple
    >>> from itertools import count
    >>> Tup, Word = namedtuple("Tup", "id component stream task values"), namedtuple("W", "word")
    >>> ids = count(7)
    >>> received(Tup, Word, ids, "split", "default", 3, [["a"], ["b"]])[1]
    Tup(id='8', component='split', stream='default', task=3, values=W(word='b'))
    >>> received(Tup, None, ids, "split", "default", 3, [["c", 1]])[0].id, next(ids)
    ('9', 10)
    """
    values = map(tuple, rows) if kind is None else map(_new, repeat(kind), rows)
    fives = zip(
        map(str, islice(ids, len(rows))), repeat(source), repeat(stream), repeat(task), values
    )
    return list(map(_new, repeat(tuple_type), fives))
