"""streamparse projects on the Heron kernel: ``heron sparse run`` runs a ``sparse quickstart``
project unchanged.

A project's ``Topology`` class (streamparse's DSL, imported with the real ``streamparse``
package) is converted through its thrift ``StormTopology`` (`storm_compat.thrift`). Its Python
components (``streamparse_run pkg.module.Class``) run in-process in the instance, driven by
pystorm's own code through `PystormSpoutAdapter` / `PystormBoltAdapter`; with the component
config ``streamparse.multilang: true`` or ``heron sparse run --multilang`` they run as real
multilang subprocesses instead. ``config.json`` is read as streamparse reads it (environments,
options, ``topology_specs``, ``serializer``; ``virtualenv_specs`` is ignored: components run in
the current Python environment).

The names that need pystorm (the ``streamparse`` extra) are imported on first use, so that
`load_project_topology`, asked about every ``heron submit`` of a Python file, works without it.

>>> from pathlib import Path
>>> project = SparseProject(Path("/p"), {"topology_specs": "topologies/"}, Path("/p/config.json"))
>>> project.topology_dir, project.src_dir
(PosixPath('/p/topologies'), PosixPath('/p/src'))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from storm_compat.streamparse._loader import load_project_topology
from storm_compat.streamparse._project import CONFIG_FILE, SparseProject

if TYPE_CHECKING:
    from storm_compat.streamparse._adapter import (
        PystormBoltAdapter,
        PystormSpoutAdapter,
        storm_context,
    )
    from storm_compat.streamparse._topology import (
        MULTILANG_KEY,
        RUN_MODULE,
        load_sparse_topology,
        sparse_options,
        streamparse_object,
        streamparse_shell,
        topology_class_plan,
    )

__all__ = [
    "CONFIG_FILE",
    "MULTILANG_KEY",
    "RUN_MODULE",
    "PystormBoltAdapter",
    "PystormSpoutAdapter",
    "SparseProject",
    "load_project_topology",
    "load_sparse_topology",
    "sparse_options",
    "storm_context",
    "streamparse_object",
    "streamparse_shell",
    "topology_class_plan",
]

_NEEDS_PYSTORM = {
    "PystormBoltAdapter": "_adapter",
    "PystormSpoutAdapter": "_adapter",
    "storm_context": "_adapter",
    "MULTILANG_KEY": "_topology",
    "RUN_MODULE": "_topology",
    "load_sparse_topology": "_topology",
    "sparse_options": "_topology",
    "streamparse_object": "_topology",
    "streamparse_shell": "_topology",
    "topology_class_plan": "_topology",
}


def __getattr__(name: str) -> Any:
    module = _NEEDS_PYSTORM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
