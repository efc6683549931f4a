"""``Builder``: where a Streamlet program's sources start (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from heron_core.api import TopologyBuilder
from heron_core.errors import TopologyValidationError
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.streamlet import Streamlet

__all__ = ["Builder"]


class Builder:
    """Collects a Streamlet program's sources; ``Runner.run`` builds the topology from them.

    >>> from heronpy.connectors.mock.arraylooper import ArrayLooper
    >>> builder = Builder()
    >>> words = builder.new_source(ArrayLooper(["a", "b"]))
    >>> words.filter(lambda w: w != "b").consume(print)
    >>> topology = TopologyBuilder("letters")
    >>> builder.build(topology)
    >>> [c.name for c in topology.build().components]
    ['generator-1', 'filter-1', 'consume-1']
    >>> builder.new_source(["a", "b"])
    Traceback (most recent call last):
    ...
    TypeError: a source must be a Generator or a function returning the next element, got list
    """

    def __init__(self) -> None:
        self._sources: list[Streamlet] = []

    def new_source(self, source: Generator | Callable[[], Any]) -> Streamlet:
        """A new source Streamlet.

        Args:
            source: a `Generator` (its ``get`` gives the next element, None for none yet), or
                a function called for each element (every result is emitted, None too).

        Raises:
            TypeError: ``source`` is neither.
        """
        from heronpy.streamlet.impl.generatorspout import GeneratorStreamlet
        from heronpy.streamlet.impl.supplierspout import SupplierStreamlet

        streamlet: Streamlet
        if isinstance(source, Generator):
            streamlet = GeneratorStreamlet(source)
        elif callable(source):
            streamlet = SupplierStreamlet(source)
        else:
            raise TypeError(
                "a source must be a Generator or a function returning the next element, got "
                f"{type(source).__name__}"
            )
        self._sources.append(streamlet)
        return streamlet

    def build(self, bldr: TopologyBuilder) -> None:
        """Add every stage to ``bldr`` as a spout or bolt (``Runner.run`` calls it).

        Raises:
            TopologyValidationError: no source, two stages with one name, or a stage reads a
                Streamlet whose source was not made by this Builder.
        """
        topology = bldr.name or "<unnamed>"
        if not self._sources:
            raise TopologyValidationError(topology, None, "the Builder has no source")
        reserved: set[str] = set()
        for stage in self._stages():
            name = stage.get_name()
            if name is not None:
                if name in reserved:
                    raise TopologyValidationError(
                        topology,
                        name,
                        f"two stages are named {name!r} (set_name); stage names must be unique",
                    )
                reserved.add(name)
        stage_names: set[str] = set()
        for source in self._sources:
            source._build(bldr, stage_names, reserved)
        for stage in self._stages():
            if not stage._built:
                raise TopologyValidationError(
                    topology,
                    stage.get_name(),
                    f"{stage!r} reads a Streamlet whose source was not made by this Builder "
                    "(new_source)",
                )

    def _stages(self) -> Iterator[Streamlet]:
        """Every stage reachable from the sources, once each."""
        seen: set[int] = set()
        pending = list(self._sources)
        while pending:
            stage = pending.pop()
            if id(stage) in seen:
                continue
            seen.add(id(stage))
            yield stage
            pending.extend(stage._children)
