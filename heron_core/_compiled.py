"""The per-tuple modules compiled to C when the package is installed, and the switch that forces
their plain Python sources.

``pip install`` compiles the modules of :data:`COMPILED` with mypyc and builds those of
:data:`WRITTEN_IN_C` from their ``.c`` files (``setup.py`` reads both lists); each
stays importable from its ``.py`` file, which is the fallback wherever the compiled module is
missing (no C compiler at install time, ``HERON_PURE_PYTHON=1`` at install time, or another
Python). ``HERON_PURE_PYTHON=1`` in the environment when ``heron_core`` is first imported
makes every process of the topology (they inherit it) load the ``.py`` sources even where the
compiled modules exist. A compiled module older than its source (edited or checked out since
the last build) is never used: the source runs, with a line on stderr saying so.

This module has no imports from the package: ``setup.py`` loads it by path. The compiled modules
import `mypyc_attr` from here.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # only mypyc reads it: the plain modules need no mypy_extensions

    def mypyc_attr(*attrs: str, **flags: bool) -> Callable[[type], type]:  # type: ignore[misc]
        """mypyc's class decorator (``allow_interpreted_subclasses=True`` on a compiled class
        that Python classes derive from), a no-op where mypy_extensions is not installed."""
        return lambda cls: cls


COMPILED = (
    "heron_core.api._tuple",
    "heron_core.instance._acking",
    "heron_core.instance._anchoring",
    "heron_core.instance._bolt",
    "heron_core.instance._groupings",
    "heron_core.instance._router",
    "heron_core.instance._spout",
    "heron_core.stmgr._trees",
    "storm_compat.streamparse._inputs",
    "storm_compat.topology._execute",
    "storm_compat.tuple._typed",
    "storm_compat.tuple._values",
)
"""The modules on the per-tuple path (the received tuple and its batch, router, groupings,
anchoring, the collectors, the instance's and the stream manager's acking trackers; the Storm
facade's ``Values``, called once per emit by Storm code, its tuple's getters, and its
bolts' step around each ``execute``; the in-process streamparse bolt's
loop over its inputs)."""

WRITTEN_IN_C = ("storm_compat.streamparse._received",)
"""Modules whose C build is hand-written, next to the ``.py`` file that is its reference and
fallback (a test checks that both give the same results): what neither Python nor mypyc does
cheaply (the in-process streamparse bolt's pystorm Tuples, namedtuples built per input)."""

BUILT = COMPILED + WRITTEN_IN_C
"""Every module that the install builds to C, each with its ``.py`` fallback."""

ENV = "HERON_PURE_PYTHON"


def pure_python_forced() -> bool:
    """Whether ``HERON_PURE_PYTHON`` asks for the plain Python modules."""
    return os.environ.get(ENV, "").strip().lower() not in ("", "0", "false", "no")


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The directory holding the packages (heron_core, storm_compat)."""


def _source_of(name: str) -> str:
    return os.path.join(_ROOT, *name.split(".")) + ".py"


def stale_modules() -> list[str]:
    """The compiled modules older than their sources (edited, or checked out, after the last
    build; for a module of `WRITTEN_IN_C`, its ``.c`` or its ``.py`` file). mypyc compiles the
    modules as one group whose members import each other directly, so one stale module means
    running every one of them from its source."""
    stale = []
    for name in BUILT:
        source = _source_of(name)
        stem = source[: -len(".py")]
        sources = [source, stem + ".c"] if name in WRITTEN_IN_C else [source]
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            built = stem + suffix
            if os.path.isfile(built):
                built_at = os.path.getmtime(built)
                if any(os.path.isfile(s) and built_at < os.path.getmtime(s) for s in sources):
                    stale.append(name)
                break
    return stale


class _Sources:
    """Finds the modules of `BUILT` as their ``.py`` sources, never as extensions (a meta path
    finder; not derived from ``importlib.abc.MetaPathFinder``, whose import costs every process
    of a topology about 9 ms: it pulls in ``importlib.resources``)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in BUILT:
            return None
        return importlib.util.spec_from_file_location(fullname, _source_of(fullname))


def install_finder() -> None:
    """Run the ``.py`` sources of `BUILT` when ``HERON_PURE_PYTHON`` asks for them, or when a
    compiled module is stale (saying so on stderr); call it before any of
    them is imported."""
    if any(isinstance(finder, _Sources) for finder in sys.meta_path):
        return
    if not pure_python_forced():
        stale = stale_modules()
        if not stale:
            return
        sys.stderr.write(
            f"heron: the compiled {', '.join(stale)} is older than its source: running the "
            "plain Python modules (`make install` compiles them again)\n"
        )
    sys.meta_path.insert(0, _Sources())


def compiled_now() -> dict[str, bool]:
    """For each module of `BUILT`, whether this process runs it compiled (importing it)."""
    status = {}
    for name in BUILT:
        module = importlib.import_module(name)
        status[name] = not (module.__file__ or "").endswith(".py")
    return status


if __name__ == "heron_core._compiled":  # not when setup.py loads this file by path
    install_finder()
