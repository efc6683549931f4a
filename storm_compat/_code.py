"""From a ``StormTopology`` to what the kernel's client submits: the plan and the code root."""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heron_core.client import LoadedTopology
from heron_core.errors import ConfigurationError
from storm_compat.topology import StormTopology

__all__ = ["load_storm_topology"]

_OWN_PACKAGES = ("storm_compat", "heron_core")


def _installed() -> set[Path]:
    paths = (sysconfig.get_path(k) for k in ("purelib", "platlib", "stdlib", "platstdlib"))
    return {Path(p).resolve() for p in paths if p is not None}


def _module_root(name: str) -> Path | None:
    """The ``sys.path`` entry module ``name`` was imported from; None when it is installed
    (or has no file)."""
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    if name == "__main__":
        spec = getattr(module, "__spec__", None)
        name = spec.name if spec is not None and spec.name else path.stem
    depth = name.count(".") + (1 if path.name == "__init__.py" else 0)
    root = path.parents[depth]
    return None if root in _installed() else root


def code_root(topology: StormTopology) -> Path | None:
    """The directory instance processes import the topology's spouts and bolts from, and
    run in: its copy is the topology's code directory, where a relative path a spout or bolt
    opens (or a shell component's script) is looked up.

    Raises:
        ConfigurationError: they come from modules under several directories.
    """
    roots: dict[Path, list[str]] = {}
    for declared in topology.components:
        module = type(declared.component).__module__
        if module.partition(".")[0] in _OWN_PACKAGES:
            continue
        root = _module_root(module)
        if root is not None:
            roots.setdefault(root, []).append(module)
    if len(roots) > 1:
        listed = "; ".join(f"{root}: {', '.join(sorted(set(m)))}" for root, m in roots.items())
        raise ConfigurationError(
            "the spouts and bolts come from modules under several directories, but a topology "
            f"ships one code directory; move them under one ({listed})"
        )
    return next(iter(roots), None)


def load_storm_topology(
    name: str, conf: Mapping[str, Any] | None, topology: StormTopology
) -> LoadedTopology:
    """``topology`` named ``name`` with config ``conf``, ready for ``heron_core.client.prepare``.

    Raises:
        TypeError: ``topology`` is not a StormTopology.
        TopologyValidationError, ConfigurationError: as ``StormTopology.to_logical_plan``.
    """
    if not isinstance(topology, StormTopology):
        raise TypeError(
            f"expected a StormTopology (TopologyBuilder.createTopology()), got {topology!r}"
        )
    plan = topology.to_logical_plan(name, conf)
    return LoadedTopology(plan, code_root(topology), f"StormTopology {name!r}")
