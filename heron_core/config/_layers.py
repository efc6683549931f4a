"""Config layers: registry defaults < cluster YAML < topology config < command line.

Every layer is validated against the registry on its own (so an error names the layer it came
from), aliases are resolved to canonical names, and the merged result is checked once more for
rules that tie keys together.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from heron_core.config._keys import REGISTRY
from heron_core.config._yaml import load_yaml, load_yaml_file
from heron_core.errors import ConfigurationError

__all__ = [
    "CONFIG_PATH_ENV",
    "Layer",
    "acking_enabled",
    "build_config",
    "known_clusters",
    "load_cluster_config",
    "merge_layers",
    "parse_override",
    "resolve_path",
]

CONFIG_PATH_ENV = "HERON_CONFIG_PATH"
"""Environment variable naming a directory of ``<cluster>.yaml`` files."""

DEFAULTS_LAYER = "registry defaults"

_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")


@dataclass(frozen=True)
class Layer:
    """A named set of config values, one level of the config stack.

    Attributes:
        name: where the values came from, named in every error ("topology config", a file path).
        values: the raw values; keys may be canonical names, aliases or user keys.
    """

    name: str
    values: Mapping[str, Any]

    def validated(self) -> dict[str, Any]:
        """Return this layer's values under canonical names, checked and normalized.

        Registered keys are checked against their `Key`; user keys (outside the reserved
        ``topology.``/``heron.`` namespaces) pass through untouched. No defaults are added.

        Raises:
            ConfigurationError: a key is not a string, a reserved key is unknown, a value is
                invalid, or the layer sets a key and its alias to different values.

        >>> Layer("command line", {"topology.workers": 2, "my.key": "x"}).validated()
        {'topology.stmgrs': 2, 'my.key': 'x'}
        """
        out: dict[str, Any] = {}
        spelled: dict[str, str] = {}
        for name, raw in self.values.items():
            if not isinstance(name, str):
                raise ConfigurationError(
                    f"config keys must be strings, got {name!r} ({type(name).__name__}) "
                    f"in {self.name}"
                )
            key = REGISTRY.lookup(name, self.name)
            if key is None:
                out[name] = raw
                continue
            value = key.check(raw, self.name)
            if key.name in out and out[key.name] != value:
                raise ConfigurationError(
                    f"{self.name} sets both {spelled[key.name]!r} = {out[key.name]!r} and "
                    f"{name!r} = {value!r}; they name the same key {key.name!r}"
                )
            out[key.name] = value
            spelled[key.name] = name
        return out


def merge_layers(*layers: Layer) -> dict[str, Any]:
    """Merge ``layers`` over the registry defaults; a later layer wins per key.

    Returns:
        A new dict holding every registered key (canonical names only) plus the user keys of
        all layers. Mutating it does not affect the registry or the layers.

    Raises:
        ConfigurationError: from `Layer.validated`, or when the merged values break a rule
            tying two keys together (naming both keys, their values and their layers).

    >>> cfg = merge_layers(Layer("cluster", {"topology.stmgrs": 2}), Layer("cli", {"x": 1}))
    >>> cfg["topology.stmgrs"], cfg["topology.debug"], cfg["x"]
    (2, False, 1)
    """
    merged = {name: key.check(key.default, DEFAULTS_LAYER) for name, key in REGISTRY.items()}
    origin = dict.fromkeys(merged, DEFAULTS_LAYER)
    for layer in layers:
        for name, value in layer.validated().items():
            merged[name] = value
            origin[name] = layer.name
    for rule in REGISTRY.orderings:
        low, high = merged[rule.low], merged[rule.high]
        if not rule.holds(low, high):
            relation = "<" if rule.strict else "<="
            raise ConfigurationError(
                f"config key {rule.low!r} = {low!r} (from {origin[rule.low]}) must be "
                f"{relation} {rule.high!r} = {high!r} (from {origin[rule.high]})"
            )
    return merged


def build_config(
    cluster_config: Mapping[str, Any] | None = None,
    topology_config: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Resolve a topology's config: defaults < cluster config < topology config < overrides.

    Args:
        cluster_config: values from the cluster's YAML (see `load_cluster_config`).
        topology_config: the config the topology was built with.
        overrides: command-line values, already parsed (see `parse_override`).

    Returns:
        The validated, fully-defaulted config, as `merge_layers` describes.

    Raises:
        ConfigurationError: naming the key and the layer ("cluster config", "topology config"
            or "command line") at fault.

    >>> build_config({"topology.stmgrs": 2}, {"topology.workers": 3})["topology.stmgrs"]
    3
    """
    return merge_layers(
        Layer("cluster config", cluster_config or {}),
        Layer("topology config", topology_config or {}),
        Layer("command line", overrides or {}),
    )


def parse_override(text: str) -> tuple[str, Any]:
    """Parse a command-line ``key=value`` into the key as written and a typed value.

    Registered keys (or their aliases) are coerced by the key's type: bool accepts
    true/false/yes/no/1/0 in any case; int and float as Python reads them; list and dict as
    JSON; "null"/"none" gives None for nullable keys. The value is then checked against the
    key. A user key's value is read as JSON when possible, else kept as the string.

    Raises:
        ConfigurationError: no "=" or an empty key, an unknown reserved key, or a value that
            cannot be coerced or is invalid for its key.

    >>> parse_override("topology.debug=YES"), parse_override("my.limit=5")
    (('topology.debug', True), ('my.limit', 5))
    """
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ConfigurationError(f"command-line config {text!r}: expected 'key=value'")
    key = REGISTRY.lookup(name, "command line")
    if key is None:
        try:
            return name, json.loads(raw)
        except ValueError:
            return name, raw
        except RecursionError:
            raise ConfigurationError(
                f"command-line config {name!r}: its JSON value nests too deeply"
            ) from None
    word = raw.strip()
    value: Any = raw
    try:
        if key.nullable and word.lower() in ("null", "none"):
            value = None
        elif key.type is bool:
            if word.lower() not in _TRUE + _FALSE:
                raise ValueError(f"expected one of {', '.join(_TRUE + _FALSE)}")
            value = word.lower() in _TRUE
        elif key.type is int:
            value = int(word)
        elif key.type is float:
            value = float(word)
        elif key.type in (list, dict):
            value = json.loads(word)
    except (ValueError, RecursionError) as exc:
        raise ConfigurationError(
            f"config key {key.name!r} (from command line): cannot read {_shown(raw)} as "
            f"{key.type.__name__}: {_shown(str(exc))[1:-1]}"
        ) from None
    return name, key.check(value, "command line")


def _shown(raw: str) -> str:
    """``repr(raw)``, cut short: an error quotes a value, not megabytes of it.

    >>> _shown("x" * 200)[-20:]
    'x...(202 characters)'
    """
    text = repr(raw)
    return text if len(text) <= 80 else f"{text[:79]}...({len(text)} characters)"


def _config_dir(config_path: str | os.PathLike[str] | None) -> Traversable:
    chosen = config_path if config_path is not None else os.environ.get(CONFIG_PATH_ENV)
    if chosen is not None:
        return Path(chosen).expanduser()
    return resources.files("heron_core.config").joinpath("clusters")


def known_clusters(config_path: str | os.PathLike[str] | None = None) -> list[str]:
    """The cluster names (``<name>.yaml`` files) in the config directory, sorted.

    The directory is ``config_path``, else ``$HERON_CONFIG_PATH``, else the built-in one.
    A missing directory has no clusters.

    >>> known_clusters()
    ['local', 'localzk', 'spark']
    """
    directory = _config_dir(config_path)
    if not directory.is_dir():
        return []
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in directory.iterdir()
        if entry.is_file() and entry.name.endswith(".yaml")
    )


def load_cluster_config(
    cluster: str, config_path: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Read and validate ``<cluster>.yaml`` from the config directory (see `known_clusters`).

    Returns:
        The file's values under canonical names (no defaults added), validated with the file's
        path as the layer name.

    Raises:
        ConfigurationError: the cluster is unknown (listing the known ones), the file is not
            valid YAML, breaks a limit of `load_yaml` (too large, expands too much through
            its aliases, nests too deeply) or is not a mapping (naming the file), or a value
            is invalid.

    >>> load_cluster_config("localzk")["heron.class.state.manager"]
    'zookeeper'
    """
    directory = _config_dir(config_path)
    file = directory.joinpath(f"{cluster}.yaml")
    if not file.is_file():
        known = ", ".join(known_clusters(config_path)) or "none"
        raise ConfigurationError(
            f"unknown cluster {cluster!r}: no {cluster}.yaml in {directory}; "
            f"known clusters: {known}"
        )
    source = f"cluster config {file}"
    if isinstance(file, Path):
        values = load_yaml_file(file, source)
    else:  # a built-in config inside the installed package
        values = load_yaml(file.read_text(encoding="utf-8"), source)
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ConfigurationError(
            f"cluster config {file}: expected a mapping of keys to values, "
            f"got {type(values).__name__}"
        )
    return Layer(str(file), values).validated()


RELIABILITY_KEYS = ("topology.reliability.mode", "topology.acker.executors")
"""Keys that hold for the whole topology: tuple trees span components, so acking is on in
every component or in none. A component's own value of one is ignored (as Storm drops such
keys from a component's config): its instances run with the topology's."""


def setting(config: Mapping[str, Any], name: str) -> Any:
    """The value of the registered key ``name`` in ``config``, or the registry's default when
    ``config`` does not hold it: the one place a missing key's value comes from (a merged
    config holds every key; a daemon's own or a test's partial config may not).

    >>> setting({"heron.instance.batch.linger.ms": 5.0}, "heron.instance.batch.linger.ms")
    5.0
    >>> setting({}, "heron.instance.batch.linger.ms")
    1.0
    """
    return config[name] if name in config else REGISTRY[name].default


def acking_enabled(config: Mapping[str, Any]) -> bool:
    """Whether tuple trees are tracked: mode ATLEAST_ONCE and ``topology.acker.executors != 0``.

    Keys missing from ``config`` take their registry defaults.

    >>> acking_enabled({"topology.acker.executors": 0})
    False
    """
    mode = setting(config, "topology.reliability.mode")
    ackers = setting(config, "topology.acker.executors")
    return bool(mode == "ATLEAST_ONCE" and ackers != 0)


def inert_settings(config: Mapping[str, Any]) -> list[str]:
    """One line for each key of ``config`` that this engine accepts but cannot act on
    (`Key.inert`, a JVM setting of Storm's say) and that holds a value other than its default:
    what ``heron submit`` and ``heron run`` print, so that no setting is ignored silently.

    >>> inert_settings({"topology.worker.childopts": "-Xmx2g", "topology.debug": True})
    ["config key 'topology.worker.childopts' = '-Xmx2g' has no effect: no JVM runs here"]
    """
    lines = []
    for name, value in config.items():
        key = REGISTRY.get(name)
        if key is not None and key.inert and value != key.default:
            lines.append(f"config key {name!r} = {value!r} has no effect: {key.inert}")
    return lines


def resolve_path(value: str | os.PathLike[str]) -> Path:
    """A config path value as a `Path`, with ``~`` expanded.

    >>> resolve_path("~/x") == Path.home() / "x"
    True
    """
    return Path(value).expanduser()
