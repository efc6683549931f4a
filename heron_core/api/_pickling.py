"""How user objects travel to instance processes: a class path, plus a pickle for instances.

The instance process imports user modules with the topology's code directory on ``sys.path``.
A class defined in the submitting script lives in ``__main__`` there, which names another
module in the instance process; it is therefore addressed by the script's module name (the
file's stem, or the module run with ``python -m``), both in class paths and inside pickles.
"""

from __future__ import annotations

import io
import pickle
import sys
import types
from pathlib import Path
from typing import Any

from heron_core.errors import ConfigurationError
from heron_core.plugins import resolve_class

__all__ = ["class_path", "dumps"]


def _main_module_name() -> str:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name and spec.name != "__main__":
        return str(spec.name)
    file = getattr(main, "__file__", None)
    if not file:
        raise ValueError(
            "it is defined in __main__, which has no file (an interactive session?); "
            "define it in a module"
        )
    return Path(file).stem


def class_path(cls: type) -> str:
    """The ``"module:QualName"`` an instance process imports to get ``cls`` back.

    Raises:
        ValueError: ``cls`` is defined inside a function, or the path does not lead back to it.
    """
    qualname = cls.__qualname__
    if "<locals>" in qualname:
        raise ValueError(
            f"class {qualname} is defined inside a function; define it at module level"
        )
    if cls.__module__ == "__main__":
        path = f"{_main_module_name()}:{qualname}"
        found: Any = sys.modules["__main__"]
        for part in qualname.split("."):
            found = getattr(found, part, None)
    else:
        path = f"{cls.__module__}:{qualname}"
        try:
            found = resolve_class(path)
        except ConfigurationError as exc:
            raise ValueError(f"class path {path!r} does not import: {exc}") from exc
    if found is not cls:
        raise ValueError(f"class path {path!r} does not lead back to {cls!r}")
    return path


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type | types.FunctionType) and obj.__module__ == "__main__":
            return resolve_class, (f"{_main_module_name()}:{obj.__qualname__}",)
        return NotImplemented


def dumps(obj: object) -> bytes:
    """Pickle ``obj`` (highest protocol), addressing ``__main__`` classes by module name.

    Raises:
        Exception: whatever pickling raises (``PicklingError``, ``TypeError``, ...).
    """
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()
