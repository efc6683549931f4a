"""Heron's architecture in Python: the kernel (see README.md and docs/runtime.md)."""

from heron_core import _compiled  # noqa: F401  (HERON_PURE_PYTHON=1 must act before any import)
