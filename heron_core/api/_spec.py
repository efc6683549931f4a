"""Component specs: a spout or bolt with its name, parallelism, config and inputs, before
the topology is built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from heron_core.api._stream import Grouping, Stream
from heron_core.api.constants import DEFAULT_STREAM

if TYPE_CHECKING:
    from heron_core.api._component import Bolt, Spout

__all__ = [
    "ComponentSource",
    "ComponentSpec",
    "GlobalStreamId",
    "Inputs",
    "ShellComponent",
    "shell_component",
]


class GlobalStreamId:
    """A stream of a component: the key of a bolt's ``inputs``.

    Attributes:
        component: the component's name, or its spec (named when the topology is built).
        stream_id: the stream's name.

    >>> GlobalStreamId("words", "counts")
    GlobalStreamId('words', 'counts')
    """

    __slots__ = ("component", "stream_id")

    def __init__(self, component_id: str | ComponentSpec, stream_id: str = DEFAULT_STREAM) -> None:
        if not isinstance(component_id, str | ComponentSpec):
            raise TypeError(
                f"GlobalStreamId component must be a name or a ComponentSpec, got {component_id!r}"
            )
        if not isinstance(stream_id, str):
            raise TypeError(f"GlobalStreamId stream must be a str, got {stream_id!r}")
        self.component = component_id
        self.stream_id = stream_id

    @property
    def component_id(self) -> str | None:
        """The component's name (None while its spec is unnamed)."""
        return self.component if isinstance(self.component, str) else self.component.name

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GlobalStreamId):
            return NotImplemented
        return self.component == other.component and self.stream_id == other.stream_id

    def __hash__(self) -> int:
        return hash((self.component, self.stream_id))

    def __repr__(self) -> str:
        return f"GlobalStreamId({self.component_id!r}, {self.stream_id!r})"


@dataclass(frozen=True)
class ShellComponent:
    """A spout or bolt run as a subprocess speaking Storm's multilang protocol.

    Build it with :func:`shell_component`; pass it to ``TopologyBuilder.add_spout`` /
    ``add_bolt``, or use :meth:`spout_spec` / :meth:`bolt_spec` in a ``Topology`` class.

    Attributes:
        command: the subprocess argv.
        outputs: declared outputs, as in ``Spout.outputs``.
        serializer: ``"json"`` or ``"msgpack"``.
    """

    command: tuple[str, ...]
    outputs: tuple[str | Stream, ...]
    serializer: str = "json"

    def spout_spec(
        self, name: str | None = None, par: int = 1, config: Mapping[str, Any] | None = None
    ) -> ComponentSpec:
        """A spec running this command as a spout."""
        return ComponentSpec(self, is_spout=True, name=name, par=par, config=config)

    def bolt_spec(
        self,
        name: str | None = None,
        inputs: Inputs | None = None,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
    ) -> ComponentSpec:
        """A spec running this command as a bolt subscribed to ``inputs``."""
        return ComponentSpec(self, is_spout=False, name=name, par=par, config=config, inputs=inputs)


def shell_component(
    command: Sequence[str], outputs: Sequence[str | Stream], serializer: str = "json"
) -> ShellComponent:
    """A multilang component: ``command`` is its argv, run in the topology's code directory.

    The plan checks the argv and serializer when the topology is built.

    >>> split = shell_component(["python3", "split.py"], outputs=["word"])
    >>> split.command, split.outputs
    (('python3', 'split.py'), ('word',))

    Raises:
        TypeError: ``command`` or ``outputs`` is a single str instead of a list.
    """
    for what, value in (("command", command), ("outputs", outputs)):
        if isinstance(value, str):
            raise TypeError(f"shell_component {what} must be a list, got the str {value!r}")
    return ShellComponent(tuple(command), tuple(outputs), serializer)


ComponentSource: TypeAlias = "type[Spout] | type[Bolt] | Spout | Bolt | ShellComponent"
"""What a spec runs: a Spout/Bolt class, a configured instance, or a shell component."""

Inputs: TypeAlias = (
    "Mapping[Any, Grouping] | Sequence[ComponentSpec | GlobalStreamId] "
    "| ComponentSpec | GlobalStreamId"
)
"""A bolt's inputs: a dict of sources (ComponentSpec or GlobalStreamId) to Groupings, or a
list (or one) of sources grouped by SHUFFLE. A ComponentSpec means its default stream;
``spec["name"]`` names another stream. (The dict's key type is ``Any`` because a mapping's key
type is invariant: a dict literal mixing specs and stream ids would not type-check otherwise;
``build`` checks the keys.)"""


class ComponentSpec:
    """One spout or bolt of a topology, before the topology is built.

    Returned by ``Spout.spec``, ``Bolt.spec``, ``ShellComponent.spout_spec`` /
    ``bolt_spec`` and ``TopologyBuilder.add_spout`` / ``add_bolt``. Nothing is checked here:
    building the topology turns each spec into a ``ComponentDef`` and raises
    ``TopologyValidationError`` naming the topology and the component.

    Attributes:
        component: what runs (see ``ComponentSource``).
        is_spout: spout or bolt.
        name: the component name; a ``Topology`` class fills it from the attribute name.
        par: the parallelism (number of tasks).
        config: the component config, or None.
        inputs: the bolt's inputs as given (see ``Inputs``), or None.
        optional_outputs: outputs declared in addition to the component's ``outputs``.
    """

    __slots__ = (
        "component",
        "config",
        "inputs",
        "is_spout",
        "name",
        "optional_outputs",
        "par",
    )

    def __init__(
        self,
        component: ComponentSource,
        *,
        is_spout: bool,
        name: str | None = None,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
        inputs: Inputs | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> None:
        self.component = component
        self.is_spout = is_spout
        self.name = name
        self.par = par
        self.config = config
        self.inputs = inputs
        self.optional_outputs = optional_outputs

    @property
    def outputs(self) -> tuple[str | Stream, ...]:
        """The declared outputs: the component's ``outputs`` (an instance attribute wins over
        the class attribute), then ``optional_outputs``.

        Raises:
            TypeError: either is not a list or tuple.
        """
        declared = getattr(self.component, "outputs", ())
        for part in (declared, self.optional_outputs or ()):
            if not isinstance(part, list | tuple):
                raise TypeError(
                    f"outputs of {self._label()} must be a list of field names and Streams, "
                    f"got {type(part).__name__} {part!r}"
                )
        return (*declared, *(self.optional_outputs or ()))

    def __getitem__(self, stream: str) -> GlobalStreamId:
        """The stream ``stream`` of this component, for another bolt's ``inputs``.

        Raises:
            ValueError: the component does not declare ``stream``.
        """
        declared = [
            DEFAULT_STREAM if isinstance(out, str) else out.stream_id
            for out in self.outputs
            if isinstance(out, str | Stream)
        ]
        if stream not in declared:
            listed = ", ".join(dict.fromkeys(declared)) or "none"
            raise ValueError(
                f"component {self._label()} declares no stream {stream!r}; declared: {listed}"
            )
        return GlobalStreamId(self, stream)

    def _label(self) -> str:
        if self.name is not None:
            return repr(self.name)
        source = self.component
        kind = source.__qualname__ if isinstance(source, type) else type(source).__qualname__
        return f"<unnamed {kind} spec>"

    def __repr__(self) -> str:
        source = self.component
        shown = source.__qualname__ if isinstance(source, type) else repr(source)
        return (
            f"ComponentSpec(name={self.name!r}, component={shown}, is_spout={self.is_spout}, "
            f"par={self.par!r})"
        )
