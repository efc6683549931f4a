"""The ``generator`` source: a `Generator`'s elements (heronpy's module path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heron_core.api import State, StatefulComponent, TopologyContext
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.impl._stage import StageSpout
from heronpy.streamlet.impl.contextimpl import ContextImpl
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["GeneratorSpout", "GeneratorStreamlet"]


class GeneratorSpout(StageSpout, StatefulComponent):
    """Calls the generator's ``setup(context)`` in ``initialize``; each ``next_tuple`` emits
    what its ``get()`` returns, unless None. Stateful, as heronpy's: under ``EFFECTIVELY_ONCE``
    the context's ``get_state()`` is the state given to ``init_state``."""

    _state: State | None = None

    def init_state(self, stateful_state: State) -> None:
        """Keep the task's state for the generator's context."""
        self._state = stateful_state

    def __init__(self, stage: str, generator: Generator) -> None:
        self._set_payload(stage, "generator", generator)
        self.emitted = 0

    def initialize(self, config: dict[str, Any], context: TopologyContext) -> None:
        self._generator: Generator = self._load_payload()
        self._generator.setup(ContextImpl(context, self._state, self))

    def next_tuple(self) -> None:
        value = self._generator.get()
        if value is not None:
            self.emit_element(value)
            self.emitted += 1


class GeneratorStreamlet(Streamlet):
    """A source Streamlet over a `Generator`."""

    _prefix = "generator"

    def __init__(self, generator: Generator) -> None:
        super().__init__()
        if not isinstance(generator, Generator):
            raise TypeError(f"expected a Generator, got {type(generator).__name__}")
        self._generator = generator

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        spout = GeneratorSpout(name, self._generator)
        bldr.add_spout(name, spout, par=self.get_num_partitions())
