"""heronpy's ``bolt.base_bolt``: ``BaseBolt`` (``spec``, ``emit``, ``ack``, ``fail``,
``is_tick``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heron_core.api import Bolt as NativeBolt
from heron_core.api import Stream, Tuple
from heron_core.api._spec import Inputs
from heron_core.api.constants import DEFAULT_STREAM, TICK_STREAM
from heronpy.api.component.base_component import BaseComponent
from heronpy.api.component.component_spec import HeronComponentSpec

__all__ = ["BaseBolt"]


class BaseBolt(BaseComponent, NativeBolt):
    """The native `heron_core.api.Bolt` with heronpy's ``spec``, ``delegate`` and ``emit``.

    As in heronpy, nothing is acked or anchored automatically, and ``emit`` returns None.

    >>> class Upper(BaseBolt):
    ...     outputs = ["word"]
    ...     def process(self, tup):
    ...         print(self.emit([tup.values[0].upper()], anchors=[tup]))
    ...         self.ack(tup)
    >>> class Collector:
    ...     def emit(self, tup, stream, anchors, direct_task, need_task_ids):
    ...         print("emit", tup, stream)
    ...         return [7]
    ...     def ack(self, tup):
    ...         print("ack", tup.id)
    >>> bolt = Upper()
    >>> bolt._collector = Collector()
    >>> bolt.process(Tuple("1", "word_spout", "default", 3, ["heron"]))
    emit ['HERON'] default
    None
    ack 1
    """

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Called once before ``process``; override it (not ``__init__``)."""

    def emit(
        self,
        tup: Sequence[Any],
        stream: str = DEFAULT_STREAM,
        anchors: Iterable[Tuple] | None = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> None:
        """Emit ``tup`` on ``stream``, anchored to the received tuples ``anchors``.

        Returns:
            None, as heronpy's ``Bolt.emit`` (even with ``need_task_ids``).
        """
        self._collector.emit(tup, stream, anchors, direct_task, need_task_ids)

    @staticmethod
    def is_tick(tup: Tuple) -> bool:
        """Whether ``tup`` is a tick tuple (its stream is ``__tick``)."""
        return tup.stream == TICK_STREAM

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        inputs: Inputs | None = None,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> HeronComponentSpec:
        """This bolt as a topology component.

        Args:
            name: the component name (default: the ``Topology`` attribute's name).
            inputs: ``{spec or GlobalStreamId: Grouping}``, or a list of them (SHUFFLE).
            par: the parallelism.
            config: the component config (overrides the topology config).
            optional_outputs: outputs declared in addition to the class's ``outputs``.
        """
        outputs = list(copy.copy(getattr(cls, "outputs", ()) or ()))
        outputs.extend(optional_outputs or ())
        return HeronComponentSpec(name, cls, False, par, inputs, outputs, config)
