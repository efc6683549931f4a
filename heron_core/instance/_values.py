"""Which objects a tuple value may hold, and the pickle that carries them between instances.

A batch whose values are all of the core types that ``marshal`` writes (None, bool, int,
float, complex, str, bytes, tuple, list, dict, set, frozenset, nested) is marshaled by the
router (``heron_core.instance._router``); nothing here runs for it. A batch that ``marshal``
refuses is pickled by `ValuePolicy.dumps` and read back by `ValuePolicy.loads`. As in Storm 2
(Kryo, with ``topology.fall.back.on.java.serialization`` false), only allowed classes cross:

* the core types above (and bytearray, Ellipsis), which pickle writes without naming a class
  (in a marshaled batch a bytearray arrives as bytes: marshal writes any buffer so);
* the standard library's value types of `STDLIB_CLASSES` (dates and times, ``Decimal``,
  ``UUID``, ``Fraction``, the ``collections`` containers), and ``zoneinfo.ZoneInfo`` (carried
  by its key);
* the kernel's own value classes, `KERNEL_CLASSES` (the heronpy streamlets' windows);
* what ``topology.kryo.register`` names: classes, or any module-level object a registered
  class's pickle refers to, as ``package.module.Class`` or ``package.module:Class`` (an entry
  may be a map from such a path to a Storm serializer class, whose name is not used: a class
  pickles itself, through its ``__reduce__`` or ``__getstate__``). The registrations of the
  topology's config and of every component's own config hold for the whole topology, as
  Storm merges them. Registering a class trusts its constructor (and ``__setstate__``) with
  whatever a peer sends.

A class is allowed by its exact module and qualified name: a subclass of an allowed class is
another class. The sender checks each object pickle meets that is not of a core type
(``reducer_override``: once per object and per class of the batch), and an object of another
class stops the batch before any of it is sent (`ValueClassError`, which the router reports
naming the topology, component, stream, class and key). The receiver unpickles with
``find_class`` limited to the exact allowed names (`RefusedValueClass` otherwise), so a
crafted batch, even from a peer holding the topology's key, resolves no other class or
function, let alone calls one: the runtime drops it and logs its source.

``topology.fall.back.on.java.serialization`` true pickles and unpickles any class: then
whoever holds the topology's key can make every instance run code of their choosing (a
warning says so when each instance starts).
"""

from __future__ import annotations

import builtins
import io
import logging
import pickle
import re
from collections.abc import Iterable, Mapping
from typing import Any

from heron_core.config import setting
from heron_core.errors import ConfigurationError
from heron_core.plugins import resolve_class

__all__ = [
    "FALL_BACK_KEY",
    "KERNEL_CLASSES",
    "REGISTER_KEY",
    "SKIP_MISSING_KEY",
    "STDLIB_CLASSES",
    "RefusedValueClass",
    "ValueClassError",
    "ValuePolicy",
    "policy_for",
    "registered_paths",
]

log = logging.getLogger(__name__)

REGISTER_KEY = "topology.kryo.register"
"""The config key listing the classes tuple values may hold beyond the allowed ones."""
FALL_BACK_KEY = "topology.fall.back.on.java.serialization"
"""The config key that lets tuple values be of any class (pickled and unpickled as is)."""
SKIP_MISSING_KEY = "topology.skip.missing.kryo.registrations"
"""The config key that skips registrations naming a class that does not import."""

_Name = tuple[str, str]

CORE_GLOBALS: frozenset[_Name] = frozenset(
    ("builtins", name)
    for name in (
        "Ellipsis",
        "bool",
        "complex",
        "dict",
        "float",
        "frozenset",
        "int",
        "list",
        "set",
        "str",
        "tuple",
    )
)
"""The builtins a pickle of allowed values may name: ``complex`` (its reduction) and
``Ellipsis``, and the types a ``defaultdict``'s factory is most often (``bytes`` and
``bytearray`` are not among them: pickle writes their values without naming them, and called
with a huge number they would allocate it)."""

STDLIB_CLASSES: frozenset[_Name] = frozenset(
    {
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "datetime"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("decimal", "Decimal"),
        ("uuid", "UUID"),
        ("fractions", "Fraction"),
        ("collections", "OrderedDict"),
        ("collections", "defaultdict"),
        ("collections", "Counter"),
        ("collections", "deque"),
        ("zoneinfo", "ZoneInfo"),
    }
)
"""The standard library's value types a tuple may hold: each is built from plain values by
its own class (a ``defaultdict``'s factory must itself be allowed). A ``ZoneInfo`` is sent as
its key (one read from a file, with no key, is refused)."""

KERNEL_CLASSES: frozenset[_Name] = frozenset(
    {
        ("heronpy.streamlet.window", "Window"),
        ("heronpy.streamlet.keyedwindow", "KeyedWindow"),
    }
)
"""The classes the engine's own components emit as values: the windows and keyed windows of
the heronpy streamlets' windowed operations (``reduce_by_key_and_window``, the joins)."""

_ZONEINFO: _Name = ("zoneinfo", "ZoneInfo")
_IDENTIFIER = r"[^\W\d]\w*"
_PATH = re.compile(rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})*[.:]{_IDENTIFIER}(?:\.{_IDENTIFIER})*")
"""A class path: ``package.module.Class`` or ``package.module:Class``."""


def _name_of(obj: Any) -> _Name | None:
    """The (module, qualified name) pickle writes for ``obj`` when it pickles it by
    reference (a class, a function), or None when ``obj`` has none."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return module, qualname
    return None


def _dotted(name: _Name) -> str:
    return f"{name[0]}.{name[1]}"


class ValueClassError(pickle.PicklingError):
    """A value to pickle is of a class that may not cross between instances (or refers to
    such an object).

    Attributes:
        name: the class (or object) as ``module.QualName``.
    """

    def __init__(self, name: str, what: str) -> None:
        super().__init__(f"{what} {name}")
        self.name = name
        self.what = what


class RefusedValueClass(pickle.UnpicklingError):
    """A pickled batch names a class (or object) that tuple values may not hold."""


class _CheckedPickler(pickle.Pickler):
    """Pickles allowed values only: ``reducer_override`` sees every object that is not of a
    core type (once per object: pickle memoizes it), and every class and function pickle
    writes by reference."""

    def __init__(self, file: io.BytesIO, policy: ValuePolicy) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._instances = policy._instances
        self._globals = policy._globals
        self._policy = policy

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) in self._instances or id(obj) in self._globals:
            return NotImplemented
        return self._policy._admit(obj)


class _CheckedUnpickler(pickle.Unpickler):
    """Unpickles allowed values only: ``find_class`` resolves the allowed names and refuses
    any other, so no other class is imported, built or called."""

    def __init__(self, file: io.BytesIO, policy: ValuePolicy) -> None:
        super().__init__(file)
        self._policy = policy

    def find_class(self, module: str, name: str) -> Any:
        return self._policy._resolve((module, name))

    def persistent_load(self, pid: Any) -> Any:
        raise RefusedValueClass("a persistent id: tuple values have none")


class ValuePolicy:
    """Which classes tuple values may hold, and the pickle of a batch's values under it.

    Args:
        registered: the objects ``topology.kryo.register`` names, resolved (each class or
            module-level object is allowed by its own module and qualified name).
        fall_back: ``topology.fall.back.on.java.serialization``: pickle and unpickle anything.

    >>> import datetime
    >>> policy = ValuePolicy()
    >>> policy.loads(policy.dumps([[datetime.date(2024, 5, 1), {"n": 1}]]))
    [[datetime.date(2024, 5, 1), {'n': 1}]]
    >>> class Point:
    ...     pass
    >>> policy.dumps([[Point()]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heron_core.instance._values.ValueClassError: a value of class ...Point
    """

    def __init__(self, registered: Iterable[Any] = (), fall_back: bool = False) -> None:
        self.fall_back = fall_back
        self._allowed: set[_Name] = set(CORE_GLOBALS | STDLIB_CLASSES | KERNEL_CLASSES)
        self._resolved: dict[_Name, Any] = {}
        self._instances: set[type] = set()
        """Classes seen allowed: an instance of one pickles as usual."""
        self._globals: dict[int, Any] = {}
        """id -> object of classes and objects seen allowed as references (kept alive, so
        that an id is never reused by another object)."""
        for _, builtin in CORE_GLOBALS:
            obj = getattr(builtins, builtin)
            self._globals[id(obj)] = self._resolved[("builtins", builtin)] = obj
        for obj in registered:
            name = _name_of(obj)
            if name is None:
                raise ConfigurationError(
                    f"{REGISTER_KEY}: {obj!r} has no module and qualified name; register a "
                    "class or a module-level function"
                )
            self._allowed.add(name)
            self._resolved[name] = obj

    @property
    def allowed(self) -> frozenset[str]:
        """Every allowed class or object, as ``module.QualName``."""
        return frozenset(_dotted(name) for name in self._allowed)

    def dumps(self, values: Any) -> bytes:
        """``values`` pickled (highest protocol).

        Raises:
            ValueClassError: an object of ``values`` is of a class that is not allowed, or
                its pickle would refer to an object that is not (never with the fall-back).
            Exception: whatever pickling itself raises (an object that cannot be pickled).
        """
        if self.fall_back:
            return pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)
        buffer = io.BytesIO()
        _CheckedPickler(buffer, self).dump(values)
        return buffer.getvalue()

    def loads(self, data: bytes) -> Any:
        """The values ``data`` holds.

        Raises:
            RefusedValueClass: ``data`` names a class or object that is not allowed (never
                with the fall-back).
            Exception: whatever unpickling raises for data that is no pickle.
        """
        if self.fall_back:
            return pickle.loads(data)
        return _CheckedUnpickler(io.BytesIO(data), self).load()

    def _resolve(self, name: _Name) -> Any:
        """The object an allowed ``name`` stands for (imported once), or the refusal."""
        found = self._resolved.get(name)
        if found is not None:
            return found
        if name not in self._allowed:
            raise RefusedValueClass(
                f"{_dotted(name)} is not allowed in tuple values (allowed: the builtin and "
                f"standard value types and the classes of {REGISTER_KEY})"
            )
        try:
            found = resolve_class(f"{name[0]}:{name[1]}")
        except ConfigurationError as exc:  # an allowed name this process cannot load
            raise RefusedValueClass(f"{_dotted(name)} is allowed but does not load: {exc}") from exc
        self._resolved[name] = found
        return found

    def _admit(self, obj: Any) -> Any:
        """For the pickler: NotImplemented (pickle as usual) when ``obj`` is an instance of an
        allowed class, or an allowed object referred to; remembered, so that the next one of
        its kind is admitted at once. A reduction for a ``ZoneInfo`` (its key).

        Raises:
            ValueClassError: ``obj`` is neither.
        """
        if isinstance(obj, type) or callable(obj):  # pickled by reference, when it has a name
            name = _name_of(obj)
            if name is not None:
                if name in self._allowed and self._is(name, obj):
                    self._globals[id(obj)] = obj
                    return NotImplemented
                raise ValueClassError(
                    _dotted(name), "the class" if isinstance(obj, type) else "the object"
                )
        kind = type(obj)
        name = _name_of(kind)
        if name is None or name not in self._allowed or not self._is(name, kind):
            raise ValueClassError(_dotted(name) if name else repr(kind), "a value of class")
        if name == _ZONEINFO:  # by its key: its own pickle calls a method, found by getattr
            key = getattr(obj, "key", None)
            if not isinstance(key, str):
                raise ValueClassError(_dotted(name), "a value (read from a file) of class")
            return kind, (key,)
        self._instances.add(kind)
        return NotImplemented

    def _is(self, name: _Name, obj: Any) -> bool:
        """Whether the allowed ``name`` stands for ``obj`` itself (not for another object
        that claims its module and name)."""
        try:
            return self._resolve(name) is obj
        except RefusedValueClass:
            return False


def registered_paths(value: Any, layer: str) -> list[str]:
    """The class paths of a ``topology.kryo.register`` value: each entry a path string, or a
    map whose keys are paths (its values, Storm serializer classes, are not used).

    Raises:
        ConfigurationError: the value or an entry has another shape (naming ``layer``).

    >>> registered_paths(["app.Point", {"app:Line": "app.LineSerializer"}], "topology config")
    ['app.Point', 'app:Line']
    """
    where = f"config key {REGISTER_KEY!r} (from {layer})"
    if not isinstance(value, list):
        raise ConfigurationError(f"{where}: expected a list, got {type(value).__name__}")
    paths = []
    for entry in value:
        keys = list(entry) if isinstance(entry, Mapping) else [entry]
        for path in keys:
            if not isinstance(path, str) or not _PATH.fullmatch(path):
                raise ConfigurationError(
                    f"{where}: entry {entry!r}: expected a class path 'package.module.Class' "
                    "(or 'package.module:Class'), or a map whose keys are class paths"
                )
            paths.append(path)
    return paths


def policy_for(
    topology_config: Mapping[str, Any],
    component_configs: Mapping[str, Mapping[str, Any]],
    where: str,
) -> ValuePolicy:
    """The policy of a topology: its config's and every component's own registrations,
    resolved (a path that does not import fails, or, with
    ``topology.skip.missing.kryo.registrations``, is skipped with a warning), and the
    topology config's fall-back (a component's own value of the fall-back or of the skip is
    ignored, with a warning: both hold for the whole topology).

    Args:
        topology_config: the topology's config (every layer merged).
        component_configs: each component's own config (component name -> config).
        where: names the topology (and the task) in messages.

    Raises:
        ConfigurationError: a registration has the wrong shape, or does not resolve.
    """
    skip = bool(setting(topology_config, SKIP_MISSING_KEY))
    for component, config in component_configs.items():
        for key in (FALL_BACK_KEY, SKIP_MISSING_KEY):
            if key in config and config[key] != setting(topology_config, key):
                log.warning(
                    "%s: component %r's own config sets %s=%r, which is ignored: it holds for "
                    "the whole topology (every instance pickles and unpickles alike), and the "
                    "topology's config has it %r",
                    where,
                    component,
                    key,
                    config[key],
                    setting(topology_config, key),
                )
    layers: list[tuple[str, Any]] = [("topology config", setting(topology_config, REGISTER_KEY))]
    layers += [
        (f"component {name!r}", config[REGISTER_KEY])
        for name, config in component_configs.items()
        if REGISTER_KEY in config
    ]
    registered = []
    for layer, value in layers:
        for path in registered_paths(value, layer):
            try:
                registered.append(resolve_class(path))
            except ConfigurationError as exc:
                if not skip:
                    raise ConfigurationError(
                        f"{where}: {REGISTER_KEY} entry {path!r} (from {layer}) does not "
                        f"resolve: {exc} (set {SKIP_MISSING_KEY}=true to skip it)"
                    ) from exc
                log.warning(
                    "%s: %s entry %r (from %s) does not resolve, skipped (%s is true): %s",
                    where,
                    REGISTER_KEY,
                    path,
                    layer,
                    SKIP_MISSING_KEY,
                    exc,
                )
    return ValuePolicy(registered, fall_back=bool(setting(topology_config, FALL_BACK_KEY)))
