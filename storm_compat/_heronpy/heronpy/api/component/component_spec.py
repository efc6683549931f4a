"""heronpy's ``component.component_spec``: ``HeronComponentSpec`` and ``GlobalStreamId``.

Both are the native classes (`heron_core.api.ComponentSpec`, `heron_core.api.GlobalStreamId`)
with heronpy's constructors: a spec is what ``Spout.spec``/``Bolt.spec`` return and what a
``Topology`` class or ``TopologyBuilder.add_spec`` takes; ``spec["stream"]`` is a
``GlobalStreamId`` and raises ``ValueError`` for a stream the component does not declare.

>>> from heronpy.api.spout.spout import Spout
>>> class WordSpout(Spout):
...     outputs = ["word"]
>>> spec = HeronComponentSpec("words", WordSpout, True, 2)
>>> spec.parallelism, spec.outputs, spec["default"]
(2, ('word',), GlobalStreamId('words', 'default'))
>>> GlobalStreamId(componentId="words", streamId="error")
GlobalStreamId('words', 'error')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heron_core.api import ComponentSpec, Stream
from heron_core.api import GlobalStreamId as NativeGlobalStreamId
from heron_core.api._spec import Inputs
from heron_core.plugins import resolve_class

__all__ = ["GlobalStreamId", "HeronComponentSpec"]


class HeronComponentSpec(ComponentSpec):
    """One spout or bolt of a topology before it is built (heronpy's constructor).

    Args:
        name: the component name, or None until a ``Topology`` class names it after its
            attribute.
        python_class_path: the component's class, or its ``"module.Class"`` path (imported
            now).
        is_spout: spout or bolt.
        par: the parallelism (checked when the topology is built).
        inputs: a bolt's inputs: ``{spec or GlobalStreamId: grouping}`` or a list (SHUFFLE).
        outputs: the declared outputs (field names and ``Stream`` s); None: the class's.
        config: the component config.

    Raises:
        ConfigurationError: the class path does not import.
    """

    __slots__ = ("_declared", "python_class_path")

    def __init__(
        self,
        name: str | None,
        python_class_path: str | type | Any,
        is_spout: bool,
        par: int,
        inputs: Inputs | None = None,
        outputs: Sequence[str | Stream] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(python_class_path, str):
            component = resolve_class(python_class_path)
            path = python_class_path
        else:
            component = python_class_path
            cls = component if isinstance(component, type) else type(component)
            path = f"{cls.__module__}.{cls.__qualname__}"
        super().__init__(
            component, is_spout=is_spout, name=name, par=par, config=config, inputs=inputs
        )
        self.python_class_path = path
        self._declared = outputs

    @property
    def outputs(self) -> tuple[str | Stream, ...]:
        """The declared outputs: those given, else the component's ``outputs``.

        Raises:
            TypeError: they are not a list or tuple.
        """
        if self._declared is None:
            return super().outputs
        if not isinstance(self._declared, list | tuple):
            raise TypeError(
                f"outputs of {self._label()} must be a list of field names and Streams, "
                f"got {type(self._declared).__name__} {self._declared!r}"
            )
        return tuple(self._declared)

    @property
    def parallelism(self) -> int:
        """heronpy's name of ``par``."""
        return self.par

    @property
    def custom_config(self) -> Mapping[str, Any] | None:
        """heronpy's name of ``config``."""
        return self.config


class GlobalStreamId(NativeGlobalStreamId):
    """A stream of a component, as a key of a bolt's ``inputs`` (heronpy's keyword names).

    Args:
        componentId: the component's name or its spec.
        streamId: the stream's name.

    Raises:
        TypeError: either has the wrong type.
    """

    __slots__ = ()

    def __init__(self, componentId: str | ComponentSpec, streamId: str) -> None:
        super().__init__(componentId, streamId)
