"""The ``supplier`` source: a function called for each element (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heron_core.api import TopologyContext
from heronpy.streamlet.impl._stage import StageSpout
from heronpy.streamlet.streamlet import Streamlet

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder

__all__ = ["SupplierSpout", "SupplierStreamlet"]


class SupplierSpout(StageSpout):
    """Each ``next_tuple`` emits what the supplier function returns (None included)."""

    def __init__(self, stage: str, supplier: Callable[[], Any]) -> None:
        self._set_payload(stage, "supplier function", supplier)
        self.emitted = 0

    def initialize(self, config: dict[str, Any], context: TopologyContext) -> None:
        self._supplier: Callable[[], Any] = self._load_payload()

    def next_tuple(self) -> None:
        self.emit_element(self._supplier())
        self.emitted += 1


class SupplierStreamlet(Streamlet):
    """A source Streamlet over a function."""

    _prefix = "supplier"

    def __init__(self, supplier_function: Callable[[], Any]) -> None:
        super().__init__()
        self._supplier_function = supplier_function

    def _build_this(self, bldr: TopologyBuilder) -> None:
        name = self._stage_name()
        spout = SupplierSpout(name, self._supplier_function)
        bldr.add_spout(name, spout, par=self.get_num_partitions())
