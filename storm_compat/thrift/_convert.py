"""Storm's thrift ``StormTopology`` <-> the kernel's `LogicalPlan`.

Storm describes a topology as a ``StormTopology`` struct: spouts and bolts by name, each with a
component object (a shell command, a Java object or serialized Java) and a ``ComponentCommon``
(inputs with their groupings, output streams, parallelism hint, JSON component config). The
conversion is exact for everything the kernel can run: shell components become whatever the
``shell`` mapper returns (by default a multilang `ShellSpec`), groupings map one to one, and
custom groupings travel as pickles. Java objects cannot run here and are reported, naming the
component.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from thriftpy2.utils import deserialize, serialize

from heron_core.api import CustomGrouping, Grouping
from heron_core.config import setting
from heron_core.errors import ConfigurationError, TopologyValidationError
from heron_core.plan import (
    ComponentDef,
    GroupingKind,
    InputDef,
    LogicalPlan,
    PythonSpec,
    ShellSpec,
    StreamDef,
)
from heron_core.plugins import resolve_class
from storm_compat.thrift._module import storm_thrift

__all__ = [
    "SERIALIZER_KEY",
    "ObjectMapper",
    "ShellCommand",
    "ShellMapper",
    "multilang_spec",
    "plan_to_topology",
    "read_topology",
    "topology_to_plan",
    "write_topology",
]

SERIALIZER_KEY = "topology.multilang.serializer"
"""The config key naming the wire format of shell components (``json`` or ``msgpack``)."""

_JAVA_MAGIC = b"\xac\xed"  # java.io.ObjectOutputStream's stream header
_PICKLE_MAGIC = 0x80  # pickle protocol 2 and later start with the PROTO opcode
_SIMPLE_GROUPINGS = (
    ("shuffle", GroupingKind.SHUFFLE),
    ("all", GroupingKind.ALL),
    ("none", GroupingKind.NONE),
    ("direct", GroupingKind.DIRECT),
    ("local_or_shuffle", GroupingKind.LOCAL_OR_SHUFFLE),
)
_JAVA_HINT = "Java components cannot run here: replace it with a Python or a shell (multilang) one"


@dataclass(frozen=True)
class ShellCommand:
    """A shell component of a ``StormTopology``, as a `ShellMapper` sees it.

    Attributes:
        component: the component's name.
        is_spout: spout or bolt.
        execution_command: the thrift ``ShellComponent.execution_command`` (the program).
        script: the thrift ``ShellComponent.script`` (Storm passes it as one argument).
        serializer: ``topology.multilang.serializer`` of the component (its own config, else
            the topology's, else ``"json"``).
        config: the component config (from the JSON ``json_conf``).
    """

    component: str
    is_spout: bool
    execution_command: str
    script: str
    serializer: str
    config: Mapping[str, Any]

    @property
    def argv(self) -> tuple[str, ...]:
        """Storm's argv: ``(execution_command, script)``, without an empty script."""
        return (self.execution_command, self.script) if self.script else (self.execution_command,)


ShellMapper = Callable[[ShellCommand], PythonSpec | ShellSpec]
"""Chooses how a shell component runs: a `ShellSpec` (a multilang subprocess) or a
`PythonSpec` (e.g. streamparse's components run in-process)."""

ObjectMapper = Callable[[ComponentDef], Any]
"""The thrift ``ComponentObject`` of a component, or None for the default (a `ShellSpec`
becomes a ``ShellComponent``; anything else has no thrift form)."""


def multilang_spec(command: ShellCommand) -> ShellSpec:
    """The default `ShellMapper`: run the command as a multilang subprocess.

    >>> multilang_spec(ShellCommand("split", False, "python3", "split.py", "json", {}))
    ShellSpec(command=('python3', 'split.py'), serializer='json')
    """
    return ShellSpec(command.argv, command.serializer)


def read_topology(data: bytes) -> Any:
    """Decode a ``StormTopology`` from Storm's binary thrift encoding (what streamparse's
    ``Topology.write`` produces).

    Raises:
        ConfigurationError: ``data`` is not a thrift ``StormTopology`` (truncated, or not
            thrift at all), saying where decoding stopped.

    >>> read_topology(bytes([13, 0, 1]))
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: 3 bytes are not a thrift StormTopology: \
a container header at byte 3 runs past the end (3 bytes)
    """
    problem = _binary_problem(data)
    if problem is not None:
        raise ConfigurationError(f"{len(data)} bytes are not a thrift StormTopology: {problem}")
    try:
        return deserialize(storm_thrift().StormTopology(), data)
    except Exception as exc:  # thriftpy2 raises struct, type and system errors on bad bytes
        raise ConfigurationError(
            f"{len(data)} bytes are not a thrift StormTopology: decoding failed "
            f"({type(exc).__name__}: {str(exc)[:200]})"
        ) from None


_FIXED = {2: 1, 3: 1, 4: 8, 6: 2, 8: 4, 10: 8}  # bool, byte, double, i16, i32, i64: sizes
_STRING, _STRUCT, _MAP, _SET, _LIST = 11, 12, 13, 14, 15
_MAX_DEPTH = 64


def _binary_problem(data: bytes) -> str | None:
    """Why ``data`` is not one struct of thrift's binary protocol, or None: a walk over its
    fields that checks every type, length and container size against the bytes left, so that
    thriftpy2 never loops over a container that claims more elements than bytes follow (it
    would, for two billion elements of a type it skips without reading).

    >>> _binary_problem(bytes([15, 0, 1, 2, 0x7F, 0xFF, 0xFF, 0xFF]))
    'a list at byte 3 claims 2147483647 elements but 0 bytes follow'
    >>> _binary_problem(bytes([0])) is None
    True
    """
    end = len(data)

    def need(at: int, count: int, what: str) -> int:
        if count < 0 or at + count > end:
            raise ValueError(f"{what} at byte {at} runs past the end ({end} bytes)")
        return at + count

    def size(at: int) -> int:
        need(at, 4, "a length")
        return int.from_bytes(data[at : at + 4], "big", signed=True)

    def value(at: int, kind: int, depth: int) -> int:
        if depth > _MAX_DEPTH:
            raise ValueError(f"values nest deeper than {_MAX_DEPTH} levels at byte {at}")
        if kind in _FIXED:
            return need(at, _FIXED[kind], "a number")
        if kind == _STRING:
            return need(at + 4, size(at), "a string")
        if kind == _STRUCT:
            while True:
                need(at, 1, "a field")
                field = data[at]
                if field == 0:
                    return at + 1
                at = value(need(at, 3, "a field header"), field, depth + 1)
        if kind in (_MAP, _SET, _LIST):
            header = 6 if kind == _MAP else 5
            need(at, header, "a container header")
            types = data[at : at + (2 if kind == _MAP else 1)]
            count = size(at + header - 4)
            at += header
            name = {_MAP: "a map", _SET: "a set", _LIST: "a list"}[kind]
            if count < 0 or count > end - at:
                raise ValueError(
                    f"{name} at byte {at - header} claims {count} elements but {end - at} "
                    "bytes follow"
                )
            for _ in range(count):
                for element in types:
                    at = value(at, element, depth + 1)
            return at
        raise ValueError(f"unknown thrift type {kind} at byte {at}")

    try:
        value(0, _STRUCT, 0)
    except ValueError as exc:
        return str(exc)
    return None


def write_topology(topology: Any) -> bytes:
    """Encode a ``StormTopology`` with Storm's binary thrift protocol."""
    data: bytes = serialize(topology)
    return data


# ------------------------------------------------------------------ thrift -> plan


def topology_to_plan(
    topology: Any,
    name: str,
    config: Mapping[str, Any] | None = None,
    *,
    topology_id: str | None = None,
    shell: ShellMapper = multilang_spec,
) -> LogicalPlan:
    """The validated logical plan of a thrift ``StormTopology``.

    Args:
        topology: a ``StormTopology`` of `storm_thrift` (e.g. a streamparse ``Topology``
            class's ``thrift_topology``).
        name: the topology name.
        config: the topology config (Storm keeps it outside the ``StormTopology``).
        topology_id: the plan's id (default ``<name>-<uuid hex>``).
        shell: maps each shell component to its spec (default: a multilang subprocess).

    Raises:
        TopologyValidationError: naming the component, for a Java object or serialized Java
            component (it needs a Python or shell replacement), a Java custom grouping, a
            malformed struct (no component object, a non-JSON ``json_conf``, a parallelism
            hint that is not an int), state spouts or worker hooks, or an invalid topology.

    >>> st = storm_thrift()
    >>> common = st.ComponentCommon(
    ...     inputs={}, streams={"default": st.StreamInfo(["word"], False)}, parallelism_hint=2)
    >>> spout = st.SpoutSpec(st.ComponentObject(shell=st.ShellComponent("python3", "w.py")), common)
    >>> plan = topology_to_plan(st.StormTopology({"words": spout}, {}, {}), "wc")
    >>> plan.component("words").spec, plan.component("words").parallelism
    (ShellSpec(command=('python3', 'w.py'), serializer='json'), 2)
    """
    st = storm_thrift()
    config = dict(config or {})

    def fail(component: str | None, message: str) -> NoReturn:
        raise TopologyValidationError(name, component, message)

    if not isinstance(topology, st.StormTopology):
        fail(None, f"expected a thrift StormTopology, got {type(topology).__name__}")
    if topology.state_spouts:
        fail(None, f"has state spouts ({', '.join(topology.state_spouts)}); Storm never ran them")
    if topology.worker_hooks:
        fail(
            None,
            f"has {len(topology.worker_hooks)} worker hooks (serialized Java objects); "
            "they cannot run here",
        )
    default_serializer = setting(config, SERIALIZER_KEY)
    components = []
    for is_spout, table in ((True, topology.spouts), (False, topology.bolts)):
        for cid, spec in (table or {}).items():
            obj = spec.spout_object if is_spout else spec.bolt_object
            components.append(
                _component(fail, cid, is_spout, obj, spec.common, default_serializer, shell)
            )
    plan = LogicalPlan(
        name=name,
        id=topology_id or f"{name}-{uuid.uuid4().hex}",
        components=tuple(components),
        config_items=tuple(config.items()),
    )
    plan.validate()
    return plan


def _component(
    fail: Callable[[str | None, str], NoReturn],
    cid: str,
    is_spout: bool,
    obj: Any,
    common: Any,
    default_serializer: str,
    shell: ShellMapper,
) -> ComponentDef:
    if common is None:
        fail(cid, "has no ComponentCommon (inputs, streams, parallelism)")
    config = _json_conf(fail, cid, common.json_conf)
    par = 1 if common.parallelism_hint is None else common.parallelism_hint
    if type(par) is not int:
        fail(cid, f"parallelism_hint must be an int, got {par!r}")
    spec = _spec(fail, cid, is_spout, obj, config, default_serializer, shell)
    outputs = tuple(
        StreamDef(sid, tuple(info.output_fields or ()), bool(info.direct))
        for sid, info in (common.streams or {}).items()
    )
    inputs = tuple(
        InputDef(stream.componentId, stream.streamId, *_grouping(fail, cid, stream, grouping))
        for stream, grouping in (common.inputs or {}).items()
    )
    return ComponentDef(cid, is_spout, spec, par, tuple(config.items()), outputs, inputs)


def _json_conf(
    fail: Callable[[str | None, str], NoReturn], cid: str, text: str | None
) -> dict[str, Any]:
    if not text:
        return {}
    try:
        config = json.loads(text)
    except ValueError as exc:
        fail(cid, f"json_conf is not JSON ({exc}): {text!r}")
    if not isinstance(config, dict):
        fail(cid, f"json_conf must be a JSON object, got {text!r}")
    return config


def _spec(
    fail: Callable[[str | None, str], NoReturn],
    cid: str,
    is_spout: bool,
    obj: Any,
    config: Mapping[str, Any],
    default_serializer: str,
    shell: ShellMapper,
) -> PythonSpec | ShellSpec:
    if obj is None:
        fail(cid, "has no component object (shell, java_object or serialized_java)")
    if obj.shell is not None:
        command = obj.shell.execution_command
        if not command:
            fail(cid, "shell component without an execution_command")
        serializer = config.get(SERIALIZER_KEY, default_serializer)
        return shell(
            ShellCommand(cid, is_spout, command, obj.shell.script or "", serializer, config)
        )
    if obj.java_object is not None:
        fail(
            cid, f"is the Java class {obj.java_object.full_class_name} (a JavaObject); {_JAVA_HINT}"
        )
    if obj.serialized_java is not None:
        fail(cid, f"is a serialized Java object ({len(obj.serialized_java)} bytes); {_JAVA_HINT}")
    fail(cid, "has an empty component object (neither shell, java_object nor serialized_java)")


def _grouping(
    fail: Callable[[str | None, str], NoReturn], cid: str, stream: Any, grouping: Any
) -> tuple[GroupingKind, tuple[str, ...], bytes]:
    where = f"input from {stream.componentId!r} stream {stream.streamId!r}"
    if grouping is None:
        fail(cid, f"{where} has no grouping")
    if grouping.fields is not None:
        fields = tuple(grouping.fields)
        return (GroupingKind.FIELDS, fields, b"") if fields else (GroupingKind.LOWEST, (), b"")
    for attr, kind in _SIMPLE_GROUPINGS:
        if getattr(grouping, attr) is not None:
            return kind, (), b""
    if grouping.custom_serialized is not None:
        data = bytes(grouping.custom_serialized)
        if data.startswith(_JAVA_MAGIC):
            fail(
                cid,
                f"{where}: the custom grouping is serialized Java; replace it with a "
                "pickled heron_core.api.CustomGrouping",
            )
        if not data or data[0] != _PICKLE_MAGIC:
            fail(cid, f"{where}: custom_serialized is not a pickled CustomGrouping")
        return GroupingKind.CUSTOM, (), data
    if grouping.custom_object is not None:
        return GroupingKind.CUSTOM, (), _custom_object(fail, cid, where, grouping.custom_object)
    fail(cid, f"{where} has an empty grouping")


def _custom_object(
    fail: Callable[[str | None, str], NoReturn], cid: str, where: str, obj: Any
) -> bytes:
    """A JavaObject custom grouping whose class name is a Python CustomGrouping's path."""
    class_name = obj.full_class_name
    hint = (
        f"{where}: custom grouping {class_name!r} must name a heron_core.api.CustomGrouping "
        "subclass ('package.module.Class'); Java groupings cannot run here"
    )
    try:
        cls = resolve_class(class_name)
    except ConfigurationError as exc:
        fail(cid, f"{hint} ({exc})")
    if not (isinstance(cls, type) and issubclass(cls, CustomGrouping)):
        fail(cid, hint)
    args = [_java_arg(arg) for arg in obj.args_list or ()]
    try:
        return Grouping.custom(cls(*args)).custom_object
    except Exception as exc:
        fail(cid, f"{where}: building custom grouping {class_name}({args}) raised {exc!r}")


def _java_arg(arg: Any) -> Any:
    for value in vars(arg).values():
        if value is not None:
            return value
    return None


# ------------------------------------------------------------------ plan -> thrift


def plan_to_topology(plan: LogicalPlan, *, component_object: ObjectMapper | None = None) -> Any:
    """The thrift ``StormTopology`` of a plan (the plan's config is not part of it).

    A `ShellSpec` becomes ``ShellComponent(command[0], " ".join(command[1:]))``: Storm passes
    the script as one argument, so only commands of at most two items come back unchanged.
    A shell component whose serializer differs from the configured one gets
    ``topology.multilang.serializer`` in its ``json_conf``.

    Args:
        plan: the logical plan.
        component_object: gives the ``ComponentObject`` of components it knows (e.g.
            streamparse's in-process components) and None for the others.

    Raises:
        TopologyValidationError: naming the component, for a Python component the mapper does
            not know (thrift has no form for it), a partial-key grouping (Storm expresses it as
            serialized Java) or a component config that is not JSON.

    >>> spout = ComponentDef("words", True, ShellSpec(("python3", "w.py")),
    ...                      outputs=(StreamDef("default", ("word",)),))
    >>> topology = plan_to_topology(LogicalPlan("wc", "wc-1", (spout,)))
    >>> topology.spouts["words"].spout_object.shell
    ShellComponent(execution_command='python3', script='w.py')
    """
    st = storm_thrift()

    def fail(component: str, message: str) -> NoReturn:
        raise TopologyValidationError(plan.name, component, message)

    default_serializer = setting(plan.config, SERIALIZER_KEY)
    spouts: dict[str, Any] = {}
    bolts: dict[str, Any] = {}
    for comp in plan.components:
        config = comp.config
        obj = component_object(comp) if component_object is not None else None
        if obj is None:
            spec = comp.spec
            if not isinstance(spec, ShellSpec):
                fail(
                    comp.name,
                    f"is a Python component ({spec.class_path}); a thrift "
                    "StormTopology has no form for it",
                )
            obj = st.ComponentObject(
                shell=st.ShellComponent(spec.command[0], " ".join(spec.command[1:]))
            )
            if spec.serializer != config.get(SERIALIZER_KEY, default_serializer):
                config[SERIALIZER_KEY] = spec.serializer
        try:
            json_conf = json.dumps(config)
        except (TypeError, ValueError) as exc:
            fail(comp.name, f"the component config is not JSON ({exc})")
        common = st.ComponentCommon(
            inputs={
                st.GlobalStreamId(i.component, i.stream): _thrift_grouping(fail, comp.name, i)
                for i in comp.inputs
            },
            streams={s.stream_id: st.StreamInfo(list(s.fields), s.direct) for s in comp.outputs},
            parallelism_hint=comp.parallelism,
            json_conf=json_conf,
        )
        if comp.is_spout:
            spouts[comp.name] = st.SpoutSpec(spout_object=obj, common=common)
        else:
            bolts[comp.name] = st.Bolt(bolt_object=obj, common=common)
    return st.StormTopology(spouts=spouts, bolts=bolts, state_spouts={})


def _thrift_grouping(fail: Callable[[str, str], NoReturn], cid: str, inp: InputDef) -> Any:
    st = storm_thrift()
    kind = inp.grouping
    if kind is GroupingKind.FIELDS:
        return st.Grouping(fields=list(inp.fields))
    if kind is GroupingKind.LOWEST:
        return st.Grouping(fields=[])
    if kind is GroupingKind.CUSTOM:
        return st.Grouping(custom_serialized=inp.custom)
    for attr, simple in _SIMPLE_GROUPINGS:
        if kind is simple:
            return st.Grouping(**{attr: st.NullStruct()})
    fail(
        cid,
        f"input from {inp.component!r} stream {inp.stream!r}: a {kind.name} grouping has "
        "no thrift form",
    )
