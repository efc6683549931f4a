"""Helpers for end-to-end tests of the client and CLI: a heron home whose processes are all ended
by pid at teardown, with the logs printed when the test failed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from heron_core.testing.processes import isolated_home, wait_until
from heron_core.testing.processes import processes_mentioning as processes_under

__all__ = ["ROOT", "WORD_COUNT", "heron_home_fixture", "processes_under", "wait_until"]

ROOT = Path(__file__).resolve().parents[1]
WORD_COUNT = ROOT / "topologies" / "word_count.py"


@pytest.fixture(name="heron_home")
def heron_home_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; at teardown its processes are SIGKILLed by pid and, if the test failed,
    every log under it is printed."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home
