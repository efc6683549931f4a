"""heronpy's ``spout.base_spout``: ``BaseSpout`` (``spec`` and ``emit``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from heron_core.api import Spout as NativeSpout
from heron_core.api import Stream
from heronpy.api.component.base_component import BaseComponent
from heronpy.api.component.component_spec import HeronComponentSpec

__all__ = ["BaseSpout"]


class BaseSpout(BaseComponent, NativeSpout):
    """The native `heron_core.api.Spout` with heronpy's ``spec`` (a `HeronComponentSpec`)
    and ``delegate``. ``emit`` returns the task ids when ``need_task_ids`` (as heronpy's
    does), else None."""

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Called once before ``next_tuple``; override it (not ``__init__``)."""

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        par: int = 1,
        config: Mapping[str, Any] | None = None,
        optional_outputs: Sequence[str | Stream] | None = None,
    ) -> HeronComponentSpec:
        """This spout as a topology component.

        Args:
            name: the component name (default: the ``Topology`` attribute's name).
            par: the parallelism.
            config: the component config (overrides the topology config).
            optional_outputs: outputs declared in addition to the class's ``outputs``.
        """
        outputs = list(copy.copy(getattr(cls, "outputs", ()) or ()))
        outputs.extend(optional_outputs or ())
        return HeronComponentSpec(name, cls, True, par, None, outputs, config)
