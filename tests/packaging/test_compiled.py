"""The compiled hot path: built by the install, forced off by HERON_PURE_PYTHON, never stale."""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

import pytest

from heron_core import _compiled
from heron_core._compiled import BUILT, COMPILED, WRITTEN_IN_C, compiled_now, pure_python_forced

REPORT = "from heron_core._compiled import compiled_now; print(sorted(compiled_now().items()))"


def test_every_hot_module_runs_compiled_unless_pure_python_is_forced() -> None:
    # CI installs with a C compiler, so a build that silently fell back fails here
    assert compiled_now() == dict.fromkeys(BUILT, not pure_python_forced())


@pytest.mark.parametrize(("value", "compiled"), [("1", False), ("0", True), ("", True)])
def test_heron_pure_python_reaches_every_process_started_with_it(
    value: str, compiled: bool
) -> None:
    env = {**os.environ, "HERON_PURE_PYTHON": value}
    out = subprocess.run(
        [sys.executable, "-c", REPORT], env=env, capture_output=True, text=True, check=True
    )
    expected = sorted(dict.fromkeys(BUILT, compiled).items())
    assert out.stdout.strip() == repr(expected)
    assert out.stderr == ""


def test_a_compiled_module_older_than_its_source_is_reported_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_compiled, "_ROOT", str(tmp_path))
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in COMPILED:
        source = tmp_path.joinpath(*name.split(".")).with_suffix(".py")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text("")
        built = source.with_name(source.stem + suffix)
        built.write_bytes(b"")
        os.utime(source, (1000, 1000))
        os.utime(built, (2000, 2000))
    assert _compiled.stale_modules() == []
    router = tmp_path / "heron_core" / "instance" / "_router.py"
    os.utime(router, (3000, 3000))  # edited after the build
    assert _compiled.stale_modules() == ["heron_core.instance._router"]
    (tmp_path / "heron_core" / "instance" / ("_router" + suffix)).unlink()  # never built: not stale
    assert _compiled.stale_modules() == []


def test_a_c_module_older_than_its_c_or_its_python_file_is_reported_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_compiled, "_ROOT", str(tmp_path))
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (name,) = WRITTEN_IN_C
    python = tmp_path.joinpath(*name.split(".")).with_suffix(".py")
    python.parent.mkdir(parents=True)
    c_source, built = python.with_suffix(".c"), python.with_name(python.stem + suffix)
    for path, at in ((python, 1000), (c_source, 1000), (built, 2000)):
        path.write_text("")
        os.utime(path, (at, at))
    assert _compiled.stale_modules() == []
    for edited in (c_source, python):
        os.utime(edited, (3000, 3000))
        assert _compiled.stale_modules() == [name]
        os.utime(edited, (1000, 1000))
