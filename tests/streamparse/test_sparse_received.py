"""storm_compat.streamparse._received: its C build and its Python file give the same pystorm
Tuples, and the C build refuses what would not be a tuple."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections import namedtuple
from collections.abc import Callable
from itertools import count
from pathlib import Path
from types import ModuleType
from typing import Any

import pystorm
import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core._compiled import pure_python_forced
from storm_compat.streamparse import _received

SOURCE = Path(_received.__file__ or "").with_name("_received.py")


def _load(path: Path, loader: Any) -> ModuleType:
    """The module of the file ``path``, leaving ``sys.modules`` as it was (loading a C module
    puts it there)."""
    name = _received.__name__
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    finally:
        sys.modules[name] = _received
    return module


def _builds() -> list[Any]:
    """The Python file's ``received`` and, wherever the install built it, the C one (loaded
    from their files, whichever this process imports)."""
    name = _received.__name__
    python = _load(SOURCE, importlib.machinery.SourceFileLoader(name, str(SOURCE)))
    builds = [pytest.param(python.received, id="python")]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        built = SOURCE.with_name("_received" + suffix)
        if built.is_file():
            loader = importlib.machinery.ExtensionFileLoader(name, str(built))
            builds.append(pytest.param(_load(built, loader).received, id="C"))
            break
    else:  # CI builds it: only an install with HERON_PURE_PYTHON=1 has none
        assert pure_python_forced(), f"the C build of {SOURCE} is missing"
    return builds


BUILDS = _builds()
WORD = namedtuple("WORD", "word count")
values = st.one_of(st.text(max_size=5), st.integers(), st.none(), st.floats(allow_nan=False))
rows = st.lists(st.lists(values, min_size=2, max_size=2), max_size=20)


@pytest.mark.parametrize("received", BUILDS)
@given(rows=rows, first=st.integers(-(2**70), 2**70), named=st.booleans(), as_tuples=st.booleans())
def test_each_row_is_a_pystorm_tuple_with_the_next_id_and_its_values(
    received: Callable[..., list[Any]],
    rows: list[list[Any]],
    first: int,
    named: bool,
    as_tuples: bool,
) -> None:
    ids = count(first)
    given_rows = [tuple(row) for row in rows] if as_tuples else rows
    got = received(pystorm.Tuple, WORD if named else None, ids, "split", "default", 4, given_rows)
    kind: Any = WORD if named else tuple
    expected = [
        pystorm.Tuple(str(first + i), "split", "default", 4, WORD(*row) if named else tuple(row))
        for i, row in enumerate(rows)
    ]
    assert got == expected
    assert all(type(t) is pystorm.Tuple and type(t.values) is kind for t in got)
    assert next(ids) == first + len(rows)  # exactly one id per row taken


@pytest.mark.parametrize("received", BUILDS)
def test_what_is_not_a_tuple_class_or_a_sequence_of_rows_is_a_type_error(
    received: Callable[..., list[Any]],
) -> None:
    with pytest.raises(TypeError):
        received(dict, None, count(), "s", "default", 1, [["a"]])
    with pytest.raises(TypeError):
        received(pystorm.Tuple, list, count(), "s", "default", 1, [["a"]])
    with pytest.raises(TypeError):
        received(pystorm.Tuple, None, count(), "s", "default", 1, 5)
    with pytest.raises(TypeError):
        received(pystorm.Tuple, None, count(), "s", "default", 1, [5])
    assert received(pystorm.Tuple, WORD, count(), "s", "default", 1, []) == []
