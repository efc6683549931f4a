"""Builds the per-tuple modules with mypyc (the list is heron_core/_compiled.py's COMPILED) and
the hand-written C modules of its WRITTEN_IN_C (each from the ``.c`` file beside its ``.py``).

It also lists the packages: ``heron_core``, ``storm_compat`` and ``heronpy``, whose source is
``storm_compat/_heronpy/heronpy`` (heronpy's import name, over the native API; ``_heronpy`` is
a plain directory, not a package, so the source has one module name). Everything else about the
package is in pyproject.toml. With ``HERON_PURE_PYTHON=1`` at install
time, or when the compiler fails, the package installs without compiled modules and runs its
plain Python sources.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext


def _compiled_list() -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    spec = importlib.util.spec_from_file_location(
        "_heron_compiled", os.path.join(os.path.dirname(__file__), "heron_core", "_compiled.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.COMPILED, module.WRITTEN_IN_C, module.pure_python_forced()


class _OptionalBuildExt(build_ext):
    """A failed compilation leaves the plain Python modules in place, with a warning."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, no headers: the .py files work
            print(f"warning: the compiled hot path was not built ({exc})", file=sys.stderr)

    def build_extension(self, ext):  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(f"warning: {ext.name} not compiled ({exc}); plain Python", file=sys.stderr)


def _extensions() -> list:  # type: ignore[type-arg]
    modules, written_in_c, pure = _compiled_list()
    if pure:
        return []
    hand_written = [
        Extension(name, [name.replace(".", "/") + ".c"], extra_compile_args=["-O2"])
        for name in written_in_c
    ]
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("warning: mypyc is missing; the hot path stays plain Python", file=sys.stderr)
        return hand_written
    paths = [name.replace(".", "/") + ".py" for name in modules]
    # The build environment has none of the dependencies' type stubs: what the compiled modules
    # import from them is typed Any (`make lint` checks the types with every stub).
    flags = ["--follow-imports=silent", "--ignore-missing-imports", "--no-warn-unused-ignores"]
    return [*mypycify([*flags, *paths], opt_level="3", group_name="heron_core"), *hand_written]


_HERONPY = "storm_compat/_heronpy/heronpy"


def _packages() -> list[str]:
    ours = find_packages(include=["heron_core*", "storm_compat*"])
    heronpy = ["heronpy", *(f"heronpy.{p}" for p in find_packages(_HERONPY))]
    return ours + heronpy


setup(
    packages=_packages(),
    package_dir={"heronpy": _HERONPY},
    ext_modules=_extensions(),
    cmdclass={"build_ext": _OptionalBuildExt},
)
