"""Fixtures of the end-to-end tests (imported by the test modules: a second ``conftest.py``
would clash with ``tests/tmanager/conftest.py`` by module name): an isolated heron home and the
code their topologies ship."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from heron_core.testing.processes import isolated_home

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture(name="home")
def home_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; on failure every log under it is printed; no process may outlive it."""
    failures = request.session.testsfailed
    with isolated_home(tmp_path, lambda: request.session.testsfailed > failures) as home:
        yield home


@pytest.fixture(name="code")
def code_fixture(tmp_path: Path) -> Path:
    """The topology code shipped to the instances: the test components and word_count."""
    root = tmp_path / "code"
    root.mkdir()
    shutil.copy(HERE / "e2e_components.py", root)
    shutil.copy(ROOT / "topologies" / "word_count.py", root)
    return root
