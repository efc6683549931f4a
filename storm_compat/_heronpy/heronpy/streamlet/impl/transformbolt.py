"""The ``transform`` stage (heronpy's module path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heron_core.api import Grouping, State, StatefulComponent, TopologyContext, Tuple
from heronpy.streamlet.impl._stage import StageBolt
from heronpy.streamlet.impl.contextimpl import ContextImpl
from heronpy.streamlet.streamlet import Streamlet
from heronpy.streamlet.transformoperator import TransformOperator

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["TransformBolt", "TransformStreamlet"]


class TransformBolt(StageBolt, StatefulComponent):
    """Runs a `TransformOperator`: ``setup(context)`` in ``initialize``, ``transform(tup)``
    per input; what it emits through the context is the stage's output. Stateful, as
    heronpy's: under ``EFFECTIVELY_ONCE`` the context's ``get_state()`` is the state given to
    ``init_state``."""

    processed = 0
    _state: State | None = None

    def init_state(self, stateful_state: State) -> None:
        """Keep the task's state for the operator's context."""
        self._state = stateful_state

    def initialize(self, config: dict[str, Any], context: TopologyContext) -> None:
        super().initialize(config, context)
        self.function.setup(ContextImpl(context, self._state, self))

    def process(self, tup: Tuple) -> None:
        self.function.transform(tup)
        self.processed += 1
        self.ack(tup)


class TransformStreamlet(Streamlet):
    """The Streamlet of a ``transform`` stage."""

    _prefix = "transform"

    def __init__(self, operator: TransformOperator, parent: Streamlet) -> None:
        if not isinstance(operator, TransformOperator):
            raise TypeError(
                f"transform takes a TransformOperator instance, got {type(operator).__name__}"
            )
        super().__init__((parent,))
        self._operator = operator

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        bolt = TransformBolt(name, "transform operator", self._operator)
        bldr.add_bolt(
            name, bolt, par=self.get_num_partitions(), inputs=self._inputs(Grouping.SHUFFLE)
        )
