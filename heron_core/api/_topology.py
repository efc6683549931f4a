"""Building a validated ``LogicalPlan``: ``TopologyBuilder`` and the ``Topology`` class DSL."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NoReturn, Protocol

from heron_core.api._component import Bolt, Spout
from heron_core.api._pickling import class_path, dumps
from heron_core.api._spec import (
    ComponentSource,
    ComponentSpec,
    GlobalStreamId,
    Inputs,
    ShellComponent,
)
from heron_core.api._stream import Grouping, Stream
from heron_core.api.constants import DEFAULT_STREAM
from heron_core.errors import TopologyValidationError
from heron_core.plan import (
    ComponentDef,
    ConfigItems,
    InputDef,
    LogicalPlan,
    PythonSpec,
    ShellSpec,
    StreamDef,
)

__all__ = ["Topology", "TopologyBuilder"]


class _Fail(Protocol):
    def __call__(self, message: str, cause: BaseException | None = None, /) -> NoReturn: ...


class TopologyBuilder:
    """Assemble a topology from spouts and bolts, then ``build`` its ``LogicalPlan``.

    Components are Spout/Bolt classes (instantiated with no arguments in each task),
    configured instances (pickled; their class must be importable at module level), or
    ``shell_component(...)`` objects. Every definition error is raised by ``build``.

    >>> from heron_core.api import Grouping, shell_component
    >>> builder = TopologyBuilder("word_count")
    >>> words = builder.add_spout("words", shell_component(["python3", "words.py"], ["word"]))
    >>> counter = shell_component(["python3", "count.py"], ["word", "count"])
    >>> _ = builder.add_bolt("count", counter, par=2, inputs={words: Grouping.fields("word")})
    >>> builder.set_config({"topology.debug": True})
    >>> plan = builder.build()
    >>> [(c.name, c.parallelism) for c in plan.components]
    [('words', 1), ('count', 2)]
    """

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._specs: list[ComponentSpec] = []
        self._config: Mapping[str, Any] = {}

    def add_spout(
        self,
        name: str,
        spout: type[Spout] | Spout | ShellComponent,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> ComponentSpec:
        """Add a spout; returns its spec (a key for bolts' ``inputs``)."""
        spec = ComponentSpec(
            spout,
            is_spout=True,
            name=name,
            par=par,
            config=config,
            optional_outputs=optional_outputs,
        )
        self._specs.append(spec)
        return spec

    def add_bolt(
        self,
        name: str,
        bolt: type[Bolt] | Bolt | ShellComponent,
        par: int = 1,
        inputs: Inputs | None = None,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> ComponentSpec:
        """Add a bolt subscribed to ``inputs`` (see ``Bolt.spec``); returns its spec."""
        spec = ComponentSpec(
            bolt,
            is_spout=False,
            name=name,
            par=par,
            config=config,
            inputs=inputs,
            optional_outputs=optional_outputs,
        )
        self._specs.append(spec)
        return spec

    def add_spec(self, *specs: ComponentSpec) -> None:
        """Add specs made with ``Spout.spec`` / ``Bolt.spec``; each needs a name by ``build``.

        Raises:
            TypeError: an argument is not a ComponentSpec.
        """
        for spec in specs:
            if not isinstance(spec, ComponentSpec):
                raise TypeError(f"add_spec takes ComponentSpec objects, got {spec!r}")
        self._specs.extend(specs)

    def set_config(self, config: Mapping[str, Any]) -> None:
        """Replace the topology config (keys must be str; the config registry checks values
        at submission)."""
        self._config = config

    def build(self, name: str | None = None) -> LogicalPlan:
        """The validated logical plan, with a fresh id ``<name>-<uuid hex>``.

        Args:
            name: the topology name (default: the builder's).

        Raises:
            TopologyValidationError: naming the topology and component at fault.
        """
        topology = name if name is not None else self.name
        if topology is None:
            raise TopologyValidationError(
                "<unnamed>", None, "no topology name: pass one to TopologyBuilder() or build()"
            )
        plan = LogicalPlan(
            name=topology,
            id=f"{topology}-{uuid.uuid4().hex}",
            components=tuple(_component_def(topology, spec) for spec in self._specs),
            config_items=_config_items(topology, None, self._config),
        )
        plan.validate()
        return plan


def _config_items(topology: str, component: str | None, config: object) -> ConfigItems:
    if config is None:
        return ()
    if not isinstance(config, Mapping):
        raise TopologyValidationError(
            topology, component, f"config must be a dict, got {type(config).__name__}"
        )
    bad = [key for key in config if not isinstance(key, str)]
    if bad:
        raise TopologyValidationError(topology, component, f"config keys must be str, got {bad!r}")
    return tuple(config.items())


def _component_def(topology: str, spec: ComponentSpec) -> ComponentDef:
    name = spec.name
    if not isinstance(name, str):
        raise TopologyValidationError(
            topology, None, f"component {spec!r} needs a name (str), got {name!r}"
        )

    def fail(message: str, cause: BaseException | None = None) -> NoReturn:
        raise TopologyValidationError(topology, name, message) from cause

    try:
        outputs = spec.outputs
    except TypeError as exc:
        fail(str(exc), exc)
    return ComponentDef(
        name=name,
        is_spout=spec.is_spout,
        spec=_runtime_spec(spec.component, spec.is_spout, fail),
        parallelism=spec.par,
        config_items=_config_items(topology, name, spec.config),
        outputs=_stream_defs(outputs, fail),
        inputs=_input_defs(spec.inputs, fail),
    )


def _runtime_spec(source: ComponentSource, is_spout: bool, fail: _Fail) -> PythonSpec | ShellSpec:
    if isinstance(source, ShellComponent):
        return ShellSpec(source.command, source.serializer)
    base = Spout if is_spout else Bolt
    is_class = isinstance(source, type)
    cls = source if isinstance(source, type) else type(source)
    if not issubclass(cls, base):
        fail(
            f"expected a {base.__name__} subclass, a {base.__name__} instance or a "
            f"shell_component(...), got {source!r}"
        )
    try:
        path = class_path(cls)
        pickled = b"" if is_class else dumps(source)
    except Exception as exc:
        fail(f"cannot be serialized: {exc}", exc)
    if is_class:
        try:
            inspect.signature(cls).bind()
        except TypeError as exc:
            fail(
                f"{cls.__qualname__} cannot be built without arguments ({exc}); "
                "pass a configured instance instead of the class",
                exc,
            )
    return PythonSpec(path, pickled)


def _stream_defs(outputs: tuple[object, ...], fail: _Fail) -> tuple[StreamDef, ...]:
    streams: list[StreamDef | None] = []
    default_fields: list[str] = []
    default_at: int | None = None
    for out in outputs:
        if isinstance(out, str):
            if default_at is None:
                default_at = len(streams)
                streams.append(None)
            default_fields.append(out)
        elif isinstance(out, Stream):
            streams.append(StreamDef(out.stream_id, out.fields, out.direct))
        else:
            fail(f"outputs must be field names (str) or Stream objects, got {out!r}")
    if default_at is not None:
        streams[default_at] = StreamDef(DEFAULT_STREAM, tuple(default_fields))
    return tuple(s for s in streams if s is not None)


def _input_defs(inputs: object, fail: _Fail) -> tuple[InputDef, ...]:
    if inputs is None:
        return ()
    if isinstance(inputs, ComponentSpec | GlobalStreamId):
        inputs = [inputs]
    if isinstance(inputs, Mapping):
        pairs = list(inputs.items())
    elif isinstance(inputs, list | tuple):
        pairs = [(source, Grouping.SHUFFLE) for source in inputs]
    else:
        fail(f"inputs must be a dict of sources to Groupings or a list of sources, got {inputs!r}")
    defs = []
    for source, grouping in pairs:
        if isinstance(source, ComponentSpec):
            component, stream = source.name, DEFAULT_STREAM
        elif isinstance(source, GlobalStreamId):
            component, stream = source.component_id, source.stream_id
        else:
            fail(f"an input source must be a ComponentSpec or a GlobalStreamId, got {source!r}")
        if component is None:
            fail(f"input {source!r} refers to a component spec without a name")
        if not isinstance(grouping, Grouping):
            fail(f"the grouping of input {source!r} must be a Grouping, got {grouping!r}")
        defs.append(
            InputDef(
                component, stream, grouping.kind, grouping.grouping_fields, grouping.custom_object
            )
        )
    return tuple(defs)


class _TopologyType(type):
    """Collects a ``Topology`` class's component specs, in definition order."""

    _specs: dict[str, ComponentSpec]

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> _TopologyType:
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        specs: dict[str, ComponentSpec] = {}
        for base in reversed(cls.__mro__[1:]):
            specs.update(base.__dict__.get("_specs", {}))
        for attr, value in namespace.items():
            if isinstance(value, ComponentSpec):
                if value.name is None:
                    value.name = attr
                specs[attr] = value
            elif isinstance(value, Spout | Bolt):
                raise TopologyValidationError(
                    name,
                    attr,
                    f"is a {type(value).__qualname__} instance, not a spec: use "
                    f"{type(value).__qualname__}.spec(...), or TopologyBuilder for instances",
                )
        cls._specs = specs
        return cls


class Topology(metaclass=_TopologyType):
    """A topology declared as a class: attributes are component specs, ``config`` its config.

    Spec names default to the attribute names; specs of base classes are inherited.

    >>> from heron_core.api import Grouping, shell_component
    >>> class WordCount(Topology):
    ...     config = {"topology.debug": True}
    ...     words = shell_component(["python3", "words.py"], ["word"]).spout_spec()
    ...     count = shell_component(["python3", "count.py"], ["word", "n"]).bolt_spec(
    ...         inputs={words: Grouping.fields("word")}, par=2)
    >>> plan = WordCount.build()
    >>> plan.name, [c.name for c in plan.components]
    ('WordCount', ['words', 'count'])
    """

    config: ClassVar[Mapping[str, Any]] = {}
    _specs: ClassVar[dict[str, ComponentSpec]]

    @classmethod
    def build(cls, name: str | None = None) -> LogicalPlan:
        """The validated logical plan (``name`` defaults to the class name).

        Raises:
            TopologyValidationError: naming the topology and component at fault.
        """
        builder = TopologyBuilder(name if name is not None else cls.__name__)
        builder.add_spec(*cls._specs.values())
        builder.set_config(cls.config)
        return builder.build()
