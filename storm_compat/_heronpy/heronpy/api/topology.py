"""heronpy's ``topology``: ``Topology`` (the class DSL), ``TopologyType`` and
``TopologyBuilder``.

Both forms build the native logical plan (a heronpy ``Topology`` is a
`heron_core.api.Topology`, a heronpy ``TopologyBuilder`` a `heron_core.api.TopologyBuilder`)
with heronpy's topology config: heronpy's defaults (``topology.reliability.mode`` =
``ATMOST_ONCE``, ``topology.max.spout.pending`` = 100, ...) under the user's config, and
string values typed as Heron's instance types them (``"10"`` -> 10, ``"true"`` -> True), in
the topology and in each component's config. ``Grouping.DIRECT`` inputs are refused, as
heronpy refuses them. Unlike heronpy, a ``Topology`` subclass needs no ``HERON_OPTIONS``:
``heron run FILE`` / ``heron submit local FILE`` find it, and ``build_and_submit()`` hands a
builder to them (see ``heronpy._submit``).

>>> from heron_core.api import shell_component
>>> from heronpy.api.stream import Grouping
>>> builder = TopologyBuilder("WordCount")
>>> words = builder.add_spout("word_spout", shell_component(["./words"], ["word"]), par=2)
>>> _ = builder.add_bolt("count_bolt", shell_component(["./count"], []), par=2,
...                      inputs={words: Grouping.fields("word")},
...                      config={"topology.tick.tuple.freq.secs": "10"})
>>> plan = builder.build()
>>> plan.config["topology.reliability.mode"], plan.component("count_bolt").config
('ATMOST_ONCE', {'topology.tick.tuple.freq.secs': 10})
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from heron_core.api import ComponentSpec, GlobalStreamId, Spout, Stream
from heron_core.api import Topology as NativeTopology
from heron_core.api import TopologyBuilder as NativeTopologyBuilder
from heron_core.api._spec import ComponentSource, Inputs
from heron_core.api._topology import _TopologyType
from heron_core.errors import TopologyValidationError
from heron_core.plan import GroupingKind, LogicalPlan
from heronpy import _submit
from heronpy.api import api_constants as constants

__all__ = ["Topology", "TopologyBuilder", "TopologyType"]

DEFAULT_TOPOLOGY_CONFIG: Mapping[str, Any] = {
    constants.TOPOLOGY_DEBUG: False,
    constants.TOPOLOGY_STMGRS: 1,
    constants.TOPOLOGY_MESSAGE_TIMEOUT_SECS: 30,
    constants.TOPOLOGY_COMPONENT_PARALLELISM: 1,
    constants.TOPOLOGY_MAX_SPOUT_PENDING: 100,
    constants.TOPOLOGY_RELIABILITY_MODE: str(constants.TopologyReliabilityMode.ATMOST_ONCE),
    constants.TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS: True,
}
"""The topology config heronpy puts under every topology's own (heronpy's
``TopologyType.DEFAULT_TOPOLOGY_CONFIG``, typed)."""


def typed_value(value: Any) -> Any:
    """``value`` as a heronpy component sees it in its config: heronpy writes str, int,
    float and bool values as strings and Heron's instance reads back a number string as int
    (else float) and ``"true"``/``"false"`` (any case) as bool; other objects are unchanged.

    >>> [typed_value(v) for v in ("10", "2.5", "True", "ATLEAST_ONCE", 3, None)]
    [10, 2.5, True, 'ATLEAST_ONCE', 3, None]
    """
    if not isinstance(value, str):
        return value
    value = str(value)  # a str enum (TopologyReliabilityMode) as its plain value
    try:
        float(value)
    except ValueError:
        lowered = value.lower()
        return lowered == "true" if lowered in ("true", "false") else value
    try:
        return int(value)
    except ValueError:
        return float(value)


def typed_config(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Each value of ``config`` through `typed_value` (None stays None)."""
    if config is None or not isinstance(config, Mapping):
        return config
    return {key: typed_value(value) for key, value in config.items()}


class TopologyType(_TopologyType):
    """The metaclass of `Topology`: collects the class's component specs (named after their
    attributes) in definition order. Unlike heronpy's, it needs no ``HERON_OPTIONS`` and writes
    no ``.defn`` file: the topology is built when ``heron`` loads it."""


class Topology(NativeTopology, metaclass=TopologyType):
    """A topology declared as a class: its attributes are component specs (``Spout.spec``,
    ``Bolt.spec``), ``config`` its topology config; named after the class unless
    ``heron run --name`` says otherwise.

    >>> from heron_core.api import shell_component
    >>> class Words(Topology):
    ...     config = {"topology.debug": "true"}
    ...     word_spout = shell_component(["./words"], ["word"]).spout_spec(par=2)
    >>> plan = Words.build()
    >>> plan.name, plan.config["topology.debug"], plan.component("word_spout").parallelism
    ('Words', True, 2)
    """

    config: ClassVar[Mapping[str, Any]] = {}

    @classmethod
    def build(cls, name: str | None = None) -> LogicalPlan:
        """The validated logical plan, with heronpy's config rules (see the module).

        Raises:
            TopologyValidationError: naming the topology and the component at fault.
        """
        builder = TopologyBuilder(name if name is not None else cls.__name__)
        builder.add_spec(*cls._specs.values())
        config = cls.config
        builder.set_config(dict(config) if isinstance(config, Mapping) else {})
        return builder.build()

    @classmethod
    def write(cls) -> None:
        """heronpy's ``.defn`` writer, which only heronpy's own CLI calls.

        Raises:
            NotImplementedError: always: there is no ``.defn`` file here; run the file with
                ``heron run FILE`` or ``heron submit local FILE``.
        """
        raise NotImplementedError(
            f"{cls.__name__}.write(): this engine has no .defn files; run the topology file "
            "with 'heron run FILE' or 'heron submit local FILE'"
        )


class TopologyBuilder(NativeTopologyBuilder):
    """Build a topology from spouts and bolts, then ``build_and_submit()`` it.

    Args:
        name: the topology name (heronpy's programs pass ``sys.argv[1]``; ``heron run`` sets
            it to ``--name`` or the file's stem).

    Raises:
        TypeError: ``name`` is not a str.
        ValueError: ``name`` is ``"Topology"``.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"TopologyBuilder name must be a str, given: {name!r}")
        if name == "Topology":
            raise ValueError("TopologyBuilder name cannot be 'Topology' (heronpy's base class)")
        super().__init__(name)
        self.topology_name = name
        self._names: set[str] = set()

    def add_spec(self, *specs: ComponentSpec) -> None:
        """Add named specs (from ``Spout.spec`` / ``Bolt.spec``).

        Raises:
            TypeError: an argument is not a spec.
            ValueError: a spec has no name, is named ``config`` (reserved) or repeats a name.
        """
        for spec in specs:
            if not isinstance(spec, ComponentSpec):
                raise TypeError(
                    f"Argument to add_spec needs to be HeronComponentSpec, given: {spec!r}"
                )
            if spec.name is None:
                raise ValueError(f"TopologyBuilder cannot take a spec without a name: {spec!r}")
            if spec.name == "config":
                raise ValueError("'config' is a reserved name and cannot name a component")
            if spec.name in self._names:
                raise ValueError(f"Attempting to add duplicate spec name: {spec.name!r} {spec!r}")
            self._names.add(spec.name)
            super().add_spec(spec)

    def add_spout(
        self,
        name: str,
        spout_cls: type[Spout] | ComponentSource,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> ComponentSpec:
        """Add a spout (a class, as heronpy takes it: its ``spec`` is used); returns its spec."""
        make: Any = getattr(spout_cls, "spec", None) if isinstance(spout_cls, type) else None
        if make is not None:
            spec = make(name=name, par=par, config=config, optional_outputs=optional_outputs)
        else:
            spec = ComponentSpec(
                spout_cls,
                is_spout=True,
                name=name,
                par=par,
                config=config,
                optional_outputs=optional_outputs,
            )
        self.add_spec(spec)
        return spec

    def add_bolt(
        self,
        name: str,
        bolt_cls: ComponentSource,
        par: int = 1,
        inputs: Inputs | None = None,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> ComponentSpec:
        """Add a bolt subscribed to ``inputs`` (a class, as heronpy takes it: its ``spec`` is
        used); returns its spec."""
        make: Any = getattr(bolt_cls, "spec", None) if isinstance(bolt_cls, type) else None
        if make is not None:
            spec = make(
                name=name,
                par=par,
                inputs=inputs,
                config=config,
                optional_outputs=optional_outputs,
            )
        else:
            spec = ComponentSpec(
                bolt_cls,
                is_spout=False,
                name=name,
                par=par,
                config=config,
                inputs=inputs,
                optional_outputs=optional_outputs,
            )
        self.add_spec(spec)
        return spec

    def set_config(self, config: Mapping[str, Any]) -> None:
        """Set the topology config (a dict).

        Raises:
            TypeError: ``config`` is not a dict.
        """
        if not isinstance(config, dict):
            raise TypeError(f"Argument to set_config needs to be dict, given: {config!r}")
        super().set_config(config)

    def build(self, name: str | None = None) -> LogicalPlan:
        """The validated logical plan with heronpy's config rules (see the module).

        Raises:
            TopologyValidationError: naming the topology and the component at fault (a
                ``Grouping.DIRECT`` input among them).
        """
        topology = name if name is not None else self.name
        native = NativeTopologyBuilder(topology)
        for spec in self._specs:
            _refuse_direct(topology or "<unnamed>", spec)
            typed = copy.copy(spec)
            typed.config = typed_config(spec.config)
            native.add_spec(typed)
        config = typed_config(self._config)
        native.set_config({**DEFAULT_TOPOLOGY_CONFIG, **(config or {})})
        return native.build()

    def build_and_submit(self) -> None:
        """Hand this topology to the ``heron`` command loading the program
        (``heronpy._submit.submit``).

        Raises:
            SubmitOutsideHeronError: the program was not started by ``heron run`` or
                ``heron submit``; the message gives the command.
        """
        _submit.submit(self)


def _refuse_direct(topology: str, spec: ComponentSpec) -> None:
    inputs = spec.inputs
    if not isinstance(inputs, Mapping):
        return
    for source, grouping in inputs.items():
        if getattr(grouping, "kind", None) is GroupingKind.DIRECT:
            stream = (
                f"{source.component_id}:{source.stream_id}"
                if isinstance(source, GlobalStreamId)
                else f"{getattr(source, 'name', source)}:default"
            )
            raise TopologyValidationError(
                topology,
                spec.name,
                f"input {stream} uses Grouping.DIRECT, which heronpy does not support "
                "(nor direct streams)",
            )
