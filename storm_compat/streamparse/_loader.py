"""The ``.py`` topology loader of ``heron submit`` / ``heron run`` for streamparse projects.

It is asked about every Python topology file, so importing it must stay cheap and must not need
the ``streamparse`` extra: pystorm and streamparse are imported only for a project's file.
"""

from __future__ import annotations

from pathlib import Path

from heron_core.client import LoadedTopology
from storm_compat.streamparse._project import SparseProject

__all__ = ["load_project_topology"]


def load_project_topology(path: Path, name: str | None) -> LoadedTopology | None:
    """Load ``path`` if it is a topology file of a streamparse project, else decline (None).

    Registered as the ``.py`` entry of the ``heron.topology_loaders`` entry-point group, so
    ``heron submit local topologies/wordcount.py`` works inside a project: the topology is
    loaded as ``heron sparse run`` would load it (named after the file unless ``name`` is
    given, with the environment's options when ``config.json`` has exactly one environment).

    Raises:
        ConfigurationError, UserCodeError, TopologyValidationError: as
            ``load_sparse_topology``.

    >>> load_project_topology(Path("/nonexistent/topologies/x.py"), None) is None
    True
    """
    project = SparseProject.containing(path)
    if project is None:
        return None
    from storm_compat.streamparse._topology import load_file

    envs = project.config.get("envs") or {}
    env_name, env_config = (
        project.environment() if isinstance(envs, dict) and len(envs) == 1 else (None, {})
    )
    return load_file(project, path, name or path.stem, env_name, env_config)
