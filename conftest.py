"""Collection settings for the whole tree (doctests of the packages included) and the
Hypothesis profile."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from heron_core._compiled import compiled_now

# A compiled module has no source for pytest to import as a doctest module: its doctests run in
# the pure-Python pass (HERON_PURE_PYTHON=1), where it is not compiled.
collect_ignore = [
    name.replace(".", "/") + ".py" for name, compiled in compiled_now().items() if compiled
]

# No Hypothesis example has a time limit: what a property checks never depends on how fast the
# machine is, and a loaded CI machine (the suite runs on both cores at once) slows examples
# down by several times.
settings.register_profile("heron", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("heron")
