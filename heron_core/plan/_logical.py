"""The logical plan as frozen dataclasses, and its exact mapping to ``topology_pb2.Topology``.

Every front end (the native API, the Storm facade, streamparse, Flux) produces a
:class:`LogicalPlan`; the kernel reads it. ``to_proto`` / ``from_proto`` round-trip exactly,
and ``validate`` is the one place that decides whether a plan is a valid topology.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NoReturn, TypeAlias

from heron_core.config.codec import config_from_proto, config_to_proto
from heron_core.errors import TopologyValidationError
from heron_core.proto import topology_pb2

__all__ = [
    "ComponentDef",
    "ConfigItems",
    "GroupingKind",
    "InputDef",
    "LogicalPlan",
    "PythonSpec",
    "ShellSpec",
    "StreamDef",
    "TopologyState",
]

ConfigItems: TypeAlias = tuple[tuple[str, Any], ...]
"""A frozen config: ``(key, value)`` pairs sorted by key, one pair per key."""

_RESERVED_PREFIX = "__"  # system components and streams ("__system", "__tick")
_SERIALIZERS = ("json", "msgpack")


class GroupingKind(enum.IntEnum):
    """How a bolt's input is partitioned over its tasks; values are ``topology_pb2.Grouping``."""

    SHUFFLE = topology_pb2.SHUFFLE
    FIELDS = topology_pb2.FIELDS
    ALL = topology_pb2.ALL
    LOWEST = topology_pb2.LOWEST
    NONE = topology_pb2.NONE
    DIRECT = topology_pb2.DIRECT
    CUSTOM = topology_pb2.CUSTOM
    LOCAL_OR_SHUFFLE = topology_pb2.LOCAL_OR_SHUFFLE
    PARTIAL_KEY = topology_pb2.PARTIAL_KEY


_KEYED_GROUPINGS = (GroupingKind.FIELDS, GroupingKind.PARTIAL_KEY)


class TopologyState(enum.IntEnum):
    """The topology's run state; values are ``topology_pb2.TopologyState``."""

    RUNNING = topology_pb2.RUNNING
    PAUSED = topology_pb2.PAUSED
    KILLED = topology_pb2.KILLED


def _freeze_config(config: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> ConfigItems:
    # dict() also drops repeated keys (the last wins), as a dict literal would.
    # Sorting by str(key) never raises, so a bad key reaches validate() and its message.
    return tuple(sorted(dict(config).items(), key=lambda kv: str(kv[0])))


@dataclass(frozen=True, slots=True)
class PythonSpec:
    """A Python component: the instance process imports ``class_path``.

    Attributes:
        class_path: ``"package.module:QualName"``, importable with the topology's code
            directory on ``sys.path``.
        pickled_object: empty to instantiate the class with no arguments, otherwise a pickle
            of the configured instance.
    """

    class_path: str
    pickled_object: bytes = b""


@dataclass(frozen=True, slots=True)
class ShellSpec:
    """A component run as a subprocess speaking Storm's multilang protocol.

    Attributes:
        command: the argv of the subprocess.
        serializer: ``"json"`` or ``"msgpack"``.
    """

    command: tuple[str, ...]
    serializer: str = "json"


@dataclass(frozen=True, slots=True)
class StreamDef:
    """An output stream a component declares.

    Attributes:
        stream_id: the stream's name (``"default"`` unless declared otherwise).
        fields: the field names, in emit order.
        direct: only DIRECT groupings may subscribe; emitters name the target task.
    """

    stream_id: str
    fields: tuple[str, ...] = ()
    direct: bool = False


@dataclass(frozen=True, slots=True)
class InputDef:
    """One subscription of a bolt.

    Attributes:
        component: the source component's name.
        stream: the source stream.
        grouping: how tuples are spread over the bolt's tasks.
        fields: the key fields of FIELDS and PARTIAL_KEY groupings, empty otherwise.
        custom: the pickled ``CustomGrouping`` of a CUSTOM grouping, empty otherwise.
    """

    component: str
    stream: str
    grouping: GroupingKind
    fields: tuple[str, ...] = ()
    custom: bytes = b""


@dataclass(frozen=True)
class ComponentDef:
    """A spout or a bolt of the logical plan.

    Attributes:
        name: unique in the topology; must not start with ``"__"``.
        is_spout: a spout (no inputs) or a bolt (at least one input).
        spec: how an instance process builds the user object.
        parallelism: the number of tasks, at least 1.
        config_items: the component config (overrides the topology config) as ``(key,
            value)`` pairs, sorted by key on construction; read it with :attr:`config`.
        outputs: the declared output streams.
        inputs: the subscriptions (bolts only).
    """

    name: str
    is_spout: bool
    spec: PythonSpec | ShellSpec
    parallelism: int = 1
    config_items: ConfigItems = field(default=(), hash=False)
    outputs: tuple[StreamDef, ...] = ()
    inputs: tuple[InputDef, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "config_items", _freeze_config(self.config_items))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "inputs", tuple(self.inputs))

    @property
    def config(self) -> dict[str, Any]:
        """A deep copy of the component config (changing it does not change the plan)."""
        return copy.deepcopy(dict(self.config_items))


@dataclass(frozen=True)
class _Index:
    by_name: dict[str, ComponentDef]
    fields: dict[tuple[str, str], tuple[str, ...]]
    consumers: dict[tuple[str, str], tuple[tuple[str, InputDef], ...]]


@dataclass(frozen=True)
class LogicalPlan:
    """A topology: its components, their streams and subscriptions, and its config.

    Attributes:
        name: the topology name (non-empty, no ``"."`` or ``"/"``).
        id: unique per submission.
        components: spouts first, then bolts, each in definition order (the constructor
            reorders stably, so the protobuf round trip is exact).
        config_items: the topology config as ``(key, value)`` pairs, sorted by key on
            construction; read it with :attr:`config`.
        state: RUNNING or PAUSED (KILLED only in stored plans of killed topologies).

    Example:
        >>> spout = ComponentDef("words", True, ShellSpec(("python3", "w.py")),
        ...                      outputs=(StreamDef("default", ("word",)),))
        >>> count = ComponentDef("count", False, PythonSpec("app:Count"), parallelism=2,
        ...                      inputs=(InputDef("words", "default", GroupingKind.FIELDS,
        ...                                       ("word",)),))
        >>> plan = LogicalPlan("wc", "wc-1", (spout, count), (("topology.debug", True),))
        >>> plan.validate()
        >>> LogicalPlan.from_proto(plan.to_proto()) == plan
        True
        >>> [name for name, _ in plan.consumers("words", "default")]
        ['count']
    """

    name: str
    id: str
    components: tuple[ComponentDef, ...]
    config_items: ConfigItems = field(default=(), hash=False)
    state: TopologyState = TopologyState.RUNNING

    def __post_init__(self) -> None:
        ordered = sorted(self.components, key=lambda c: not c.is_spout)
        object.__setattr__(self, "components", tuple(ordered))
        object.__setattr__(self, "config_items", _freeze_config(self.config_items))

    @property
    def config(self) -> dict[str, Any]:
        """A deep copy of the topology config (changing it does not change the plan)."""
        return copy.deepcopy(dict(self.config_items))

    # ------------------------------------------------------------------ queries

    @cached_property
    def spouts(self) -> tuple[ComponentDef, ...]:
        """The spouts, in definition order."""
        return tuple(c for c in self.components if c.is_spout)

    @cached_property
    def bolts(self) -> tuple[ComponentDef, ...]:
        """The bolts, in definition order."""
        return tuple(c for c in self.components if not c.is_spout)

    @cached_property
    def _index(self) -> _Index:
        by_name = {c.name: c for c in self.components}
        fields = {(c.name, s.stream_id): s.fields for c in self.components for s in c.outputs}
        consumers: dict[tuple[str, str], list[tuple[str, InputDef]]] = {k: [] for k in fields}
        for bolt in self.bolts:
            for inp in bolt.inputs:
                consumers.setdefault((inp.component, inp.stream), []).append((bolt.name, inp))
        return _Index(by_name, fields, {k: tuple(v) for k, v in consumers.items()})

    def component(self, name: str) -> ComponentDef:
        """The component called ``name``.

        Raises:
            TopologyValidationError: no such component (the message lists the known ones).
        """
        comp = self._index.by_name.get(name)
        if comp is None:
            known = ", ".join(self._index.by_name) or "none"
            self._fail(name, f"no such component; components: {known}")
        return comp

    def stream_fields(self, component: str, stream: str) -> tuple[str, ...]:
        """The fields of ``stream`` as declared by ``component``.

        Raises:
            TopologyValidationError: the component does not exist or does not declare it.
        """
        fields = self._index.fields.get((component, stream))
        if fields is None:
            self._undeclared(component, stream)
        return fields

    def consumers(self, component: str, stream: str) -> tuple[tuple[str, InputDef], ...]:
        """``(bolt name, subscription)`` for every bolt subscribed to ``component``'s ``stream``.

        Raises:
            TopologyValidationError: the component does not exist or does not declare it.
        """
        consumers = self._index.consumers.get((component, stream))
        if consumers is None:
            self._undeclared(component, stream)
        return consumers

    def _fail(self, component: str | None, message: str) -> NoReturn:
        raise TopologyValidationError(self.name, component, message)

    def _undeclared(self, component: str, stream: str) -> NoReturn:
        declared = ", ".join(s.stream_id for s in self.component(component).outputs) or "none"
        self._fail(component, f"declares no stream {stream!r}; declared streams: {declared}")

    # ------------------------------------------------------------------ validation

    def validate(self) -> None:
        """Check that the plan is a valid topology.

        Raises:
            TopologyValidationError: naming the topology and the offending component, for: a
                bad topology name; no spout; a missing, duplicate or reserved (``"__"``)
                component name; parallelism that is not an int >= 1; a bad spec; a non-str
                config key; a bad, reserved or twice-declared output stream; a bolt with no
                inputs or a spout with inputs; an input from an unknown component or an
                undeclared stream; a FIELDS/PARTIAL_KEY grouping on an undeclared field;
                a DIRECT grouping on a stream not declared direct or another grouping on a
                direct stream; a duplicate subscription.
        """
        name = self.name
        if not isinstance(name, str) or not name or "." in name or "/" in name:
            raise TopologyValidationError(
                str(name), None, "topology names must be non-empty, without '.' or '/'"
            )
        self._check_config(None, self.config_items)
        if not self.spouts:
            self._fail(None, "has no spout; a topology needs at least one")
        streams: dict[str, dict[str, StreamDef]] = {}
        for comp in self.components:
            declared = self._check_component(comp)
            if comp.name in streams:
                self._fail(comp.name, "component name defined twice")
            streams[comp.name] = declared
        for bolt in self.bolts:
            seen: set[tuple[str, str]] = set()
            for inp in bolt.inputs:
                if (inp.component, inp.stream) in seen:
                    self._fail(
                        bolt.name, f"subscribes twice to {inp.component!r} stream {inp.stream!r}"
                    )
                seen.add((inp.component, inp.stream))
                self._check_input(bolt.name, inp, streams)

    def _check_config(self, component: str | None, items: ConfigItems) -> None:
        for key, _ in items:
            if not isinstance(key, str):
                self._fail(component, f"config keys must be str, got {key!r}")

    def _check_component(self, comp: ComponentDef) -> dict[str, StreamDef]:
        name = comp.name
        if not isinstance(name, str) or not name or name.startswith(_RESERVED_PREFIX):
            self._fail(
                str(name),
                "component names must be non-empty str not starting with '__' "
                "(reserved for system components)",
            )
        par = comp.parallelism
        if type(par) is not int or par < 1:
            self._fail(name, f"parallelism must be an int >= 1, got {par!r}")
        self._check_spec(name, comp.spec)
        self._check_config(name, comp.config_items)
        if comp.is_spout and comp.inputs:
            self._fail(name, "a spout cannot have inputs")
        if not comp.is_spout and not comp.inputs:
            self._fail(name, "bolt has no inputs; subscribe it to at least one stream")
        declared: dict[str, StreamDef] = {}
        for stream in comp.outputs:
            sid = stream.stream_id
            if not isinstance(sid, str) or not sid or sid.startswith(_RESERVED_PREFIX):
                self._fail(
                    name, f"stream ids must be non-empty str not starting with '__', got {sid!r}"
                )
            if sid in declared:
                self._fail(name, f"output stream {sid!r} declared twice")
            bad = [f for f in stream.fields if not isinstance(f, str) or not f]
            if bad:
                self._fail(name, f"stream {sid!r}: field names must be non-empty str, got {bad}")
            if len(set(stream.fields)) != len(stream.fields):
                self._fail(name, f"stream {sid!r} declares a field twice: {list(stream.fields)}")
            declared[sid] = stream
        return declared

    def _check_spec(self, name: str, spec: PythonSpec | ShellSpec) -> None:
        if isinstance(spec, PythonSpec):
            module, _, qualname = str(spec.class_path).partition(":")
            if not module or not qualname:
                self._fail(
                    name, f"class_path must be 'package.module:QualName', got {spec.class_path!r}"
                )
            if not isinstance(spec.pickled_object, bytes):
                self._fail(name, "pickled_object must be bytes")
        elif isinstance(spec, ShellSpec):
            command = spec.command
            if not command or not all(isinstance(arg, str) for arg in command):
                self._fail(name, f"shell command must be a non-empty argv of str, got {command!r}")
            if spec.serializer not in _SERIALIZERS:
                self._fail(
                    name,
                    f"shell serializer must be one of {', '.join(_SERIALIZERS)}, "
                    f"got {spec.serializer!r}",
                )
        else:
            self._fail(name, f"spec must be a PythonSpec or ShellSpec, got {type(spec).__name__}")

    def _check_input(
        self, bolt: str, inp: InputDef, streams: dict[str, dict[str, StreamDef]]
    ) -> None:
        source = inp.component
        if source not in streams:
            known = ", ".join(streams)
            self._fail(bolt, f"input from unknown component {source!r}; components: {known}")
        stream = streams[source].get(inp.stream)
        where = f"{source!r} stream {inp.stream!r}"
        if stream is None:
            declared = ", ".join(streams[source]) or "none"
            self._fail(
                bolt,
                f"input from {where}, which {source!r} does not declare; "
                f"declared streams: {declared}",
            )
        kind = inp.grouping
        if not isinstance(kind, GroupingKind):
            self._fail(bolt, f"input from {where}: grouping must be a GroupingKind, got {kind!r}")
        if kind in _KEYED_GROUPINGS:
            if not inp.fields:
                self._fail(bolt, f"input from {where}: {kind.name} grouping needs key fields")
            for f in inp.fields:
                if f not in stream.fields:
                    declared = ", ".join(stream.fields) or "none"
                    self._fail(
                        bolt,
                        f"{kind.name} grouping on field {f!r}, which {where} does not declare; "
                        f"declared fields: {declared}",
                    )
        elif inp.fields:
            self._fail(bolt, f"input from {where}: a {kind.name} grouping takes no fields")
        if kind is GroupingKind.CUSTOM and not inp.custom:
            self._fail(bolt, f"input from {where}: CUSTOM grouping without a pickled grouping")
        if kind is not GroupingKind.CUSTOM and inp.custom:
            self._fail(bolt, f"input from {where}: only CUSTOM groupings carry a pickled grouping")
        if kind is GroupingKind.DIRECT and not stream.direct:
            self._fail(
                bolt,
                f"DIRECT grouping on {where}, which is not declared direct (Stream(direct=True))",
            )
        if kind is not GroupingKind.DIRECT and stream.direct:
            self._fail(
                bolt, f"{kind.name} grouping on {where}, which is direct: only DIRECT may subscribe"
            )

    # ------------------------------------------------------------------ protobuf

    def to_proto(self) -> topology_pb2.Topology:
        """Encode as the ``Topology`` message (the plan should be valid; see :meth:`validate`)."""
        message = topology_pb2.Topology(
            id=self.id,
            name=self.name,
            state=topology_pb2.TopologyState.Value(self.state.name),
            topology_config=config_to_proto(dict(self.config_items)),
        )
        for comp in self.components:
            if isinstance(comp.spec, PythonSpec):
                spec = topology_pb2.ComponentSpec(
                    python=topology_pb2.PythonComponent(
                        class_path=comp.spec.class_path, pickled_object=comp.spec.pickled_object
                    )
                )
            else:
                spec = topology_pb2.ComponentSpec(
                    shell=topology_pb2.ShellComponent(
                        command=comp.spec.command, serializer=comp.spec.serializer
                    )
                )
            common = topology_pb2.Component(
                name=comp.name,
                spec=spec,
                config=config_to_proto(dict(comp.config_items)),
                parallelism=comp.parallelism,
            )
            outputs = [
                topology_pb2.OutputStream(
                    stream=topology_pb2.StreamId(id=s.stream_id, component_name=comp.name),
                    schema=topology_pb2.StreamSchema(fields=s.fields),
                    direct=s.direct,
                )
                for s in comp.outputs
            ]
            if comp.is_spout:
                message.spouts.add(comp=common, outputs=outputs)
                continue
            inputs = [
                topology_pb2.InputStream(
                    stream=topology_pb2.StreamId(id=i.stream, component_name=i.component),
                    gtype=topology_pb2.Grouping.Value(i.grouping.name),
                    grouping_fields=i.fields,
                    custom_grouping_object=i.custom,
                )
                for i in comp.inputs
            ]
            message.bolts.add(comp=common, inputs=inputs, outputs=outputs)
        return message

    @classmethod
    def from_proto(cls, message: topology_pb2.Topology) -> LogicalPlan:
        """Decode a ``Topology`` message (it is not validated; call :meth:`validate`). Its
        pickled config values are unpickled: only for a message whose origin was authenticated
        (read through a state manager holding the topology's key, see
        ``heron_core.statemgr.StateKey``).

        Raises:
            TopologyValidationError: the message cannot be represented: an unset spec, an
                unknown grouping or state, or an output stream naming another component.
        """
        topology = message.name
        components = [
            _component_from_proto(topology, s.comp, True, s.outputs, ()) for s in message.spouts
        ]
        components += [
            _component_from_proto(topology, b.comp, False, b.outputs, b.inputs)
            for b in message.bolts
        ]
        try:
            state = TopologyState(message.state)
        except ValueError:
            raise TopologyValidationError(
                topology, None, f"unknown topology state {message.state}"
            ) from None
        return cls(
            name=topology,
            id=message.id,
            components=tuple(components),
            config_items=_freeze_config(config_from_proto(message.topology_config)),
            state=state,
        )


def _component_from_proto(
    topology: str,
    comp: topology_pb2.Component,
    is_spout: bool,
    outputs: Iterable[topology_pb2.OutputStream],
    inputs: Iterable[topology_pb2.InputStream],
) -> ComponentDef:
    def fail(message: str) -> NoReturn:
        raise TopologyValidationError(topology, comp.name, message)

    kind = comp.spec.WhichOneof("kind")
    spec: PythonSpec | ShellSpec
    if kind == "python":
        spec = PythonSpec(comp.spec.python.class_path, comp.spec.python.pickled_object)
    elif kind == "shell":
        spec = ShellSpec(tuple(comp.spec.shell.command), comp.spec.shell.serializer)
    else:
        fail("component spec is unset (neither python nor shell)")
    streams = []
    for out in outputs:
        if out.stream.component_name != comp.name:
            fail(f"output stream {out.stream.id!r} names component {out.stream.component_name!r}")
        streams.append(StreamDef(out.stream.id, tuple(out.schema.fields), out.direct))
    subscriptions = []
    for inp in inputs:
        try:
            grouping = GroupingKind(inp.gtype)
        except ValueError:
            fail(f"input from {inp.stream.component_name!r}: unknown grouping {inp.gtype}")
        subscriptions.append(
            InputDef(
                inp.stream.component_name,
                inp.stream.id,
                grouping,
                tuple(inp.grouping_fields),
                inp.custom_grouping_object,
            )
        )
    return ComponentDef(
        name=comp.name,
        is_spout=is_spout,
        spec=spec,
        parallelism=comp.parallelism,
        config_items=_freeze_config(config_from_proto(comp.config)),
        outputs=tuple(streams),
        inputs=tuple(subscriptions),
    )
