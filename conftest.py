"""Collection settings for the whole tree (doctests of the packages included)."""

from __future__ import annotations

from heron_core._compiled import compiled_now

# A compiled module has no source for pytest to import as a doctest module: its doctests run in
# the pure-Python pass (HERON_PURE_PYTHON=1), where it is not compiled.
collect_ignore = [
    name.replace(".", "/") + ".py" for name, compiled in compiled_now().items() if compiled
]
