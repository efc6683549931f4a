"""The scripts under scripts/ are multilang subprocesses, not test modules: never import them.
Fixtures for the end-to-end tests: a code directory and a heron home checked for leftovers."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

collect_ignore = ["scripts"]

HERE = Path(__file__).resolve().parent


@pytest.fixture
def code(tmp_path: Path) -> Path:
    """A topology code directory with the scripts and the end-to-end components."""
    root = tmp_path / "code"
    root.mkdir()
    for path in [*(HERE / "scripts").glob("*.py"), HERE / "multilang_components.py"]:
        shutil.copy(path, root)
    return root


def _under(process: psutil.Process, root: str) -> bool:
    with contextlib.suppress(psutil.Error):
        return any(root in arg for arg in process.cmdline()) or process.cwd().startswith(root)
    return False


@pytest.fixture
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A heron home; on failure every log under it is printed; no process (daemons and
    multilang subprocesses, which run in the code directory) may outlive the test."""
    failed_before = request.session.testsfailed
    yield tmp_path / "home"
    me = psutil.Process()
    leftovers = [p for p in psutil.process_iter() if p.pid != me.pid and _under(p, str(tmp_path))]
    for process in leftovers:
        with contextlib.suppress(psutil.Error):
            process.kill()
    if request.session.testsfailed > failed_before or leftovers:
        for log in sorted(tmp_path.rglob("*.log")):
            print(f"===== {log} =====\n{log.read_text(errors='replace')}")
    assert not leftovers, f"processes outlived the topology: {[p.pid for p in leftovers]}"
