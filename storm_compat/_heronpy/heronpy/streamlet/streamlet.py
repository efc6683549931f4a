"""``Streamlet``: a stream of elements and the operations that make new ones (heronpy's
module path).

Each operation adds one stage; building the topology turns each stage into one spout or bolt
named ``<operation>-<n>`` (or the name given with ``set_name``) that emits its elements on
stream ``output``, field ``_output_``.

>>> from heronpy.streamlet.builder import Builder
>>> from heron_core.api import TopologyBuilder
>>> builder = Builder()
>>> lines = builder.new_source(lambda: "a b a")
>>> lines.flat_map(str.split).map(lambda word: (word, 1)).set_num_partitions(2).log()
>>> topology = TopologyBuilder("words")
>>> builder.build(topology)
>>> [(c.name, c.parallelism) for c in topology.build().components]
[('supplier-1', 1), ('flatmap-1', 1), ('map-1', 2), ('log-1', 2)]
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heron_core.api import GlobalStreamId, Grouping
from heron_core.errors import TopologyValidationError
from heronpy.streamlet.impl.streamletboltbase import OUTPUT_STREAM

if TYPE_CHECKING:
    from heron_core.api import TopologyBuilder
    from heronpy.streamlet.transformoperator import TransformOperator
    from heronpy.streamlet.windowconfig import WindowConfig

__all__ = ["Streamlet"]

_IMPL = "heronpy.streamlet.impl"


def _callable(function: object, what: str) -> None:
    if not callable(function):
        raise TypeError(f"{what} must be callable, got {type(function).__name__} {function!r}")


class Streamlet:
    """A (possibly unbounded) ordered stream of elements, made by ``Builder.new_source`` or by
    an operation on another Streamlet. Operations return the new Streamlet; ``log`` and
    ``consume`` end a branch and return None.
    """

    _prefix = ""
    """The operation's stage-name prefix (``map`` names stages ``map-1``, ``map-2``...)."""

    def __init__(self, parents: tuple[Streamlet, ...] = ()) -> None:
        for parent in parents:
            if not isinstance(parent, Streamlet):
                raise TypeError(
                    f"a {self._prefix} stage reads Streamlets, got {type(parent).__name__}"
                )
        self._parents = parents
        self._name: str | None = None
        self._num_partitions = parents[0].get_num_partitions() if parents else 1
        self._children: list[Streamlet] = []
        self._built = False
        self._output = OUTPUT_STREAM
        for parent in dict.fromkeys(parents):
            parent._add_child(self)

    # --- naming and partitions ----------------------------------------------------------------
    def set_name(self, name: str) -> Streamlet:
        """Name this stage (its component's name); returns self.

        Raises:
            ValueError: ``name`` is not a non-empty str, or starts with ``__`` (reserved).
        """
        if not isinstance(name, str) or not name or name.startswith("__"):
            raise ValueError(
                f"a stage name must be a non-empty str not starting with '__', got {name!r}"
            )
        self._name = name
        return self

    def get_name(self) -> str | None:
        """The stage's name: the one set, or the default one once built; else None."""
        return self._name

    def set_num_partitions(self, num_partitions: int) -> Streamlet:
        """Run this stage as ``num_partitions`` tasks; returns self.

        Raises:
            ValueError: not an int of at least 1.
        """
        if isinstance(num_partitions, bool) or not isinstance(num_partitions, int):
            raise ValueError(f"num_partitions must be an int >= 1, got {num_partitions!r}")
        if num_partitions < 1:
            raise ValueError(f"num_partitions must be an int >= 1, got {num_partitions!r}")
        self._num_partitions = num_partitions
        return self

    def get_num_partitions(self) -> int:
        """The number of tasks of this stage (default: its first parent's, 1 for a source)."""
        return self._num_partitions

    # --- operations ---------------------------------------------------------------------------
    def map(self, map_function: Callable[[Any], Any]) -> Streamlet:
        """Each element ``e`` becomes ``map_function(e)``."""
        _callable(map_function, "the map function")
        return self._stage("mapbolt", "MapStreamlet", map_function, self)

    def flat_map(self, flatmap_function: Callable[[Any], Any]) -> Streamlet:
        """Each element ``e`` becomes the items of ``flatmap_function(e)`` (a result that is
        not iterable is one element)."""
        _callable(flatmap_function, "the flat_map function")
        return self._stage("flatmapbolt", "FlatMapStreamlet", flatmap_function, self)

    def filter(self, filter_function: Callable[[Any], Any]) -> Streamlet:
        """Only the elements for which ``filter_function(e)`` is true."""
        _callable(filter_function, "the filter function")
        return self._stage("filterbolt", "FilterStreamlet", filter_function, self)

    def repartition(
        self,
        num_partitions: int,
        repartition_function: Callable[[Any, int], int | list[int]] | None = None,
    ) -> Streamlet:
        """The same elements over ``num_partitions`` tasks (a new stage).

        Args:
            num_partitions: the new stage's number of partitions.
            repartition_function: ``f(element, num_partitions)`` returns the partition index
                (0 to ``num_partitions - 1``, taken modulo) or a list of them: the element
                goes to each. None spreads the elements evenly (shuffle).

        Raises:
            TypeError: ``repartition_function`` does not take two arguments.
        """
        if repartition_function is not None:
            _callable(repartition_function, "the repartition function")
            try:
                inspect.signature(repartition_function).bind(None, 1)
            except TypeError:
                raise TypeError(
                    f"the repartition function {repartition_function!r} must take two "
                    "arguments: the element and the number of partitions"
                ) from None
            except ValueError:  # no signature (a builtin): it is called as it is
                pass
        stage = self._stage("repartitionbolt", "RepartitionStreamlet", repartition_function, self)
        return stage.set_num_partitions(num_partitions)

    def clone(self, num_clones: int) -> list[Streamlet]:
        """``num_clones`` Streamlets, each with every element of this one."""
        return [self.repartition(self.get_num_partitions()) for _ in range(num_clones)]

    def reduce_by_window(
        self, window_config: WindowConfig, reduce_function: Callable[[Any, Any], Any]
    ) -> Streamlet:
        """One element per window: ``(Window, result)``, the result folding every element of
        the window as heronpy does: ``result = reduce_function(result, e)``, starting from
        None. One task reduces the whole stream; windows without elements emit nothing.
        """
        _callable(reduce_function, "the reduce function")
        return self._stage(
            "reducebywindowbolt",
            "ReduceByWindowStreamlet",
            _window(window_config),
            reduce_function,
            self,
        )

    def reduce_by_key_and_window(
        self, window_config: WindowConfig, reduce_function: Callable[[Any, Any], Any]
    ) -> Streamlet:
        """Elements are ``(key, value)`` pairs: per window and key, one element
        ``(KeyedWindow(key, Window), result)``, the values folded in arrival order with
        ``reduce_function(a, b)`` from the first. Each key is reduced by one task.
        """
        _callable(reduce_function, "the reduce function")
        return self._stage(
            "reducebykeyandwindowbolt",
            "ReduceByKeyAndWindowStreamlet",
            _window(window_config),
            reduce_function,
            self,
        )

    def union(self, other_streamlet: Streamlet) -> Streamlet:
        """Every element of this Streamlet and of ``other_streamlet``."""
        return self._stage("unionbolt", "UnionStreamlet", self, other_streamlet)

    def transform(self, transform_operator: TransformOperator) -> Streamlet:
        """What ``transform_operator`` emits: its ``setup(context)`` is called once per task,
        then ``transform(tup)`` per input tuple (the element is ``tup.values[0]``); it emits
        with ``context.emit(value)``."""
        return self._stage("transformbolt", "TransformStreamlet", transform_operator, self)

    def log(self) -> None:
        """Log each element (at INFO, to the stage's log)."""
        self._stage("logbolt", "LogStreamlet", self)

    def consume(self, consume_function: Callable[[Any], Any]) -> None:
        """Call ``consume_function(e)`` for each element (a sink)."""
        _callable(consume_function, "the consume function")
        self._stage("consumebolt", "ConsumeStreamlet", consume_function, self)

    def join(
        self,
        join_streamlet: Streamlet,
        window_config: WindowConfig,
        join_function: Callable[[Any, Any], Any],
    ) -> Streamlet:
        """Inner join of ``(key, value)`` elements per window: for each key with values on
        both sides, ``(KeyedWindow(key, Window), join_function(left, right))`` for every pair
        (this Streamlet is the left side)."""
        return self._join(join_streamlet, window_config, join_function, "INNER")

    def outer_left_join(
        self,
        join_streamlet: Streamlet,
        window_config: WindowConfig,
        join_function: Callable[[Any, Any], Any],
    ) -> Streamlet:
        """As `join`, and a key with values only on the left gives
        ``join_function(left, None)`` per value."""
        return self._join(join_streamlet, window_config, join_function, "OUTER_LEFT")

    def outer_right_join(
        self,
        join_streamlet: Streamlet,
        window_config: WindowConfig,
        join_function: Callable[[Any, Any], Any],
    ) -> Streamlet:
        """As `join`, and a key with values only on the right gives
        ``join_function(None, right)`` per value."""
        return self._join(join_streamlet, window_config, join_function, "OUTER_RIGHT")

    def outer_join(
        self,
        join_streamlet: Streamlet,
        window_config: WindowConfig,
        join_function: Callable[[Any, Any], Any],
    ) -> Streamlet:
        """Both outer joins at once: keys with values on one side only are joined with None."""
        return self._join(join_streamlet, window_config, join_function, "OUTER")

    def _join(
        self,
        other: Streamlet,
        window_config: WindowConfig,
        join_function: Callable[[Any, Any], Any],
        kind: str,
    ) -> Streamlet:
        if other is self:
            raise ValueError("a Streamlet cannot be joined with itself; clone() it first")
        _callable(join_function, "the join function")
        join_type = getattr(
            importlib.import_module("heronpy.streamlet.impl.joinbolt").JoinBolt, kind
        )
        return self._stage(
            "joinbolt",
            "JoinStreamlet",
            join_type,
            _window(window_config),
            join_function,
            self,
            other,
        )

    @staticmethod
    def _stage(module: str, name: str, *args: Any) -> Streamlet:
        """A new stage: ``name`` of ``heronpy.streamlet.impl.<module>`` built with ``args``.

        Imported here (each stage's module imports this one).
        """
        stage: Streamlet = getattr(importlib.import_module(f"{_IMPL}.{module}"), name)(*args)
        return stage

    # --- building -----------------------------------------------------------------------------
    def _add_child(self, child: Streamlet) -> None:
        self._children.append(child)

    def _inputs(self, grouping: Grouping) -> dict[GlobalStreamId, Grouping]:
        """Every parent's ``output`` stream, with ``grouping``."""
        return {GlobalStreamId(p._stage_name(), p._output): grouping for p in self._parents}

    def _stage_name(self) -> str:
        assert self._name is not None, "a stage is named before its children are built"
        return self._name

    def _build(self, bldr: TopologyBuilder, stage_names: set[str], reserved: set[str]) -> None:
        """Add this stage (once all its parents are added), then its children."""
        if self._built or not all(parent._built for parent in self._parents):
            return
        topology = bldr.name or "<unnamed>"
        if self._name is None:
            self._name = self._default_stage_name_calculator(self._prefix, stage_names | reserved)
        if self._name in stage_names:
            raise TopologyValidationError(
                topology,
                self._name,
                f"two stages are named {self._name!r} (set_name); stage names must be unique",
            )
        stage_names.add(self._name)
        self._build_this(bldr)
        self._built = True
        for child in self._children:
            child._build(bldr, stage_names, reserved)

    def _build_this(self, bldr: TopologyBuilder) -> None:
        """Add this stage's spout or bolt to ``bldr`` (each operation implements it)."""
        raise NotImplementedError(f"{type(self).__name__} does not build")

    @staticmethod
    def _default_stage_name_calculator(prefix: str, existing_stage_names: set[str]) -> str:
        """``<prefix>-<n>`` with the smallest n >= 1 not taken."""
        index = 1
        while f"{prefix}-{index}" in existing_stage_names:
            index += 1
        return f"{prefix}-{index}"

    def _all_built(self) -> bool:
        return self._built and all(child._all_built() for child in self._children)

    def __repr__(self) -> str:
        name = self._name or f"<unnamed {self._prefix}>"
        return f"{type(self).__name__}({name!r}, partitions={self._num_partitions})"


def _window(window_config: object) -> WindowConfig:
    from heronpy.streamlet.windowconfig import WindowConfig

    if not isinstance(window_config, WindowConfig):
        raise TypeError(
            "the window must be a WindowConfig (WindowConfig.create_sliding_window or "
            f"create_tumbling_window), got {type(window_config).__name__}"
        )
    return window_config
