"""Loading a heronpy program for ``heron run FILE`` and ``heron submit local FILE``.

`load_heronpy_file` is registered under the ``heron.topology_loaders`` entry-point group for
``.py`` files. It declines (returns None) a file that does not import ``heronpy``. Otherwise it
runs the file as heronpy's own CLI runs a topology program: as ``__main__``, with
``sys.argv == [FILE, NAME]`` (heronpy's programs read the topology name from ``sys.argv[1]``;
NAME is ``--name`` or the file's stem), its directory and its code root on ``sys.path``. The
topology is the builder the program submitted (``TopologyBuilder.build_and_submit()`` or the
Streamlet ``Runner.run``, through `heronpy._submit.submit`); a program that submits nothing
must define exactly one heronpy ``Topology`` subclass, which is built (Heron's CLI takes its
class name).

The code root (copied to every instance's ``W/code``) is the file's directory, unless the
file imports its components through packages rooted higher up, as Heron's examples do
(``from examples.src.python.bolt import CountBolt``): then it is the nearest ancestor directory
holding such a top-level package or module that is not installed. The file is named after its
path below the code root (``examples.src.python.word_count_topology``), which is how the
instances import the classes it defines.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from heron_core.api import TopologyBuilder
from heron_core.client import LoadedTopology
from heron_core.errors import ConfigurationError, HeronError, UserCodeError
from heron_core.plan import LogicalPlan
from heronpy import _submit
from heronpy.api.topology import Topology

__all__ = ["code_root", "imports_heronpy", "load_heronpy_file"]


def load_heronpy_file(path: Path, name: str | None) -> LoadedTopology | None:
    """Load the heronpy program ``path``, or decline (None) if it does not import heronpy.

    Args:
        path: the program (absolute).
        name: the topology name (``heron run --name``); default: the file's stem, which the
            program also gets as ``sys.argv[1]``.

    Raises:
        ConfigurationError: the program submitted several topologies, or none and defines no
            (or several) heronpy ``Topology`` subclasses.
        UserCodeError: running the program raised, or it exited (``sys.exit``).
        TopologyValidationError: the topology is not valid.

    >>> load_heronpy_file(Path(ast.__file__), None) is None  # a file that does not import heronpy
    True
    """
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError):
        return None  # the default loader reports it
    if not imports_heronpy(tree):
        return None
    root = code_root(path, tree)
    module_name = ".".join(path.relative_to(root).with_suffix("").parts)
    topology_name = name or path.stem
    with _as_main(path, root, module_name, topology_name) as (module, submitted):
        plan, found = _plan(path, module, submitted, name)
    return LoadedTopology(plan, root, f"{path}:{found}")


def imports_heronpy(tree: ast.Module) -> bool:
    """Whether the module ``tree`` imports ``heronpy`` (anywhere, absolutely).

    >>> imports_heronpy(ast.parse("from heronpy.api.bolt.bolt import Bolt"))
    True
    >>> imports_heronpy(ast.parse("import heron_core"))
    False
    """
    return "heronpy" in _top_imports(tree)


def _top_imports(tree: ast.Module) -> set[str]:
    """The top-level names of the absolute imports anywhere in ``tree``."""
    tops: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.partition(".")[0])
    return tops


def code_root(path: Path, tree: ast.Module) -> Path:
    """The directory the program's own imports resolve from (see the module).

    Args:
        path: the program file.
        tree: its syntax tree.
    """
    tops = _top_imports(tree) - {*sys.builtin_module_names, *sys.stdlib_module_names}
    for directory in path.parents:
        for top in sorted(tops):
            for candidate in (directory / top, directory / f"{top}.py"):
                if candidate.exists() and _is_the_import(top, candidate):
                    return directory
    return path.parent


def _is_the_import(top: str, candidate: Path) -> bool:
    """Whether ``import top`` would not find something else than ``candidate`` (an
    installed package of that name wins over a directory that merely shares it)."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return True
    if spec is None:
        return True
    places = [*(spec.submodule_search_locations or ()), spec.origin or ""]
    return any(
        p and Path(p).resolve() in (candidate.resolve(), candidate / "__init__.py") for p in places
    )


@contextmanager
def _as_main(
    path: Path, root: Path, module_name: str, topology_name: str
) -> Iterator[tuple[ModuleType, list[object]]]:
    """Run ``path`` as ``__main__`` (named ``module_name`` for pickling); restore the
    interpreter's ``__main__`` and ``sys.argv`` afterwards."""
    for directory in dict.fromkeys((str(root), str(path.parent))):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"topology file {str(path)!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    module.__name__ = "__main__"
    code = compile(path.read_bytes(), str(path), "exec")
    saved_main, saved_argv = sys.modules.get("__main__"), sys.argv
    sys.modules["__main__"] = module
    sys.argv = [str(path), topology_name]
    try:
        with _submit.recording() as submitted:
            try:
                exec(code, vars(module))  # as `python FILE` runs it, named for pickling
            except HeronError:
                raise
            except SystemExit as exc:
                raise UserCodeError(
                    f"heronpy program {str(path)!r} exited (sys.exit({exc.code!r})) before "
                    "submitting a topology"
                ) from exc
            except Exception as exc:
                raise UserCodeError(
                    f"running heronpy program {str(path)!r} raised {exc!r}"
                ) from exc
            yield module, list(submitted)
    finally:
        sys.argv = saved_argv
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


def _plan(
    path: Path, module: ModuleType, submitted: list[object], name: str | None
) -> tuple[LogicalPlan, str]:
    """Build what the program submitted, else its one heronpy ``Topology`` subclass, while
    it is still ``__main__`` (the classes it defines are addressed through it)."""
    if len(submitted) > 1:
        raise ConfigurationError(
            f"heronpy program {str(path)!r} submitted {len(submitted)} topologies; submit one "
            "per file"
        )
    if submitted:
        builder = submitted[0]
        assert isinstance(builder, TopologyBuilder)
        try:
            return builder.build(name or builder.name), "build_and_submit()"
        except HeronError:
            raise
        except Exception as exc:
            raise UserCodeError(
                f"building the topology {str(path)!r} submitted raised {exc!r}"
            ) from exc
    classes = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, Topology)
        and value is not Topology
        and value.__module__ == "__main__"
    ]
    if len(classes) != 1:
        defined = ", ".join(sorted(c.__name__ for c in classes)) or "none"
        raise ConfigurationError(
            f"heronpy program {str(path)!r} submitted no topology (TopologyBuilder."
            "build_and_submit() or Runner.run under if __name__ == '__main__') and defines "
            f"{'several' if classes else 'no'} heronpy Topology subclasses ({defined}); it "
            "needs exactly one of either"
        )
    try:
        return classes[0].build(name), classes[0].__name__
    except HeronError:
        raise
    except Exception as exc:
        raise UserCodeError(
            f"{str(path)!r}: building topology {classes[0].__name__} raised {exc!r}"
        ) from exc
