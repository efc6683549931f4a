"""Finding the topology a user points the CLI at: a Python file or ``module:attr``."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import sys
import sysconfig
import uuid
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from heron_core.api import Topology, TopologyBuilder
from heron_core.errors import ConfigurationError, HeronError, UserCodeError
from heron_core.plan import LogicalPlan

__all__ = ["LoadedTopology", "load_topology"]

_LOOKED_FOR = (
    "the attribute named after ':', else the one heron_core.api.Topology subclass defined in "
    "the module, else a module attribute 'topology' that is a LogicalPlan, a TopologyBuilder or "
    "has a to_logical_plan(name) method (e.g. a Storm facade StormTopology)"
)


@dataclass(frozen=True)
class LoadedTopology:
    """A topology found by `load_topology`.

    Attributes:
        plan: the validated logical plan.
        code_root: the directory whose copy becomes the topology's ``W/code``, where every
            instance runs (the file's directory, or the ``sys.path`` entry the module came
            from); None when the module is installed in the Python environment (nothing needs
            copying).
        origin: what was loaded, for messages (``"topologies/word_count.py:WordCount"``).
    """

    plan: LogicalPlan
    code_root: Path | None
    origin: str


def load_topology(spec: str, name: str | None = None) -> LoadedTopology:
    """Import ``spec`` and build its topology's logical plan.

    Args:
        spec: a Python file path (``topologies/word_count.py``), optionally followed by
            ``:attr``, or ``package.module:attr``. A file is imported as a module named after
            its stem, with its directory put first on ``sys.path``.
        name: the topology name; by default a ``Topology`` subclass's class name, a
            builder's or plan's own name, else the module's name.

    The topology is the attribute named after ``:``; else the one ``heron_core.api.Topology``
    subclass defined in the module; else a module attribute ``topology`` that is a
    ``LogicalPlan``, a ``TopologyBuilder`` or any object with a ``to_logical_plan(name)``
    method (how other front ends, such as the Storm facade, plug in). A file whose suffix has
    a loader registered under the ``heron.topology_loaders`` entry-point group (e.g. Flux
    ``.yaml``) is loaded by that loader. Loaders registered for ``.py`` are asked first about
    a Python file given without ``:attr`` and may decline (return None), e.g. the streamparse
    loader takes the files of a ``sparse`` project's ``topologies/`` directory.

    Raises:
        ConfigurationError: the file or module does not exist, or holds no (or more than one)
            topology; the message names the file and what was looked for.
        UserCodeError: importing the module raised (the exception is chained).
        TopologyValidationError: the topology is not valid.

    >>> load_topology("heron_core.no_such_module:x")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: cannot import module 'heron_core.no_such_module' \
(from 'heron_core.no_such_module:x'): No module named 'heron_core.no_such_module'
    """
    target, _, attr = spec.rpartition(":") if ":" in spec else (spec, "", "")
    for loader in _file_loaders(target, attr):
        path = Path(target)
        if not path.is_file():
            raise ConfigurationError(f"topology file {target!r} (from {spec!r}) does not exist")
        try:
            loaded: LoadedTopology | None = loader(path.resolve(), name)
        except HeronError:
            raise
        except Exception as exc:
            raise UserCodeError(f"{target}: loading the topology raised {exc!r}") from exc
        if loaded is not None:
            return loaded
    code_root: Path | None
    if target.endswith(".py") or "/" in target or Path(target).is_file():
        module, code_root = _import_file(Path(target), spec)
    else:
        module, code_root = _import_module(target, spec)
    where = getattr(module, "__file__", None) or module.__name__
    definition, found = _find(module, attr, where)
    try:
        plan = _build(definition, name, module.__name__)
    except HeronError:
        raise
    except Exception as exc:
        raise UserCodeError(f"{where}: building topology {found} raised {exc!r}") from exc
    return LoadedTopology(plan, code_root, f"{where}:{found}")


LOADERS_GROUP = "heron.topology_loaders"
"""Entry-point group of topology loaders: the entry's name is a file suffix (``.yaml``),
optionally followed by ``:label`` so that several loaders can claim one suffix (``.py:heronpy``;
a TOML table cannot repeat a key), its value a ``callable(path, name) -> LoadedTopology``.
Loaders for ``.py`` may return None to leave the file to the next loader or the default Python
import."""


def _file_loaders(target: str, attr: str) -> list[Any]:
    suffix = Path(target).suffix
    if not suffix or (suffix == ".py" and attr):
        return []
    return [
        e.load()
        for e in metadata.entry_points(group=LOADERS_GROUP)
        if e.name.partition(":")[0] == suffix
    ]


def _import_file(path: Path, spec: str) -> tuple[ModuleType, Path]:
    if not path.is_file():
        raise ConfigurationError(f"topology file {str(path)!r} (from {spec!r}) does not exist")
    path = path.resolve()
    name = path.stem
    if not name.isidentifier():
        raise ConfigurationError(
            f"topology file {str(path)!r}: its name must be a Python identifier (it is "
            f"imported as module {name!r})"
        )
    loaded = sys.modules.get(name)
    loaded_file = getattr(loaded, "__file__", None)
    if loaded is not None and (loaded_file is None or Path(loaded_file).resolve() != path):
        raise ConfigurationError(
            f"topology file {str(path)!r} is imported as module {name!r}, but a module of that "
            f"name is already loaded from {loaded_file or 'a built-in'}; rename the file"
        )
    directory = str(path.parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigurationError(f"topology file {str(path)!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise UserCodeError(f"importing topology file {str(path)!r} raised {exc!r}") from exc
    return module, path.parent


def _import_module(name: str, spec: str) -> tuple[ModuleType, Path | None]:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise ConfigurationError(
                f"cannot import module {name!r} (from {spec!r}): {exc}"
            ) from None
        raise UserCodeError(f"importing module {name!r} raised {exc!r}") from exc
    except Exception as exc:
        raise UserCodeError(f"importing module {name!r} raised {exc!r}") from exc
    return module, _code_root(module)


def _code_root(module: ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    depth = module.__name__.count(".") + (1 if path.name == "__init__.py" else 0)
    root = path.parents[depth]
    installed = {sysconfig.get_path(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    if any(p is not None and root == Path(p).resolve() for p in installed):
        return None
    return root


def _find(module: ModuleType, attr: str, where: str) -> tuple[Any, str]:
    if attr:
        if not hasattr(module, attr):
            raise ConfigurationError(f"{where}: no attribute {attr!r}; looked for {_LOOKED_FOR}")
        return getattr(module, attr), attr
    classes = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, Topology)
        and value is not Topology
        and value.__module__ == module.__name__
    ]
    if len(classes) > 1:
        names = ", ".join(sorted(c.__name__ for c in classes))
        raise ConfigurationError(
            f"{where} defines several Topology subclasses ({names}); name one: '{where}:<Class>'"
        )
    if classes:
        return classes[0], classes[0].__name__
    candidate = getattr(module, "topology", None)
    if isinstance(candidate, LogicalPlan | TopologyBuilder) or hasattr(
        candidate, "to_logical_plan"
    ):
        return candidate, "topology"
    raise ConfigurationError(f"{where}: no topology found; looked for {_LOOKED_FOR}")


def _build(definition: Any, name: str | None, module_name: str) -> LogicalPlan:
    if inspect.isclass(definition) and issubclass(definition, Topology):
        return definition.build(name)
    if isinstance(definition, TopologyBuilder):
        return definition.build(name or definition.name or module_name.rpartition(".")[2])
    if hasattr(definition, "to_logical_plan"):  # another front end's topology (Storm facade)
        plan = definition.to_logical_plan(name or module_name.rpartition(".")[2])
        if not isinstance(plan, LogicalPlan):
            raise ConfigurationError(
                f"{definition!r}.to_logical_plan() returned {type(plan).__name__}, "
                "not a LogicalPlan"
            )
        plan.validate()
        return plan
    if isinstance(definition, LogicalPlan):
        if name is not None and name != definition.name:
            definition = dataclasses.replace(definition, name=name, id=f"{name}-{uuid.uuid4().hex}")
        definition.validate()
        return definition
    raise ConfigurationError(
        f"{definition!r} is not a topology: expected a heron_core.api.Topology subclass, a "
        "TopologyBuilder or a LogicalPlan"
    )
