"""From a Flux definition to the kernel's logical plan, through Storm's ``TopologyBuilder``.

Objects are built in Flux's order: ``components`` (for ``ref``s), spouts, bolts; then each
stream subscribes its target bolt (a bolt no stream targets is left out, as Flux does). A bolt
may be any kind ``TopologyBuilder.setBolt`` takes: rich, basic, windowed (its window set by
``configMethods`` with ``BaseWindowedBolt$Count``/``$Duration`` components) or stateful.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from heron_core.api import Bolt, Spout
from heron_core.client import LoadedTopology
from heron_core.errors import ConfigurationError, HeronError, UserCodeError
from heron_core.plan import LogicalPlan
from heron_core.plugins import resolve_class
from storm_compat.flux._model import BeanDef, FluxDefinition, Ref, RefList, StreamDef, VertexDef
from storm_compat.flux._native import NativeBolt, NativeSpout
from storm_compat.flux._parser import load_definition
from storm_compat.flux._substitution import find_properties, parse_properties
from storm_compat.grouping import CustomStreamGrouping
from storm_compat.topology import (
    BoltDeclarer,
    IBasicBolt,
    IRichBolt,
    IRichSpout,
    IStatefulBolt,
    IWindowedBolt,
    SpoutDeclarer,
    StormTopology,
    TopologyBuilder,
)
from storm_compat.topology.base import BaseWindowedBolt
from storm_compat.tuple import Fields

__all__ = ["JAVA_CLASSES", "build_plan", "build_topology", "load_flux_topology"]

log = logging.getLogger(__name__)

_WRAPPERS = "storm_compat.flux.wrappers"
JAVA_CLASSES = {
    "org.apache.storm.flux.wrappers.spouts.FluxShellSpout": f"{_WRAPPERS}:FluxShellSpout",
    "org.apache.storm.flux.wrappers.bolts.FluxShellBolt": f"{_WRAPPERS}:FluxShellBolt",
    "org.apache.storm.flux.wrappers.bolts.LogInfoBolt": f"{_WRAPPERS}:LogInfoBolt",
    "org.apache.storm.spout.ShellSpout": f"{_WRAPPERS}:FluxShellSpout",
    "org.apache.storm.task.ShellBolt": f"{_WRAPPERS}:FluxShellBolt",
    "org.apache.storm.testing.TestWordSpout": "storm_compat.testing:TestWordSpout",
    "org.apache.storm.testing.TestWordCounter": "storm_compat.testing:TestWordCounter",
    "org.apache.storm.topology.base.BaseWindowedBolt$Count": (
        "storm_compat.topology.base:BaseWindowedBolt.Count"
    ),
    "org.apache.storm.topology.base.BaseWindowedBolt$Duration": (
        "storm_compat.topology.base:BaseWindowedBolt.Duration"
    ),
    "org.apache.storm.topology.TupleFieldTimestampExtractor": (
        "storm_compat.topology:TupleFieldTimestampExtractor"
    ),
    "org.apache.storm.tuple.Fields": "storm_compat.tuple:Fields",
}
"""Storm's Java classes that have a Python counterpart, for ``className``."""

_WINDOW_VALUES: dict[type, str] = {
    BaseWindowedBolt.Count: (
        "a BaseWindowedBolt$Count is a number of tuples: constructorArgs: [n] (or factory: of, "
        "factoryArgs: [n])"
    ),
    BaseWindowedBolt.Duration: (
        "a BaseWindowedBolt$Duration is constructorArgs: [n, UNIT], UNIT the name of a "
        "java.util.concurrent.TimeUnit such as SECONDS (or factory: seconds, minutes, hours, "
        "days or of (milliseconds), factoryArgs: [n])"
    ),
}
"""What a Flux file must give to build each of Storm's window values, for error messages."""

_WINDOW_LENGTHS = ("withWindow", "withTumblingWindow", "withLag", "withWatermarkInterval")
_WINDOW_HINT = (
    "window lengths, sliding intervals, lags and watermark intervals are components with "
    "className org.apache.storm.topology.base.BaseWindowedBolt$Count or $Duration, passed as "
    "{ref: <component id>}"
)

_GROUPING_METHODS = {
    "SHUFFLE": "shuffleGrouping",
    "ALL": "allGrouping",
    "DIRECT": "directGrouping",
    "GLOBAL": "globalGrouping",
    "LOCAL_OR_SHUFFLE": "localOrShuffleGrouping",
    "NONE": "noneGrouping",
}


def load_flux_topology(path: Path, name: str | None = None) -> LoadedTopology:
    """Load a Flux YAML file (``heron submit|run topology.yaml``).

    ``${...}`` references are filled from the environment (``${ENV-NAME}``) and from a
    properties file (Flux's ``--filter``): the file named by ``$HERON_FLUX_PROPERTIES``,
    else ``<name>.properties`` beside the YAML. Each ``className`` is a Python class path
    (``package.module.Class``, importable with the YAML's directory on ``sys.path``) of a
    Storm-facade or native spout/bolt, or one of Storm's classes in :data:`JAVA_CLASSES`
    (shell spouts and bolts run through the multilang host). Bolts may be windowed (a
    ``BaseWindowedBolt`` whose ``configMethods`` call ``withWindow``/``withTumblingWindow``...
    with ``BaseWindowedBolt$Count``/``$Duration`` components) or stateful (an
    ``IStatefulBolt``: the topology then runs ``EFFECTIVELY_ONCE``), as with
    ``TopologyBuilder``. The YAML's directory becomes the topology's code directory, where
    every component runs: shell commands such as ``python splitsentence.py`` find their
    scripts (and ``storm.py``) beside the YAML, as Storm finds them in the jar's
    ``resources/`` directory.

    Args:
        path: the YAML file.
        name: the topology name (default: the file's ``name``).

    Raises:
        ConfigurationError: a bad file, entry, class name, reference, grouping or window
            argument, naming the file and the entry; a bad config or window setting, naming
            the file, the component and the setting.
        UserCodeError: building a component raised (the exception is chained).
        TopologyValidationError: the topology is not valid.

    >>> load_flux_topology(Path("/no/such/topology.yaml"))
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: cannot read flux file '/no/such/topology.yaml': \
[Errno 2] No such file or directory: '/no/such/topology.yaml'
    """
    path = Path(path).resolve()
    properties_file = find_properties(path)
    properties = parse_properties(properties_file.read_text()) if properties_file else {}
    definition = load_definition(path, properties)
    topology_name = name or definition.name
    if not topology_name:
        raise ConfigurationError(
            f"flux file {str(path)!r}: no topology name: set 'name' in the file or pass one"
        )
    directory = str(path.parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return LoadedTopology(build_plan(definition, topology_name), path.parent, str(path))


def build_topology(definition: FluxDefinition) -> StormTopology:
    """The Storm-facade topology ``definition`` describes (Storm's ``FluxBuilder.buildTopology``),
    not yet checked as a whole: `build_plan` makes the plan of it; ``Testing.completeTopology``
    can run it.

    Raises:
        ConfigurationError: a bad entry, class name, reference or grouping, or a bad argument
            of a window (a ``BaseWindowedBolt$Count``/``$Duration`` component or a windowed
            bolt's ``configMethods``), naming the file and the entry.
        UserCodeError: building a component raised (the exception is chained).
        TopologyValidationError: a component's ``declareOutputFields`` raised.
    """
    return _Builder(definition).topology()


def build_plan(definition: FluxDefinition, name: str) -> LogicalPlan:
    """The validated logical plan of ``definition``, named ``name``.

    Windowed bolts get their windows checked, and a topology with a stateful bolt runs
    ``EFFECTIVELY_ONCE`` (with Storm's ``topology.state.checkpoint.interval.ms``), as for a
    topology built with ``TopologyBuilder``; a config found wrong then is named with the file.

    Raises:
        ConfigurationError, UserCodeError, TopologyValidationError: as ``load_flux_topology``.
    """
    topology = build_topology(definition)
    try:
        return topology.to_logical_plan(name, dict(definition.config))
    except ConfigurationError as exc:
        if type(exc) is not ConfigurationError:
            raise
        raise ConfigurationError(f"flux file {definition.path!r}: {exc}") from exc


def _fail(where: str, message: str) -> NoReturn:
    raise ConfigurationError(f"{where}: {message}")


class _Builder:
    def __init__(self, definition: FluxDefinition) -> None:
        self.definition = definition
        self.components: dict[str, Any] = {}
        for bean in definition.components:
            self.components[bean.id] = self.build(bean)

    # --- objects ---------------------------------------------------------------------------
    def resolve(self, bean: BeanDef) -> type:
        name = bean.class_name
        try:
            cls = resolve_class(JAVA_CLASSES.get(name, name))
        except ConfigurationError as exc:
            if name.startswith(("org.apache.storm.", "backtype.storm.")):
                _fail(
                    bean.where,
                    f"Java class {name!r} has no Python counterpart; use a Python class "
                    f"(package.module.Class) or a shell component (FluxShellSpout, FluxShellBolt); "
                    f"Storm classes with a counterpart: {', '.join(sorted(JAVA_CLASSES))}",
                )
            _fail(
                bean.where,
                f"className {name!r} is not an importable Python class ({exc}); if it is a Java "
                "class, it has no Python counterpart",
            )
        if not isinstance(cls, type):
            _fail(bean.where, f"className {name!r} is a {type(cls).__name__}, not a class")
        return cls

    def lookup(self, component: str, where: str) -> Any:
        if component not in self.components:
            known = ", ".join(self.components) or "none"
            _fail(
                where, f"ref {component!r} names no component declared before it; declared: {known}"
            )
        return self.components[component]

    def values(self, args: Sequence[Any], where: str) -> list[Any]:
        resolved = []
        for arg in args:
            if isinstance(arg, Ref):
                resolved.append(self.lookup(arg.id, where))
            elif isinstance(arg, RefList):
                resolved.append([self.lookup(i, where) for i in arg.ids])
            else:
                resolved.append(arg)
        return resolved

    def call(
        self,
        bean: BeanDef,
        what: str,
        target: Any,
        args: Sequence[Any],
        bad_input: tuple[str, str] | None = None,
    ) -> Any:
        """``target(*args)``; what it raises is the user code's fault, except a TypeError or
        ValueError when ``bad_input`` (the entry's field, a hint) says the file gave the
        arguments a library call checks: then it is a ConfigurationError naming the field."""
        try:
            return target(*args)
        except HeronError:
            raise
        except Exception as exc:
            shown = ", ".join(repr(a) for a in args)
            if bad_input is not None and isinstance(exc, TypeError | ValueError):
                field, hint = bad_input
                hint = f"; {hint}" if hint else ""
                raise ConfigurationError(
                    f"{bean.where}, {field}: {what}({shown}): {exc}{hint}"
                ) from exc
            raise UserCodeError(f"{bean.where}: {what}({shown}) raised {exc!r}") from exc

    def build(self, bean: BeanDef) -> Any:
        cls = self.resolve(bean)
        if bean.factory is not None:
            factory = getattr(cls, bean.factory, None)
            if not callable(factory):
                _fail(bean.where, f"{bean.class_name} has no factory method {bean.factory!r}")
            args = self.values(bean.factory_args, bean.where)
            hint = _WINDOW_VALUES.get(cls)
            checked = None if hint is None else ("factoryArgs", hint)
            obj = self.call(bean, f"{bean.class_name}.{bean.factory}", factory, args, checked)
        else:
            args = self.values(bean.constructor_args, bean.where)
            hint = _WINDOW_VALUES.get(cls)
            checked = None if hint is None else ("constructorArgs", hint)
            obj = self.call(bean, bean.class_name, cls, args, checked)
        for prop in bean.properties:
            value = self.lookup(prop.ref, bean.where) if prop.ref is not None else prop.value
            setter_name = "set" + prop.name[:1].upper() + prop.name[1:]
            setter = getattr(obj, setter_name, None)
            if callable(setter):
                self.call(bean, f"{bean.class_name}.{setter_name}", setter, [value])
            elif hasattr(obj, prop.name):
                setattr(obj, prop.name, value)
            else:
                _fail(
                    bean.where,
                    f"property {prop.name!r}: {bean.class_name} has no method {setter_name} "
                    f"and no attribute {prop.name!r}",
                )
        for i, method in enumerate(bean.config_methods):
            target = getattr(obj, method.name, None)
            if not callable(target):
                _fail(bean.where, f"configMethods: {bean.class_name} has no method {method.name!r}")
            args = self.values(method.args, bean.where)
            checked = None
            if isinstance(obj, BaseWindowedBolt) and _is_window_method(method.name):
                hint = _WINDOW_HINT if method.name in _WINDOW_LENGTHS else ""
                checked = (f"configMethods[{i}] ({method.name})", hint)
            self.call(bean, f"{bean.class_name}.{method.name}", target, args, checked)
        return obj

    # --- the topology ----------------------------------------------------------------------
    def topology(self) -> StormTopology:
        definition = self.definition
        if definition.topology_source is not None:
            return self.from_source()
        clash = {s.id for s in definition.spouts} & {b.id for b in definition.bolts}
        if clash:
            _fail(
                f"flux file {definition.path!r}", f"ids used by a spout and a bolt: {sorted(clash)}"
            )
        builder = TopologyBuilder()
        for vertex in definition.spouts:
            spout = self.build(vertex.bean)
            if isinstance(spout, Spout):
                spout = NativeSpout(spout)
            if not isinstance(spout, IRichSpout):
                _fail(vertex.bean.where, _not_a(vertex.bean, "spout", "IRichSpout", "Spout"))
            self.configure(builder.setSpout(vertex.id, spout, vertex.parallelism), vertex)
        bolts: dict[str, tuple[VertexDef, Any]] = {}
        for vertex in definition.bolts:
            bolt = self.build(vertex.bean)
            if isinstance(bolt, Bolt):
                bolt = NativeBolt(bolt)
            if not isinstance(bolt, IRichBolt | IBasicBolt | IWindowedBolt | IStatefulBolt):
                _fail(
                    vertex.bean.where,
                    _not_a(
                        vertex.bean,
                        "bolt",
                        "IRichBolt/IBasicBolt/IWindowedBolt/IStatefulBolt",
                        "Bolt",
                    ),
                )
            bolts[vertex.id] = (vertex, bolt)
        declarers: dict[str, BoltDeclarer] = {}
        spouts = [s.id for s in definition.spouts]
        for stream in definition.streams:
            if stream.target not in bolts:
                what = "a spout" if stream.target in spouts else "not a declared bolt"
                _fail(
                    stream.where,
                    f"'to' names {stream.target!r}, which is {what}; bolts: "
                    f"{', '.join(bolts) or 'none'}",
                )
            if stream.source not in bolts and stream.source not in spouts:
                _fail(
                    stream.where,
                    f"'from' names unknown component {stream.source!r}; "
                    f"components: {', '.join([*spouts, *bolts]) or 'none'}",
                )
            declarer = declarers.get(stream.target)
            if declarer is None:
                vertex, bolt = bolts[stream.target]
                declarer = builder.setBolt(vertex.id, bolt, vertex.parallelism)
                self.configure(declarer, vertex)
                declarers[stream.target] = declarer
            self.subscribe(declarer, stream)
        for unused in sorted(bolts.keys() - declarers.keys()):
            log.warning(
                "flux file %r: bolt %r is the target of no stream; left out",
                definition.path,
                unused,
            )
        return builder.createTopology()

    def configure(self, declarer: SpoutDeclarer | BoltDeclarer, vertex: VertexDef) -> None:
        if vertex.on_heap_memory is not None:
            declarer.setMemoryLoad(vertex.on_heap_memory, vertex.off_heap_memory or 0.0)
        if vertex.cpu_load is not None:
            declarer.setCPULoad(vertex.cpu_load)
        if vertex.num_tasks is not None:
            declarer.setNumTasks(vertex.num_tasks)
        if vertex.config:
            declarer.addConfigurations(dict(vertex.config))

    def subscribe(self, declarer: BoltDeclarer, stream: StreamDef) -> None:
        grouping = stream.grouping
        if grouping.type == "FIELDS":
            declarer.fieldsGrouping(stream.source, grouping.stream_id, Fields(list(grouping.args)))
        elif grouping.type == "CUSTOM":
            assert grouping.custom_class is not None
            custom = self.build(grouping.custom_class)
            if not isinstance(custom, CustomStreamGrouping):
                _fail(
                    stream.where,
                    f"customClass {grouping.custom_class.class_name} is not a CustomStreamGrouping",
                )
            declarer.customGrouping(stream.source, grouping.stream_id, custom)
        else:
            getattr(declarer, _GROUPING_METHODS[grouping.type])(stream.source, grouping.stream_id)

    def from_source(self) -> StormTopology:
        definition = self.definition
        source_def = definition.topology_source
        assert source_def is not None
        if definition.spouts or definition.bolts or definition.streams:
            _fail(source_def.bean.where, "a topologySource excludes spouts, bolts and streams")
        source = self.build(source_def.bean)
        method = getattr(source, source_def.method_name, None)
        if not callable(method):
            _fail(
                source_def.bean.where,
                f"{source_def.bean.class_name} has no method {source_def.method_name!r}",
            )
        topology = self.call(
            source_def.bean, source_def.method_name, method, [dict(definition.config)]
        )
        if not isinstance(topology, StormTopology):
            _fail(
                source_def.bean.where,
                f"{source_def.method_name}() returned "
                f"{type(topology).__name__}, expected a StormTopology",
            )
        return topology


def _is_window_method(name: str) -> bool:
    """``name`` is one of ``BaseWindowedBolt``'s builder methods (``withWindow``, ...)."""
    return name.startswith("with") and callable(getattr(BaseWindowedBolt, name, None))


def _not_a(bean: BeanDef, kind: str, storm: str, native: str) -> str:
    return (
        f"{bean.class_name} is not a {kind}: expected a Storm {storm} or a heron_core.api.{native}"
    )
