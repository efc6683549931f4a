"""Collection settings for the whole tree (doctests of the packages included) and the
Hypothesis profile."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
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

SPARK_CLUSTER_FILES = "tests/scheduler/test_scheduler_spark_"
"""Where the tests that take the session's Spark cluster (``tests/conftest.py``) live. Under
xdist every worker that runs one of them starts a cluster of its own (three JVMs, kept until
its session ends), so they all go to one worker, as one unit of work, scheduled first."""

_SPARK_SCOPE = "spark-cluster"


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The order xdist hands out files in (see `pytest_xdist_make_scheduler`): the Spark
    cluster's tests first, then the files with the most tests, as xdist's own ordering has
    it; the tests of a file keep their order."""
    counts = Counter(_file_of(item.nodeid) for item in items)

    def rank(item: pytest.Item) -> tuple[bool, int]:
        path = _file_of(item.nodeid)
        return (not path.startswith(SPARK_CLUSTER_FILES), -counts[path])

    items.sort(key=rank)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (``make test``) with the Spark cluster's test files as one unit of
    work, in the collection's order (`pytest_collection_modifyitems`)."""
    from xdist.scheduler import LoadFileScheduling

    if config.getoption("dist") != "loadfile":
        return None

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return _SPARK_SCOPE if scope.startswith(SPARK_CLUSTER_FILES) else scope

    config.option.loadscopereorder = False  # the collection's order is already the one wanted
    return Scheduling(config, log)
