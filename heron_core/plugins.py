"""The one loader for pluggable modules (packing, scheduler, state manager, metrics sink).

A plug-in is named in config either by a built-in short name (``round_robin``) or by a
``package.module:Class`` path; code may also pass an instance directly.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from heron_core.errors import ConfigurationError

__all__ = ["load_plugin", "resolve_class"]


def resolve_class(path: str) -> Any:
    """Import ``package.module:QualName`` (or ``package.module.QualName``) and return the object.

    Raises:
        ConfigurationError: the module or attribute does not exist.

    >>> resolve_class("collections:OrderedDict").__name__
    'OrderedDict'
    """
    if ":" in path:
        module_name, _, qualname = path.partition(":")
    else:
        module_name, _, qualname = path.rpartition(".")
    if not module_name or not qualname:
        raise ConfigurationError(f"{path!r} is not of the form 'package.module:Class'")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"cannot import module {module_name!r} for {path!r}: {exc}"
        ) from exc
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigurationError(
                f"module {module_name!r} has no attribute {qualname!r} (from {path!r})"
            ) from None
    return obj


def load_plugin(
    kind: str,
    spec: object,
    builtins: Mapping[str, str],
    base: type[Any],
    **kwargs: Any,
) -> Any:
    """Build the plug-in of ``kind`` named by ``spec``.

    Args:
        kind: what is being loaded, for messages ("packing algorithm", "state manager").
        spec: a short name from ``builtins``, a ``package.module:Class`` path, or an instance
            of ``base`` (returned unchanged).
        builtins: short name -> ``package.module:Class`` of the built-ins.
        base: the abstract base class every plug-in of this kind subclasses.
        **kwargs: passed to the plug-in's constructor.

    Raises:
        ConfigurationError: unknown short name (the message lists the known ones), a path
            that does not import, or a class that is not a ``base``.
    """
    if isinstance(spec, base):
        return spec
    if not isinstance(spec, str):
        raise ConfigurationError(
            f"{kind} must be a name or a {base.__name__} instance, got {type(spec).__name__}"
        )
    if spec in builtins:
        path = builtins[spec]
    elif ":" in spec:
        path = spec
    else:
        known = ", ".join(sorted(builtins))
        raise ConfigurationError(
            f"unknown {kind} {spec!r}; known: {known}, or a 'package.module:Class' path"
        )
    cls = resolve_class(path)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ConfigurationError(f"{kind} {spec!r} ({path}) is not a subclass of {base.__name__}")
    return cls(**kwargs)
