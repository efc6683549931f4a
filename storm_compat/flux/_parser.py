"""Reading Flux YAML into a :class:`FluxDefinition`: ``${...}`` substitution, includes (nested,
cycles rejected), and a check of every entry (unknown keys and missing or mistyped values are
errors naming the file and the entry)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from heron_core.config import MAX_INPUT_BYTES, load_yaml, read_input_text
from heron_core.errors import ConfigurationError
from storm_compat.flux._model import (
    BeanDef,
    ConfigMethodDef,
    FluxDefinition,
    GroupingDef,
    PropertyDef,
    Ref,
    RefList,
    StreamDef,
    TopologySourceDef,
    VertexDef,
)
from storm_compat.flux._substitution import substitute

__all__ = ["GROUPING_TYPES", "load_definition"]

log = logging.getLogger(__name__)

GROUPING_TYPES = (
    "ALL",
    "CUSTOM",
    "DIRECT",
    "SHUFFLE",
    "LOCAL_OR_SHUFFLE",
    "FIELDS",
    "GLOBAL",
    "NONE",
)
"""Flux's grouping types."""

_TOP_KEYS = {"name", "config", "components", "spouts", "bolts", "streams", "includes"}
_TOP_KEYS |= {"topologySource", "workerHooks"}
_BEAN_KEYS = {"id", "className", "constructorArgs", "properties", "configMethods", "factory"}
_BEAN_KEYS |= {"factoryArgs"}
_VERTEX_KEYS = {"parallelism", "numTasks", "onHeapMemoryLoad", "offHeapMemoryLoad", "cpuLoad"}
_VERTEX_KEYS |= {"config"}
_STREAM_KEYS = {"name", "from", "to", "grouping"}
_GROUPING_KEYS = {"type", "streamId", "args", "customClass"}
_INCLUDE_KEYS = {"resource", "file", "override"}

T = TypeVar("T")

_SHOWN = 60
_INCLUDE_SUFFIXES = (".yaml", ".yml")


def load_definition(path: Path, properties: Mapping[str, str]) -> FluxDefinition:
    """The definition in Flux file ``path``, with its includes merged.

    Includes are files relative to the including file, or (``resource: true``) paths
    relative to the directory of ``path`` (which stands for Storm's classpath); an included
    file's own includes are followed too. With ``override: true`` an included file's name,
    config keys and same-id components, spouts and bolts replace the includer's; otherwise
    only what the includer lacks is added. Streams are always added.

    Every file is read by the limited loader (`heron_core.config.load_yaml`): a file that is too
    large, expands too much through its aliases or nests too deeply is refused.

    Raises:
        ConfigurationError: a file is missing, breaks a limit of the loader or is not valid
            Flux (naming the file and the entry), or includes form a cycle.
    """
    path = path.resolve()
    return _load(path, properties, path.parent, ())


def _load(
    path: Path, properties: Mapping[str, str], root: Path, stack: tuple[Path, ...]
) -> FluxDefinition:
    source = f"flux file {str(path)!r}"
    text = read_input_text(path, source)
    data = load_yaml(substitute(text, properties, str(path), limit=MAX_INPUT_BYTES), source)
    entries = _Entries(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        # the type only: an included file that is not Flux must not be shown in the error
        entries.fail("the file", f"expected a map of Flux sections, got {type(data).__name__}")
    entries.keys("the file", data, _TOP_KEYS)
    if data.get("workerHooks"):
        entries.fail("workerHooks", "worker hooks are not supported (there are no JVM workers)")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        entries.fail("name", f"expected a str, got {name!r}")
    definition = FluxDefinition(
        path=str(path),
        name=name,
        config=entries.mapping("config", data.get("config")),
        components=tuple(
            entries.bean(f"components[{i}]", raw, set(), needs_id=True)
            for i, raw in enumerate(entries.items("components", data))
        ),
        spouts=tuple(
            entries.vertex(f"spouts[{i}]", raw)
            for i, raw in enumerate(entries.items("spouts", data))
        ),
        bolts=tuple(
            entries.vertex(f"bolts[{i}]", raw) for i, raw in enumerate(entries.items("bolts", data))
        ),
        streams=tuple(
            entries.stream(f"streams[{i}]", raw)
            for i, raw in enumerate(entries.items("streams", data))
        ),
        topology_source=entries.topology_source(data.get("topologySource")),
    )
    for section in ("components", "spouts", "bolts"):
        ids = [bean.id for bean in _beans(definition, section)]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            entries.fail(section, f"ids defined twice: {duplicates}")
    for i, raw in enumerate(entries.items("includes", data)):
        include, override = entries.include(f"includes[{i}]", raw, root)
        if include in (*stack, path):
            chain = " -> ".join(str(p) for p in (*stack, path, include))
            entries.fail(f"includes[{i}]", f"cycle of includes: {chain}")
        included = _load(include, properties, root, (*stack, path))
        definition = _merge(definition, included, override)
    return definition


def _beans(definition: FluxDefinition, section: str) -> list[BeanDef]:
    if section == "components":
        return list(definition.components)
    vertices = definition.spouts if section == "spouts" else definition.bolts
    return [vertex.bean for vertex in vertices]


def _merge(base: FluxDefinition, extra: FluxDefinition, override: bool) -> FluxDefinition:
    name = extra.name if extra.name is not None and (override or base.name is None) else base.name
    config = {**base.config, **extra.config} if override else {**extra.config, **base.config}
    source = extra.topology_source if extra.topology_source and override else None
    return replace(
        base,
        name=name,
        config=config,
        components=_by_id(base.components, extra.components, override, lambda b: b.id),
        spouts=_by_id(base.spouts, extra.spouts, override, lambda v: v.id),
        bolts=_by_id(base.bolts, extra.bolts, override, lambda v: v.id),
        streams=base.streams + extra.streams,
        topology_source=source or base.topology_source or extra.topology_source,
    )


def _by_id(base: tuple[T, ...], extra: tuple[T, ...], override: bool, key: Any) -> tuple[T, ...]:
    merged = {key(item): item for item in base}
    for item in extra:
        if key(item) not in merged or override:
            merged[key(item)] = item
        else:
            log.warning("flux include: %r is already defined and override is false", key(item))
    return tuple(merged.values())


def _kind(value: object) -> str:
    return f"{type(value).__name__} {_short(value)}"


def _short(value: object) -> str:
    """``repr(value)``, cut to `_SHOWN` characters: an error quotes what it points at, not a
    whole file's worth of it.

    >>> _short("abc"), _short("x" * 100)[-24:]
    ("'abc'", 'xxxxx...(102 characters)')
    """
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 1]}...({len(text)} characters)"


class _Entries:
    """Checks the entries of one file; every error names the file and the entry."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, entry: str, message: str) -> NoReturn:
        raise ConfigurationError(f"flux file {str(self.path)!r}, {entry}: {message}")

    def keys(self, entry: str, raw: Mapping[str, Any], allowed: set[str]) -> None:
        unknown = sorted(str(k)[:_SHOWN] for k in raw if k not in allowed)
        if unknown:
            self.fail(entry, f"unknown keys {unknown}; expected some of {sorted(allowed)}")

    def items(self, section: str, data: Mapping[str, Any]) -> list[Any]:
        value = data.get(section)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(section, f"expected a list, got {_kind(value)}")
        return value

    def mapping(self, entry: str, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            self.fail(entry, f"expected a map with str keys, got {_kind(value)}")
        return dict(value)

    def string(self, entry: str, raw: Mapping[str, Any], key: str, required: bool = True) -> Any:
        value = raw.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            what = (
                f"missing {key}" if value is None else f"{key} must be a str, got {_short(value)}"
            )
            self.fail(entry, what)
        return value

    def number(self, entry: str, raw: Mapping[str, Any], key: str, integral: bool) -> Any:
        value = raw.get(key)
        if value is None:
            return None
        kind = "an int" if integral else "a number"
        if isinstance(value, bool) or not isinstance(value, int if integral else int | float):
            self.fail(entry, f"{key} must be {kind}, got {_short(value)}")
        return value

    def args(self, entry: str, raw: Mapping[str, Any], key: str) -> tuple[Any, ...]:
        value = raw.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.fail(entry, f"{key} must be a list, got {_kind(value)}")
        return tuple(self.reference(entry, item) for item in value)

    def reference(self, entry: str, item: Any) -> Any:
        if isinstance(item, dict) and set(item) == {"ref"}:
            return Ref(self.string(entry, item, "ref"))
        if isinstance(item, dict) and set(item) == {"reflist"}:
            ids = item["reflist"]
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                self.fail(entry, f"reflist must be a list of component ids, got {_short(ids)}")
            return RefList(tuple(ids))
        return item

    def bean(self, entry: str, raw: Any, extra_keys: set[str], needs_id: bool) -> BeanDef:
        if not isinstance(raw, dict):
            self.fail(entry, f"expected a map, got {_kind(raw)}")
        if needs_id:
            identifier = self.string(entry, raw, "id")
            entry = f"{entry} (id {identifier!r})"
        else:
            identifier = ""
        self.keys(entry, raw, _BEAN_KEYS | extra_keys)
        properties = []
        for i, prop in enumerate(self.args(entry, raw, "properties")):
            at = f"{entry}, properties[{i}]"
            if not isinstance(prop, dict):
                self.fail(at, f"expected a map with name and value (or ref), got {_kind(prop)}")
            self.keys(at, prop, {"name", "value", "ref"})
            ref = self.string(at, prop, "ref", required=False)
            properties.append(PropertyDef(self.string(at, prop, "name"), prop.get("value"), ref))
        methods = []
        for i, method in enumerate(self.args(entry, raw, "configMethods")):
            at = f"{entry}, configMethods[{i}]"
            if not isinstance(method, dict):
                self.fail(at, f"expected a map with name and args, got {_kind(method)}")
            self.keys(at, method, {"name", "args"})
            methods.append(
                ConfigMethodDef(self.string(at, method, "name"), self.args(at, method, "args"))
            )
        return BeanDef(
            where=f"flux file {str(self.path)!r}, {entry}",
            id=identifier,
            class_name=self.string(entry, raw, "className"),
            constructor_args=self.args(entry, raw, "constructorArgs"),
            factory=self.string(entry, raw, "factory", required=False),
            factory_args=self.args(entry, raw, "factoryArgs"),
            properties=tuple(properties),
            config_methods=tuple(methods),
        )

    def vertex(self, entry: str, raw: Any) -> VertexDef:
        bean = self.bean(entry, raw, _VERTEX_KEYS, needs_id=True)
        entry = f"{entry} (id {bean.id!r})"
        parallelism = self.number(entry, raw, "parallelism", True)
        if parallelism is not None and parallelism < 1:
            self.fail(entry, f"parallelism must be >= 1, got {parallelism}")
        return VertexDef(
            bean=bean,
            parallelism=1 if parallelism is None else parallelism,
            num_tasks=self.number(entry, raw, "numTasks", True),
            on_heap_memory=self.number(entry, raw, "onHeapMemoryLoad", False),
            off_heap_memory=self.number(entry, raw, "offHeapMemoryLoad", False),
            cpu_load=self.number(entry, raw, "cpuLoad", False),
            config=self.mapping(f"{entry}, config", raw.get("config")),
        )

    def stream(self, entry: str, raw: Any) -> StreamDef:
        if not isinstance(raw, dict):
            self.fail(entry, f"expected a map with from, to and grouping, got {_kind(raw)}")
        self.keys(entry, raw, _STREAM_KEYS)
        source, target = self.string(entry, raw, "from"), self.string(entry, raw, "to")
        entry = f"{entry} ({source} --> {target})"
        grouping = raw.get("grouping")
        if not isinstance(grouping, dict):
            self.fail(entry, f"grouping must be a map with a type, got {_kind(grouping)}")
        self.keys(f"{entry}, grouping", grouping, _GROUPING_KEYS)
        kind = grouping.get("type")
        if kind not in GROUPING_TYPES:
            self.fail(
                entry,
                f"grouping type must be one of {', '.join(GROUPING_TYPES)}, got {_short(kind)}",
            )
        args = grouping.get("args")
        if kind == "FIELDS" and (
            not isinstance(args, list) or not args or not all(isinstance(a, str) for a in args)
        ):
            self.fail(
                entry, f"a FIELDS grouping needs args: a list of field names, got {_short(args)}"
            )
        custom = None
        if kind == "CUSTOM":
            if grouping.get("customClass") is None:
                self.fail(entry, "a CUSTOM grouping needs customClass")
            custom = self.bean(
                f"{entry}, customClass", grouping["customClass"], set(), needs_id=False
            )
        return StreamDef(
            where=f"flux file {str(self.path)!r}, {entry}",
            source=source,
            target=target,
            grouping=GroupingDef(
                type=kind,
                stream_id=self.string(entry, grouping, "streamId", required=False) or "default",
                args=tuple(args or ()) if kind == "FIELDS" else (),
                custom_class=custom,
            ),
        )

    def topology_source(self, raw: Any) -> TopologySourceDef | None:
        if raw is None:
            return None
        bean = self.bean("topologySource", raw, {"methodName"}, needs_id=False)
        method = self.string("topologySource", raw, "methodName", required=False)
        return TopologySourceDef(bean, method or "getTopology")

    def include(self, entry: str, raw: Any, root: Path) -> tuple[Path, bool]:
        if not isinstance(raw, dict):
            self.fail(entry, f"expected a map with file (and resource, override), got {_kind(raw)}")
        self.keys(entry, raw, _INCLUDE_KEYS)
        file = self.string(entry, raw, "file")
        flags = {key: raw.get(key, False) for key in ("resource", "override")}
        for key, value in flags.items():
            if not isinstance(value, bool):
                self.fail(entry, f"{key} must be true or false, got {_short(value)}")
        base = root if flags["resource"] else self.path.parent
        try:
            included = (base / file.lstrip("/") if flags["resource"] else base / file).resolve()
        except (OSError, ValueError) as exc:
            self.fail(entry, f"cannot resolve included file {file!r}: {exc}")
        if included.suffix not in _INCLUDE_SUFFIXES:
            self.fail(
                entry,
                f"included file {str(included)!r} is not a Flux file (.yaml or .yml); it is "
                "not read",
            )
        if not included.is_file():
            self.fail(entry, f"included file {str(included)!r} does not exist")
        return included, flags["override"]
