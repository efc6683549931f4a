"""``TopologyBuilder``, its declarers, and the ``StormTopology`` it creates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from heron_core.api import DEFAULT_STREAM, GlobalStreamId, Grouping, StatefulComponent, Stream
from heron_core.api import TopologyBuilder as NativeBuilder
from heron_core.config import Layer
from heron_core.errors import TopologyValidationError
from heron_core.plan import LogicalPlan
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.state._config import stateful_topology_config
from storm_compat.state._executor import StatefulBoltAdapter
from storm_compat.topology._adapters import (
    BasicBoltAdapter,
    BoltAdapter,
    CustomGroupingAdapter,
    SpoutAdapter,
    StatefulSpoutAdapter,
)
from storm_compat.topology._declarer import OutputFieldsDeclarer
from storm_compat.topology._interfaces import IBasicBolt, IRichBolt, IRichSpout
from storm_compat.topology.base._stateful import IStatefulBolt
from storm_compat.tuple import Fields
from storm_compat.windowing._executor import IWindowedBolt, WindowedBoltExecutor

__all__ = [
    "BoltDeclarer",
    "DeclaredComponent",
    "DeclaredInput",
    "SpoutDeclarer",
    "StormTopology",
    "TopologyBuilder",
]

UNNAMED = "<unnamed>"
MiB = 1 << 20

TASKS = "topology.tasks"
MAX_TASK_PARALLELISM = "topology.max.task.parallelism"

D = TypeVar("D", bound="_ConfigurationDeclarer")


@dataclass(frozen=True)
class DeclaredInput:
    """One subscription of a bolt: the source component, its stream and the grouping."""

    component: str
    stream: str
    grouping: Grouping


@dataclass(frozen=True)
class DeclaredComponent:
    """One spout or bolt as ``createTopology`` saw it.

    Attributes:
        id: the component id.
        component: the user's spout or bolt object.
        parallelism_hint: as given to ``setSpout``/``setBolt``.
        config: ``getComponentConfiguration()`` overlaid with the declarer's settings.
        streams: what ``declareOutputFields`` declared.
        inputs: the bolt's subscriptions, in declaration order.
    """

    id: str
    component: IRichSpout | IRichBolt | IBasicBolt | IStatefulBolt[Any]
    parallelism_hint: int | None
    config: Mapping[str, Any]
    streams: tuple[Stream, ...]
    inputs: tuple[DeclaredInput, ...] = ()


@dataclass(frozen=True)
class StormTopology:
    """What ``TopologyBuilder.createTopology`` returns: the declared spouts and bolts.

    Submit it with ``LocalCluster.submitTopology`` or ``StormSubmitter.submitTopology``, or
    expose it as a module attribute ``topology`` for ``heron submit``/``heron run``.
    """

    components: tuple[DeclaredComponent, ...] = field(default=())

    def to_logical_plan(
        self, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> LogicalPlan:
        """The validated logical plan of this topology named ``name`` with topology ``config``.

        Each component's parallelism is its ``setNumTasks`` (``topology.tasks``) if set, else
        its parallelism hint (default 1), capped by ``topology.max.task.parallelism`` (of the
        component, else of the topology). Component configs are its
        ``getComponentConfiguration()`` overlaid with the declarer's settings. A topology with
        a stateful bolt runs ``EFFECTIVELY_ONCE`` (`stateful_topology_config` maps Storm's
        state keys).

        Raises:
            TopologyValidationError: no name, or a definition error naming the component
                (an undeclared stream or field, a bad grouping, a component that cannot be
                pickled, ...).
            ConfigurationError: an unknown ``topology.*``/``heron.*`` key or a bad value in the
                topology or a component config; a stateful bolt in a topology whose config
                sets a mode other than ``EFFECTIVELY_ONCE``.
        """
        if name is None:
            raise TopologyValidationError(
                UNNAMED, None, "a StormTopology needs a name: pass one to to_logical_plan()"
            )
        stateful = [c.id for c in self.components if isinstance(c.component, IStatefulBolt)]
        config = stateful_topology_config(name, config or {}, stateful)
        topology_config = Layer(f"the config of topology {name!r}", config).validated()
        builder = NativeBuilder(name)
        for comp in self.components:
            conf = Layer(f"the config of topology {name!r}, component {comp.id!r}", comp.config)
            component_config = conf.validated()
            if isinstance(comp.component, WindowedBoltExecutor):  # its timers need ticks
                component_config = comp.component.planned_config(
                    name, comp.id, topology_config, component_config
                )
            par = _parallelism(comp, component_config, topology_config)
            if isinstance(comp.component, IRichSpout):
                kind = (
                    StatefulSpoutAdapter
                    if isinstance(comp.component, StatefulComponent)
                    else SpoutAdapter
                )
                spout = kind(comp.component, comp.streams)
                builder.add_spout(comp.id, spout, par, component_config)
                continue
            adapter: BoltAdapter | BasicBoltAdapter | StatefulBoltAdapter
            if isinstance(comp.component, IStatefulBolt):
                adapter = StatefulBoltAdapter(comp.component, comp.streams)
            elif isinstance(comp.component, IRichBolt):
                adapter = BoltAdapter(comp.component, comp.streams)
            else:
                adapter = BasicBoltAdapter(comp.component, comp.streams)
            inputs = {GlobalStreamId(i.component, i.stream): i.grouping for i in comp.inputs}
            builder.add_bolt(comp.id, adapter, par, inputs, component_config)
        builder.set_config(topology_config)
        return builder.build()

    def with_component(self, declared: DeclaredComponent) -> StormTopology:
        """A copy with the component of ``declared.id`` replaced, or ``declared`` added last."""
        if all(c.id != declared.id for c in self.components):
            return StormTopology((*self.components, declared))
        return StormTopology(tuple(declared if c.id == declared.id else c for c in self.components))


def _parallelism(
    comp: DeclaredComponent, config: Mapping[str, Any], topology: Mapping[str, Any]
) -> Any:
    tasks = config.get(TASKS)
    if tasks is None:
        tasks = 1 if comp.parallelism_hint is None else comp.parallelism_hint
    cap = config.get(MAX_TASK_PARALLELISM, topology.get(MAX_TASK_PARALLELISM))
    if cap is not None and isinstance(tasks, int):
        tasks = min(tasks, cap)
    return tasks


class _ConfigurationDeclarer:
    """Storm's ``ComponentConfigurationDeclarer``: every setter returns the declarer."""

    def __init__(self, builder: TopologyBuilder, component_id: str) -> None:
        self._builder = builder
        self._id = component_id

    def addConfigurations(self: D, conf: Mapping[str, Any] | None) -> D:
        """Add ``conf`` to this component's config."""
        self._builder._configs[self._id].update(conf or {})
        return self

    def addConfiguration(self: D, config: str, value: Any) -> D:
        """Set one key of this component's config."""
        self._builder._configs[self._id][config] = value
        return self

    def setDebug(self: D, debug: bool) -> D:
        """Log every emit, ack and fail of this component (``topology.debug``)."""
        return self.addConfiguration("topology.debug", debug)

    def setMaxTaskParallelism(self: D, val: int) -> D:
        """Cap this component's tasks (``topology.max.task.parallelism``)."""
        return self.addConfiguration(MAX_TASK_PARALLELISM, val)

    def setMaxSpoutPending(self: D, val: int) -> D:
        """Most un-acked tuples per task of this spout (``topology.max.spout.pending``)."""
        return self.addConfiguration("topology.max.spout.pending", val)

    def setNumTasks(self: D, val: int) -> D:
        """This component's number of tasks, one process each (``topology.tasks``)."""
        return self.addConfiguration(TASKS, val)

    def setMemoryLoad(self: D, onHeap: float, offHeap: float = 0.0) -> D:
        """Megabytes of memory per task, for packing (``topology.component.ram``, bytes)."""
        return self.addConfiguration("topology.component.ram", int((onHeap + offHeap) * MiB))

    def setCPULoad(self: D, amount: float) -> D:
        """CPU per task in percent of a core, for packing (``topology.component.cpu``)."""
        return self.addConfiguration("topology.component.cpu", amount / 100)


class SpoutDeclarer(_ConfigurationDeclarer):
    """Returned by ``setSpout``: configures the spout."""


class BoltDeclarer(_ConfigurationDeclarer):
    """Returned by ``setBolt``: subscribes the bolt to streams and configures it.

    Every grouping method takes an optional stream id (default ``"default"``) after the
    component id and returns the declarer, so calls chain.
    """

    def _subscribe(self, component: str, stream: str, grouping: Grouping) -> BoltDeclarer:
        if not isinstance(component, str) or not isinstance(stream, str):
            raise TypeError(
                f"bolt {self._id!r}: groupings take a component id and a stream id (str), "
                f"got {component!r}, {stream!r}"
            )
        self._builder._inputs[self._id].append(DeclaredInput(component, stream, grouping))
        return self

    def shuffleGrouping(self, componentId: str, streamId: str = DEFAULT_STREAM) -> BoltDeclarer:
        """Tuples are spread randomly and evenly over the bolt's tasks."""
        return self._subscribe(componentId, streamId, Grouping.SHUFFLE)

    def localOrShuffleGrouping(
        self, componentId: str, streamId: str = DEFAULT_STREAM
    ) -> BoltDeclarer:
        """Shuffle among the bolt's tasks in the emitter's container, if any."""
        return self._subscribe(componentId, streamId, Grouping.LOCAL_OR_SHUFFLE)

    def noneGrouping(self, componentId: str, streamId: str = DEFAULT_STREAM) -> BoltDeclarer:
        """No preference (a shuffle)."""
        return self._subscribe(componentId, streamId, Grouping.NONE)

    def globalGrouping(self, componentId: str, streamId: str = DEFAULT_STREAM) -> BoltDeclarer:
        """Every tuple goes to the bolt's task with the lowest id."""
        return self._subscribe(componentId, streamId, Grouping.GLOBAL)

    def allGrouping(self, componentId: str, streamId: str = DEFAULT_STREAM) -> BoltDeclarer:
        """Every tuple goes to every task of the bolt."""
        return self._subscribe(componentId, streamId, Grouping.ALL)

    def directGrouping(self, componentId: str, streamId: str = DEFAULT_STREAM) -> BoltDeclarer:
        """The emitter names the task (``emitDirect``); the stream must be declared direct."""
        return self._subscribe(componentId, streamId, Grouping.DIRECT)

    def fieldsGrouping(self, componentId: str, *args: Any) -> BoltDeclarer:
        """``fieldsGrouping(componentId, [streamId,] fields)``: equal values of ``fields`` go
        to the same task."""
        stream, fields = _stream_and_fields(self._id, "fieldsGrouping", args)
        return self._subscribe(componentId, stream, Grouping.fields(fields.toList()))

    def partialKeyGrouping(self, componentId: str, *args: Any) -> BoltDeclarer:
        """``partialKeyGrouping(componentId, [streamId,] fields)``: like ``fieldsGrouping``,
        each key split between two tasks, the less loaded chosen."""
        stream, fields = _stream_and_fields(self._id, "partialKeyGrouping", args)
        return self._subscribe(componentId, stream, Grouping.partial_key(fields.toList()))

    def customGrouping(self, componentId: str, *args: Any) -> BoltDeclarer:
        """``customGrouping(componentId, [streamId,] grouping)``: a ``CustomStreamGrouping``
        picks the tasks (it is pickled now).

        Raises:
            TypeError: not a CustomStreamGrouping, or it cannot be pickled.
        """
        if len(args) == 1:
            stream, grouping = DEFAULT_STREAM, args[0]
        elif len(args) == 2:
            stream, grouping = args
        else:
            raise TypeError(
                f"bolt {self._id!r}: customGrouping(componentId, [streamId,] grouping) got "
                f"{1 + len(args)} arguments"
            )
        if not isinstance(grouping, CustomStreamGrouping):
            raise TypeError(
                f"bolt {self._id!r}: customGrouping needs a CustomStreamGrouping, got {grouping!r}"
            )
        return self._subscribe(
            componentId, stream, Grouping.custom(CustomGroupingAdapter(grouping))
        )


def _stream_and_fields(bolt: str, method: str, args: tuple[Any, ...]) -> tuple[str, Fields]:
    if len(args) == 1:
        stream, fields = DEFAULT_STREAM, args[0]
    elif len(args) == 2:
        stream, fields = args
    else:
        raise TypeError(
            f"bolt {bolt!r}: {method}(componentId, [streamId,] fields) got {1 + len(args)} "
            "arguments"
        )
    if isinstance(fields, list | tuple):
        fields = Fields(list(fields))
    if not isinstance(fields, Fields) or not fields.size():
        raise TypeError(f"bolt {bolt!r}: {method} needs non-empty Fields, got {fields!r}")
    return stream, fields


class TopologyBuilder:
    """Declare spouts and bolts, then ``createTopology()``.

    >>> from storm_compat.testing import TestWordCounter, TestWordSpout
    >>> builder = TopologyBuilder()
    >>> _ = builder.setSpout("words", TestWordSpout(), 2)
    >>> _ = builder.setBolt("count", TestWordCounter(), 3).fieldsGrouping("words", Fields("word"))
    >>> plan = builder.createTopology().to_logical_plan("word-count")
    >>> [(c.name, c.parallelism) for c in plan.components]
    [('words', 2), ('count', 3)]
    """

    def __init__(self) -> None:
        self._components: dict[str, tuple[Any, int | None]] = {}
        self._configs: dict[str, dict[str, Any]] = {}
        self._inputs: dict[str, list[DeclaredInput]] = {}

    def _add(self, component_id: str, component: Any, hint: int | None, kind: str) -> None:
        if not isinstance(component_id, str):
            raise TypeError(f"{kind} ids must be str, got {component_id!r}")
        if component_id in self._components:
            raise TopologyValidationError(
                UNNAMED, component_id, "the topology already has a spout or bolt with this id"
            )
        self._components[component_id] = (component, hint)
        self._configs[component_id] = dict(component.getComponentConfiguration() or {})
        self._inputs[component_id] = []

    def setSpout(
        self, id: str, spout: IRichSpout, parallelism_hint: int | None = None
    ) -> SpoutDeclarer:
        """Add spout ``spout`` as ``id`` with ``parallelism_hint`` tasks (default 1).

        Raises:
            TopologyValidationError: ``id`` is taken, or ``spout`` is not an IRichSpout.
        """
        if not isinstance(spout, IRichSpout):
            raise TopologyValidationError(
                UNNAMED, id, f"setSpout needs an IRichSpout (e.g. a BaseRichSpout), got {spout!r}"
            )
        self._add(id, spout, parallelism_hint, "spout")
        return SpoutDeclarer(self, id)

    def setBolt(
        self,
        id: str,
        bolt: IRichBolt | IBasicBolt | IWindowedBolt | IStatefulBolt[Any],
        parallelism_hint: int | None = None,
    ) -> BoltDeclarer:
        """Add bolt ``bolt`` as ``id`` with ``parallelism_hint`` tasks (default 1); subscribe
        it with the groupings of the returned declarer. A windowed bolt runs in a
        ``WindowedBoltExecutor``; a stateful bolt makes the topology ``EFFECTIVELY_ONCE``.

        Raises:
            TopologyValidationError: ``id`` is taken, or ``bolt`` is not an IRichBolt, an
                IBasicBolt, an IWindowedBolt or an IStatefulBolt.
        """
        if isinstance(bolt, IWindowedBolt):
            bolt = WindowedBoltExecutor(bolt)
        if not isinstance(bolt, IRichBolt | IBasicBolt | IStatefulBolt):
            raise TopologyValidationError(
                UNNAMED,
                id,
                "setBolt needs an IRichBolt, IBasicBolt, IWindowedBolt or IStatefulBolt (e.g. a "
                f"BaseRichBolt, BaseBasicBolt, BaseWindowedBolt or BaseStatefulBolt), got {bolt!r}",
            )
        self._add(id, bolt, parallelism_hint, "bolt")
        return BoltDeclarer(self, id)

    def createTopology(self) -> StormTopology:
        """The topology as declared so far (later changes to the builder do not affect it).

        Calls every component's ``declareOutputFields``.

        Raises:
            TopologyValidationError: a ``declareOutputFields`` raised (naming the component).
        """
        components = []
        for component_id, (component, hint) in self._components.items():
            declarer = OutputFieldsDeclarer(component_id)
            try:
                component.declareOutputFields(declarer)
            except Exception as exc:
                raise TopologyValidationError(
                    UNNAMED, component_id, f"declareOutputFields raised {exc!r}"
                ) from exc
            components.append(
                DeclaredComponent(
                    component_id,
                    component,
                    hint,
                    dict(self._configs[component_id]),
                    tuple(declarer.streams),
                    tuple(self._inputs[component_id]),
                )
            )
        return StormTopology(tuple(components))
