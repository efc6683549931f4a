"""The building blocks of the key registry: `Key`, `Ordering` and `Registry`.

The table of keys itself lives in ``_keys.py``; this module only knows how to check a value
against a key and how to find a key by name or alias.
"""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from heron_core.errors import ConfigurationError

__all__ = ["RESERVED_PREFIXES", "Key", "Ordering", "Registry"]

RESERVED_PREFIXES = ("topology.", "heron.")
"""Keys starting with one of these must be registered; any other key is a user key."""

_TYPES: tuple[type, ...] = (bool, int, float, str, list, dict)


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


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

    >>> Key("topology.stmgrs", int, 1, "Containers.", minimum=1).check(2, "example")
    2
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

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise TypeError(f"key {self.name!r}: type must be one of {_TYPES}, got {self.type!r}")

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
                raise ConfigurationError(f"{where}: expected a finite number, got {value!r}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise ConfigurationError(f"{where}: expected one of {allowed}, got {value!r}")
        if self.minimum is not None:
            if self.exclusive_minimum and value <= self.minimum:
                raise ConfigurationError(f"{where}: expected > {self.minimum}, got {value!r}")
            if value < self.minimum:
                raise ConfigurationError(f"{where}: expected >= {self.minimum}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise ConfigurationError(f"{where}: expected <= {self.maximum}, got {value!r}")
        return copy.deepcopy(value) if self.type in (list, dict) else value

    def _has_type(self, value: Any) -> bool:
        if isinstance(value, bool):
            return self.type is bool
        if self.type is float:
            return isinstance(value, int | float)
        return isinstance(value, self.type)


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
    """An immutable mapping canonical name -> `Key`, plus aliases and cross-key orderings.

    Raises:
        ValueError: at construction, on a duplicate name or alias, or an ordering that names an
            unregistered key (a programming error in the table, not a user error).
    """

    def __init__(self, keys: Iterable[Key], orderings: Iterable[Ordering] = ()) -> None:
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

    def __getitem__(self, name: str) -> Key:
        return self._keys[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def lookup(self, name: str, layer: str) -> Key | None:
        """The `Key` that ``name`` (canonical or alias) sets, or None for a user key.

        Raises:
            ConfigurationError: ``name`` is in a reserved namespace but not registered; the
                message names the layer and suggests close matches.
        """
        key = self._names.get(name)
        if key is not None or not name.startswith(RESERVED_PREFIXES):
            return key
        matches = difflib.get_close_matches(name, self._names)
        hint = f"; did you mean {', '.join(map(repr, matches))}?" if matches else ""
        raise ConfigurationError(
            f"unknown config key {name!r} (from {layer}): keys starting with "
            f"{' or '.join(map(repr, RESERVED_PREFIXES))} must be registered{hint}"
        )
