"""The building blocks of the key registry: `Key`, `KeyPrefix`, `Ordering` and `Registry`.

The table of keys itself lives in ``_keys.py``; this module only knows how to check a value
against a key and how to find a key by name, alias or registered prefix.
"""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from heron_core.errors import ConfigurationError

__all__ = ["RESERVED_PREFIXES", "Key", "KeyPrefix", "Ordering", "Registry"]

RESERVED_PREFIXES = ("topology.", "heron.")
"""Keys starting with one of these must be registered; any other key is a user key."""

_TYPES: tuple[type, ...] = (bool, int, float, str, list, dict)


def _short(value: Any) -> str:
    """``repr(value)`` cut to 80 characters: an error names a value, not megabytes of it.

    >>> _short([1] * 100)[-24:]
    ', 1, ...(300 characters)'
    """
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:79]}...({len(text)} characters)"


def _describe(value: Any) -> str:
    return f"{_short(value)} ({type(value).__name__})"


@dataclass(frozen=True)
class Key:
    """One registered config key: its type, default, bounds and one line of doc.

    Attributes:
        name: the canonical dotted name, e.g. ``"topology.stmgrs"``.
        type: one of ``bool, int, float, str, list, dict``. A float key also accepts an int
            (stored as float); ``bool`` is never accepted where an int or float is expected.
        default: the value a fully-defaulted config holds when no layer sets the key.
        doc: one line saying what the key controls.
        nullable: ``None`` is a valid value.
        choices: the only allowed values, or None for any value of ``type``.
        minimum: the smallest allowed number, or None.
        maximum: the largest allowed number, or None.
        exclusive_minimum: the value must be strictly greater than ``minimum``.
        aliases: other names that set this key (e.g. Storm's name for it).
        refused: why the key is not honoured yet: any value other than the default is refused
            with this reason ("" = honoured). No key is accepted and then ignored.
        inert: why the key has no effect in this engine although a topology may set it
            (a JVM setting of Storm's, say): the value is accepted, and `inert_settings`
            names it so that ``heron submit`` and ``heron run`` say so ("" = none).

    >>> Key("topology.stmgrs", int, 1, "Containers.", minimum=1).check(2, "example")
    2
    >>> Key("topology.hooks", list, [], "Hooks.", refused="not built").check(["h"], "example")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: config key 'topology.hooks' (from example): ['h'] \
is refused: not built (leave the key unset)
    """

    name: str
    type: type
    default: Any
    doc: str
    nullable: bool = False
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    aliases: tuple[str, ...] = ()
    refused: str = ""
    inert: str = ""

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise TypeError(f"key {self.name!r}: type must be one of {_TYPES}, got {self.type!r}")
        if self.refused and self.inert:
            raise ValueError(f"key {self.name!r} cannot be both refused and inert")

    def check(self, value: Any, layer: str) -> Any:
        """Return ``value`` checked and normalized (float keys give floats; lists/dicts copied).

        Args:
            value: the candidate value.
            layer: where the value came from (a file path, "topology config", "command line"),
                named in the error.

        Raises:
            ConfigurationError: naming the key, the layer, what was expected and what was found.
        """
        where = f"config key {self.name!r} (from {layer})"
        if value is None and self.nullable:
            return None
        if not self._has_type(value):
            expected = self.type.__name__ + (" or None" if self.nullable else "")
            raise ConfigurationError(f"{where}: expected {expected}, got {_describe(value)}")
        if self.type is float:
            value = float(value)
            if not math.isfinite(value):
                raise ConfigurationError(f"{where}: expected a finite number, got {_short(value)}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise ConfigurationError(f"{where}: expected one of {allowed}, got {_short(value)}")
        if self.minimum is not None:
            if self.exclusive_minimum and value <= self.minimum:
                raise ConfigurationError(f"{where}: expected > {self.minimum}, got {_short(value)}")
            if value < self.minimum:
                got = _short(value)
                raise ConfigurationError(f"{where}: expected >= {self.minimum}, got {got}")
        if self.maximum is not None and value > self.maximum:
            raise ConfigurationError(f"{where}: expected <= {self.maximum}, got {_short(value)}")
        if self.refused and value != self.default:
            raise ConfigurationError(
                f"{where}: {_short(value)} is refused: {self.refused} (leave the key unset)"
            )
        return copy.deepcopy(value) if self.type in (list, dict) else value

    def _has_type(self, value: Any) -> bool:
        if isinstance(value, bool):
            return self.type is bool
        if self.type is float:
            return isinstance(value, int | float)
        return isinstance(value, self.type)


@dataclass(frozen=True)
class _PassThroughKey(Key):
    """A key under a `KeyPrefix`: a string, or a number or boolean written as Spark and Java
    properties spell it (``true``, ``4``, ``0.5``)."""

    def check(self, value: Any, layer: str) -> Any:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float) and math.isfinite(value):
            return str(value)
        if not isinstance(value, str):
            raise ConfigurationError(
                f"config key {self.name!r} (from {layer}): expected a string, number or "
                f"boolean, got {_describe(value)}"
            )
        return value


@dataclass(frozen=True)
class KeyPrefix:
    """A family of keys passed through to another system: every ``<prefix><name>`` is valid
    and holds a string (numbers and booleans are turned into their property spelling).

    Attributes:
        prefix: the dotted prefix, ending with a dot (``"heron.scheduler.spark.conf."``).
        doc: one line saying where the rest of the key goes.

    >>> spark = KeyPrefix("heron.scheduler.spark.conf.", "Passed to the SparkConf.")
    >>> spark.key("heron.scheduler.spark.conf.spark.cores.max").check(4, "example")
    '4'
    """

    prefix: str
    doc: str

    def __post_init__(self) -> None:
        if not self.prefix.endswith(".") or not self.prefix.startswith(RESERVED_PREFIXES):
            raise ValueError(f"key prefix {self.prefix!r} must be reserved and end with '.'")

    def key(self, name: str) -> Key:
        """The `Key` that ``name`` (which starts with the prefix) sets."""
        return _PassThroughKey(name, str, "", self.doc)

    def suffix(self, name: str) -> str:
        """The rest of ``name`` after the prefix (``spark.cores.max``)."""
        return name[len(self.prefix) :]


@dataclass(frozen=True)
class Ordering:
    """A cross-key rule: ``low`` must be below ``high`` (or equal when not ``strict``).

    Skipped when either value is None.
    """

    low: str
    high: str
    strict: bool = True

    def holds(self, low: Any, high: Any) -> bool:
        """Whether the pair of values satisfies the rule."""
        if low is None or high is None:
            return True
        return bool(low < high if self.strict else low <= high)


class Registry(Mapping[str, Key]):
    """An immutable mapping canonical name -> `Key`, plus aliases, cross-key orderings and
    key prefixes (families of pass-through keys, which are not part of the mapping).

    Raises:
        ValueError: at construction, on a duplicate name or alias, an ordering that names an
            unregistered key, or a key under a registered prefix (a programming error in the
            table, not a user error).
    """

    def __init__(
        self,
        keys: Iterable[Key],
        orderings: Iterable[Ordering] = (),
        prefixes: Iterable[KeyPrefix] = (),
    ) -> None:
        self._keys: dict[str, Key] = {}
        self._names: dict[str, Key] = {}
        for key in keys:
            for name in (key.name, *key.aliases):
                if name in self._names:
                    raise ValueError(f"config key name {name!r} is registered twice")
                self._names[name] = key
            self._keys[key.name] = key
        self.orderings: tuple[Ordering, ...] = tuple(orderings)
        for rule in self.orderings:
            if rule.low not in self._keys or rule.high not in self._keys:
                raise ValueError(f"ordering {rule} names an unregistered key")
        self.prefixes: tuple[KeyPrefix, ...] = tuple(prefixes)
        for family in self.prefixes:
            if any(name.startswith(family.prefix) for name in self._names):
                raise ValueError(f"a key is registered under key prefix {family.prefix!r}")

    def __getitem__(self, name: str) -> Key:
        return self._keys[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def prefix_of(self, name: str) -> KeyPrefix | None:
        """The registered `KeyPrefix` ``name`` starts with, or None."""
        return next((f for f in self.prefixes if name.startswith(f.prefix)), None)

    def lookup(self, name: str, layer: str) -> Key | None:
        """The `Key` that ``name`` (canonical, alias or under a `KeyPrefix`) sets, or None for
        a user key.

        Raises:
            ConfigurationError: ``name`` is in a reserved namespace but neither registered nor
                under a registered prefix (the message names the layer and suggests close
                matches), or it is a prefix with nothing after it.
        """
        key = self._names.get(name)
        if key is not None or not name.startswith(RESERVED_PREFIXES):
            return key
        family = self.prefix_of(name)
        if family is not None:
            if not family.suffix(name):
                raise ConfigurationError(
                    f"config key {name!r} (from {layer}) needs a name after the prefix, "
                    f"e.g. {family.prefix}spark.cores.max"
                )
            return family.key(name)
        matches = difflib.get_close_matches(name, self._names)
        hint = f"; did you mean {', '.join(map(repr, matches))}?" if matches else ""
        raise ConfigurationError(
            f"unknown config key {name!r} (from {layer}): keys starting with "
            f"{' or '.join(map(repr, RESERVED_PREFIXES))} must be registered{hint}"
        )
