"""A ``sparse quickstart`` project: its ``config.json``, topology files and environments.

The layout and the rules are streamparse 5's: ``config.json`` names the topology directory
(``topology_specs``), the environments (``envs``) and the multilang ``serializer``; a topology
file defines a ``streamparse.Topology`` subclass and imports its components from ``src/``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heron_core.config import load_json_file
from heron_core.errors import ConfigurationError, UserCodeError

__all__ = ["CONFIG_FILE", "SparseProject"]

CONFIG_FILE = "config.json"
"""The project file ``sparse`` commands look for in the current directory."""


@dataclass(frozen=True)
class SparseProject:
    """A streamparse project.

    Attributes:
        root: the project directory (where ``config.json`` is).
        config: the parsed ``config.json``.
        config_file: its path.
    """

    root: Path
    config: Mapping[str, Any]
    config_file: Path

    @classmethod
    def load(cls, config_file: str | Path = CONFIG_FILE) -> SparseProject:
        """Read a project's ``config.json``; the project root is its directory.

        Raises:
            ConfigurationError: the file is missing, larger than the input limit
                (`heron_core.config.MAX_INPUT_BYTES`), not JSON, not an object, or has no
                ``topology_specs``.

        >>> SparseProject.load("/nonexistent/config.json")
        Traceback (most recent call last):
        ...
        heron_core.errors.ConfigurationError: no streamparse project: /nonexistent/config.json \
does not exist (run the command inside a project made by 'sparse quickstart', or pass --config)
        """
        path = Path(config_file).absolute()
        if not path.is_file():
            raise ConfigurationError(
                f"no streamparse project: {path} does not exist (run the command inside a "
                "project made by 'sparse quickstart', or pass --config)"
            )
        config = load_json_file(path, str(path))
        if not isinstance(config, dict):
            raise ConfigurationError(f"{path} must hold a JSON object, got {type(config).__name__}")
        if not isinstance(config.get("topology_specs"), str):
            raise ConfigurationError(
                f"{path}: 'topology_specs' (the directory of topology files, e.g. "
                '"topologies/") is missing or not a string'
            )
        return cls(path.parent, config, path)

    @classmethod
    def containing(cls, topology_file: Path) -> SparseProject | None:
        """The project whose ``topology_specs`` directory holds ``topology_file``, looking for
        ``config.json`` in the file's directory and its parents; None when there is none."""
        directory = topology_file.absolute().parent
        for root in (directory, *directory.parents):
            candidate = root / CONFIG_FILE
            if not candidate.is_file():
                continue
            try:
                project = cls.load(candidate)
            except ConfigurationError:
                continue
            if project.topology_dir.resolve() == directory.resolve():
                return project
        return None

    @property
    def topology_dir(self) -> Path:
        """The directory of topology files (``topology_specs``)."""
        return self.root / str(self.config["topology_specs"])

    @property
    def src_dir(self) -> Path:
        """Where the components live: ``<topology_specs>/../src``, as streamparse has it."""
        return self.topology_dir.parent / "src"

    @property
    def code_root(self) -> Path | None:
        """What the topology's code directory is a copy of: ``src/`` (None without one).

        ``sparse submit`` and ``sparse run`` ship ``src/`` as the jar's ``resources/``
        directory (they copy it to ``_resources/resources``, and ``project.clj`` has
        ``:resource-paths ["_resources"]``), and Storm runs every streamparse component in
        that directory: a file under ``src/`` is found by the path relative to ``src/``.

        >>> SparseProject(Path("/p"), {"topology_specs": "t/"}, Path("/p/c.json")).code_root is None
        True
        """
        return self.src_dir if self.src_dir.is_dir() else None

    def topology_file(self, name: str | None = None) -> tuple[str, Path]:
        """The topology called ``name`` and its file; without a name, the only one.

        Raises:
            ConfigurationError: no such file; or, without a name, none or several files.
        """
        directory = self.topology_dir
        if name is not None:
            path = directory / f"{name}.py"
            if not path.is_file():
                raise ConfigurationError(
                    f"topology definition file {path} not found (topologies here: "
                    f"{', '.join(self.topology_names()) or 'none'})"
                )
            return name, path
        names = self.topology_names()
        if len(names) != 1:
            found = f"several ({', '.join(names)})" if names else "none"
            raise ConfigurationError(
                f"{directory} must hold exactly one topology definition when no name is "
                f"given; found {found}: pass -n NAME"
            )
        return names[0], directory / f"{names[0]}.py"

    def topology_names(self) -> list[str]:
        """The stems of the ``.py`` files of the topology directory, sorted."""
        return sorted(p.stem for p in self.topology_dir.glob("*.py"))

    def environment(self, name: str | None = None) -> tuple[str | None, dict[str, Any]]:
        """The environment ``name`` of ``envs``; without a name, the only one (or none when
        ``envs`` is empty).

        Raises:
            ConfigurationError: no such environment, several and no name, or one whose
                ``options`` is not an object or whose ``cluster`` is not a name.
        """
        envs = self.config.get("envs") or {}
        if not isinstance(envs, dict):
            raise ConfigurationError(f"{self.config_file}: 'envs' must be an object")
        if name is None:
            if len(envs) > 1:
                raise ConfigurationError(
                    f"{self.config_file} defines several environments ({', '.join(envs)}): "
                    "pass -e ENV"
                )
            if not envs:
                return None, {}
            name = next(iter(envs))
        env = envs.get(name)
        if not isinstance(env, dict):
            raise ConfigurationError(
                f"{self.config_file} has no environment {name!r} (environments: "
                f"{', '.join(envs) or 'none'})"
            )
        options = env.get("options")
        if options is not None and not isinstance(options, dict):
            raise ConfigurationError(
                f'{self.config_file}: environment {name!r}, "options": expected an object of '
                f"config keys and values, got {options!r}"
            )
        cluster = env.get("cluster")
        if cluster is not None and not (isinstance(cluster, str) and cluster.strip()):
            raise ConfigurationError(
                f'{self.config_file}: environment {name!r}, "cluster": expected the name of a '
                f"heron cluster (local, localzk, spark, or a <name>.yaml of --config-path), "
                f"got {cluster!r}"
            )
        return name, env

    def serializer(self, env: Mapping[str, Any]) -> str | None:
        """The multilang serializer: the environment's ``serializer``, else the project's."""
        value = env.get("serializer", self.config.get("serializer"))
        return None if value is None else str(value)

    def import_topology_class(self, path: Path) -> Any:
        """Import the topology file and return the first ``streamparse.Topology`` subclass
        in its namespace (streamparse's rule), with ``src/`` and the project root on
        ``sys.path``.

        Raises:
            UserCodeError: importing the file raised (chained).
            ConfigurationError: the file defines no Topology subclass.
        """
        try:
            from streamparse.dsl.topology import Topology, TopologyType
        except ImportError as exc:
            raise ConfigurationError(
                f"{path} is a streamparse topology, but the streamparse package is not "
                f"installed ({exc}): pip install 'heron-storm[streamparse]'"
            ) from exc

        for entry in (self.root, self.topology_dir, self.src_dir):
            if str(entry) not in sys.path:
                sys.path.insert(0, str(entry))
        module_name = path.stem
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ConfigurationError(f"topology file {path} cannot be imported as Python")
        module = importlib.util.module_from_spec(spec)
        previous = sys.modules.get(module_name)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise UserCodeError(f"importing topology file {path} raised {exc!r}") from exc
        finally:
            if previous is not None:
                sys.modules[module_name] = previous
            else:
                sys.modules.pop(module_name, None)
        for value in vars(module).values():
            if isinstance(value, TopologyType) and value is not Topology:
                return value
        raise ConfigurationError(
            f"{path} defines no streamparse Topology subclass (class X(streamparse.Topology))"
        )
