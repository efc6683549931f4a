"""How a Streamlet's user functions travel to the instances: pickled, lambdas included.

heronpy ships them with cloudpickle; this runtime has no cloudpickle, so it pickles a function
*by value* when it cannot be imported by name (a lambda, or a function defined inside another
one, typically in the program's ``main``): its code object (``marshal``), the name of the module
whose globals it reads, its closure, defaults and attributes. Everything else pickles as usual.
Classes and functions of the program run as ``__main__`` are addressed by the program's module
name (the file's stem), which an instance imports from the topology's code directory, as the
kernel does for components. The bytes load with plain ``pickle.loads`` wherever this package
and the program's module import.

>>> double = loads(dumps(lambda x: 2 * x, "map"), "map")
>>> double(21)
42
>>> def outer(n):
...     return lambda x: x + n
>>> loads(dumps(outer(5), "map"), "map")(1)
6
"""

from __future__ import annotations

import importlib
import io
import marshal
import pickle
import sys
import types
from pathlib import Path
from typing import Any

__all__ = ["dumps", "loads"]


class _Empty:
    """The content of a closure cell not yet assigned when the function was pickled."""

    def __reduce__(self) -> str:
        return "EMPTY_CELL"


EMPTY_CELL = _Empty()


def _script_module_name() -> str:
    """The name under which an instance imports the program running as ``__main__``: the
    module run with ``python -m``, else the file's stem."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name and spec.name != "__main__":
        return str(spec.name)
    file = getattr(main, "__file__", None)
    if not file:
        raise pickle.PicklingError(
            "it is defined in __main__, which has no file (an interactive session?); "
            "define it in a module"
        )
    return Path(file).stem


def _module_name(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or "__main__"
    return _script_module_name() if module == "__main__" else str(module)


def _lookup(module: Any, qualname: str) -> Any:
    found = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found


def _by_name(obj: Any) -> bool:
    """Whether ``obj`` is reachable as ``module.qualname`` (so it pickles by reference)."""
    qualname = getattr(obj, "__qualname__", "")
    if not qualname or "<" in qualname:
        return False
    module = sys.modules.get(getattr(obj, "__module__", None) or "__main__")
    return module is not None and _lookup(module, qualname) is obj


def import_attribute(module: str, qualname: str) -> Any:
    """``module.qualname``, importing ``module`` (how a by-name reference loads)."""
    found = _lookup(_import(module), qualname)
    if found is None:
        raise AttributeError(f"module {module!r} has no attribute {qualname!r}")
    return found


def _import(module: str) -> types.ModuleType:
    loaded = sys.modules.get(module)
    if loaded is not None:
        return loaded
    return importlib.import_module(module)


def make_function(code: bytes, module: str, cells: int) -> types.FunctionType:
    """A function of ``code`` over ``module``'s globals with ``cells`` empty closure cells
    (filled by `fill_function`, once the pickle has built what they hold)."""
    code_object = marshal.loads(code)
    closure = tuple(types.CellType() for _ in range(cells)) or None
    return types.FunctionType(
        code_object, vars(_import(module)), code_object.co_name, None, closure
    )


def fill_function(function: types.FunctionType, state: dict[str, Any]) -> None:
    """Set what `make_function` left out: names, defaults, closure contents, attributes."""
    function.__name__ = state["name"]
    function.__qualname__ = state["qualname"]
    function.__defaults__ = state["defaults"]
    function.__kwdefaults__ = state["kwdefaults"]
    function.__doc__ = state["doc"]
    function.__dict__.update(state["dict"])
    for cell, value in zip(function.__closure__ or (), state["cells"], strict=True):
        if value is not EMPTY_CELL:
            cell.cell_contents = value


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type) and obj.__module__ == "__main__":
            if not _by_name(obj):
                raise pickle.PicklingError(
                    f"class {obj.__qualname__} is defined inside a function; define it at the "
                    "top level of the program"
                )
            return import_attribute, (_script_module_name(), obj.__qualname__)
        if not isinstance(obj, types.FunctionType):
            return NotImplemented
        if _by_name(obj):
            if obj.__module__ != "__main__":
                return NotImplemented
            return import_attribute, (_script_module_name(), obj.__qualname__)
        closure = obj.__closure__ or ()
        state = {
            "name": obj.__name__,
            "qualname": obj.__qualname__,
            "defaults": obj.__defaults__,
            "kwdefaults": obj.__kwdefaults__,
            "doc": obj.__doc__,
            "dict": dict(obj.__dict__),
            "cells": [_cell_value(cell) for cell in closure],
        }
        arguments = (marshal.dumps(obj.__code__), _module_name(obj), len(closure))
        # The state is pickled after the function is memoized, so a closure that refers to
        # the function itself (a recursive inner function) pickles.
        return make_function, arguments, state, None, None, fill_function


def _cell_value(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return EMPTY_CELL


def dumps(obj: object, what: str) -> bytes:
    """Pickle ``obj`` (a user function, generator or operator), functions by value as needed.

    Args:
        obj: what to pickle.
        what: what it is, for the error message (``"the map function of stage 'map-1'"``).

    Raises:
        TypeError: ``obj`` cannot be pickled; the message names ``what`` and the reason.
    """
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except RecursionError as exc:
        raise TypeError(f"{what} ({obj!r}) cannot be pickled: it refers to itself") from exc
    except Exception as exc:
        raise TypeError(f"{what} ({obj!r}) cannot be pickled: {exc}") from exc
    return buffer.getvalue()


def loads(data: bytes, what: str) -> Any:
    """Load what `dumps` pickled.

    Raises:
        ImportError: a module it needs does not import here; the message names ``what``.
    """
    try:
        return pickle.loads(data)
    except ImportError as exc:
        raise ImportError(
            f"{what} cannot be loaded: {exc} (the program's module and what it imports must "
            "be importable in the topology's code directory)"
        ) from exc
